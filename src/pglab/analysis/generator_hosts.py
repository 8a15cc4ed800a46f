"""What a phase's load generator hosts say about the run (its ``generators`` table): a clock
known too loosely, or that moved during the phase, to put the hosts' seconds in step with the
server's; a host whose pgbench used the CPUs it could use (client-bound: the load generator,
not the server, was measured). Runs stored before a column existed simply lack that warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pglab.pgbench.generators import OFFSET_UNCERTAINTY_WARN_S
from pglab.pgbench.generators import TABLE as GENERATORS
from pglab.records import TableJson
from pglab.rows import PhaseRow, Series


def warnings(phases: Sequence[PhaseRow], series: Series) -> list[tuple[str, str]]:
    """(kind, message) of each warning about the phases' generator hosts, a host once each."""
    loose: dict[str, float] = {}
    drift: dict[str, float] = {}
    bound: dict[str, tuple[float, float, float | None]] = {}
    limit = OFFSET_UNCERTAINTY_WARN_S * 1000
    for ph in phases:
        tab = series.get(str(ph.idx), {}).get(GENERATORS)
        for row in _rows(tab):
            host, ms = row["host"], row.get("clock_uncertainty_ms")
            if ms is not None and ms > limit:
                loose[host] = max(ms, loose.get(host, 0.0))
            moved = row.get("clock_drift_ms")
            if moved is not None and abs(moved) > limit + (ms or 0.0):
                drift[host] = max(abs(moved), drift.get(host, 0.0))
            if row.get("client_bound") and host not in bound:
                bound[host] = (row["pgbench_cpu_pct"], row["cpus_available"],
                               row.get("cpu_throttled_pct"))  # fmt: skip
    out = [
        ("clock", f"the clock of generator {host} is known to ±{ms:.0f} ms only (half the "
                  "shortest round trip): its per-second figures may sit a second off the server's")
        for host, ms in sorted(loose.items())
    ]  # fmt: skip
    out += [
        ("clock", f"the clock of generator {host} moved by up to {ms:.0f} ms against pglab's "
                  "during a phase (measured before and after it): its later seconds may sit off "
                  "the server's")
        for host, ms in sorted(drift.items())
    ]  # fmt: skip
    out += [
        ("client-bound", f"pgbench on generator {host} used {pct:.0f}% of a core, most of the "
                         f"{cpus:g} CPU(s) it could use there"
                         + (f" (its CPU quota held it back in {held:.0f}% of periods)"
                            if held else "")
                         + ": the load generator, not the server, may be the limit; give it "
                         "more CPUs or another host")
        for host, (pct, cpus, held) in sorted(bound.items())
    ]  # fmt: skip
    return out


def _rows(tab: TableJson | None) -> list[dict[str, Any]]:
    if not tab:
        return []
    return [dict(zip(tab["columns"], row, strict=True)) for row in tab["rows"]]
