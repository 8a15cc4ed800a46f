"""What a phase's load generator hosts say about the run (its ``generators`` table): a clock
known too loosely, or that moved during the phase, to put the hosts' seconds in step with the
server's; a host whose pgbench used the CPUs it could use (client-bound: the load generator,
not the server, was measured). Runs stored before a column existed simply lack that warning
(a ``Host`` read from the table has None where its column is missing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pglab.analysis.notice_kinds import NoticeKind
from pglab.pgbench.generators import OFFSET_UNCERTAINTY_WARN_S
from pglab.pgbench.generators import TABLE as GENERATORS
from pglab.rows import PhaseRow, Series
from pglab.telemetry.base import Table


@dataclass(frozen=True, slots=True)
class Host:
    """A row of the ``generators`` table: what one host said of a phase."""

    host: str
    clock_uncertainty_ms: float | None  # half the shortest round trip
    clock_drift_ms: float | None  # how far its clock moved against pglab's over the phase
    client_bound: bool  # its pgbench used most of the CPUs it could use
    pgbench_cpu_pct: float | None  # % of a core
    cpus_available: float | None
    cpu_throttled_pct: float | None  # periods its CPU quota held it back, %


def warnings(phases: Sequence[PhaseRow], series: Series) -> list[tuple[NoticeKind, str]]:
    """(kind, message) of each warning about the phases' generator hosts, a host once each."""
    loose: dict[str, float] = {}
    drift: dict[str, float] = {}
    bound: dict[str, tuple[float, float, float | None]] = {}
    limit = OFFSET_UNCERTAINTY_WARN_S * 1000
    for ph in phases:
        tab = series.get(str(ph.idx), {}).get(GENERATORS)
        for row in hosts(Table.from_json(tab)) if tab else ():
            host, ms = row.host, row.clock_uncertainty_ms
            if ms is not None and ms > limit:
                loose[host] = max(ms, loose.get(host, 0.0))
            moved = row.clock_drift_ms
            if moved is not None and abs(moved) > limit + (ms or 0.0):
                drift[host] = max(abs(moved), drift.get(host, 0.0))
            pct, cpus = row.pgbench_cpu_pct, row.cpus_available
            if row.client_bound and host not in bound and pct is not None and cpus is not None:
                bound[host] = (pct, cpus, row.cpu_throttled_pct)
    out: list[tuple[NoticeKind, str]] = [
        (
            "clock",
            f"the clock of generator {host} is known to ±{ms:.0f} ms only (half the "
            "shortest round trip): its per-second figures may sit a second off the server's",
        )
        for host, ms in sorted(loose.items())
    ]
    out += [
        (
            "clock",
            f"the clock of generator {host} moved by up to {ms:.0f} ms against pglab's "
            "during a phase (measured before and after it): its later seconds may sit off "
            "the server's",
        )
        for host, ms in sorted(drift.items())
    ]
    out += [
        (
            "client-bound",
            f"pgbench on generator {host} used {pct:.0f}% of a core, most of the "
            f"{cpus:g} CPU(s) it could use there"
            + (f" (its CPU quota held it back in {held:.0f}% of periods)" if held else "")
            + ": the load generator, not the server, may be the limit; give it "
            "more CPUs or another host",
        )
        for host, (pct, cpus, held) in sorted(bound.items())
    ]
    return out


def hosts(tab: Table) -> list[Host]:
    """The rows of a phase's ``generators`` table."""
    out = []
    for row in tab.rows:
        got = dict(zip(tab.columns, row, strict=True))
        out.append(
            Host(
                got["host"],
                got.get("clock_uncertainty_ms"),
                got.get("clock_drift_ms"),
                bool(got.get("client_bound")),
                got.get("pgbench_cpu_pct"),
                got.get("cpus_available"),
                got.get("cpu_throttled_pct"),
            )
        )
    return out
