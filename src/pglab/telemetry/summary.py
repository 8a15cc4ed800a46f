"""A phase's telemetry in a few figures, from its stored tables (what ``pglab show`` prints)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypedDict

from pglab.records import SERIES_KINDS, TableJson
from pglab.telemetry import checkpoints, os_stats, pg_stats, waits
from pglab.telemetry.base import Table
from pglab.telemetry.runner import NOTES


class PhaseSummary(TypedDict):
    """A phase's telemetry in figures: ``figures`` (name -> number: ratios, MB/s, %, counts as
    their names say), ``top_waits`` (wait, % of samples, sessions), ``notes`` (sampler: note)."""

    figures: dict[str, float]
    top_waits: list[tuple[str, float, float]]
    notes: list[str]


def tables_of(stored: Mapping[str, TableJson]) -> Mapping[str, Table]:
    """The telemetry tables of a stored phase (``get_run(...).series[idx]``), each made when
    first looked up: the warnings of 1,000 runs look at a few of their 13 tables."""
    return _StoredTables({k: v for k, v in stored.items() if k not in SERIES_KINDS})


class _StoredTables(Mapping[str, Table]):
    def __init__(self, stored: dict[str, TableJson]) -> None:
        self._stored = stored
        self._made: dict[str, Table] = {}

    def __getitem__(self, kind: str) -> Table:
        made = self._made.get(kind)
        if made is None:
            made = self._made[kind] = Table.from_json(self._stored[kind])
        return made

    def __contains__(self, kind: object) -> bool:
        return kind in self._stored

    def __iter__(self) -> Iterator[str]:
        return iter(self._stored)

    def __len__(self) -> int:
        return len(self._stored)


def phase_summary(stored: Mapping[str, TableJson], seconds: float) -> PhaseSummary:
    """``figures`` (name -> number), ``top_waits`` [(wait, %, sessions)], ``notes`` [str]."""
    tables = tables_of(stored)
    figures: dict[str, float] = {}
    figures.update(pg_stats.summarize(tables, seconds))
    figures.update(os_stats.summarize(tables))
    figures.update(checkpoints.summarize(tables.get("checkpoints")))
    notes = [f"{s}: {n}" for s, n in tables[NOTES].rows] if NOTES in tables else []
    if "os.notes" in tables:
        notes += [f"{s}: {n}" for s, n in tables["os.notes"].rows]
    return {"figures": figures, "top_waits": waits.top(tables.get("waits")), "notes": notes}


def lines(summary: PhaseSummary, client: str = "pgbench") -> list[str]:
    """The summary as a few lines of text for a terminal; ``client``: the load generator's
    program, named as it is (``PhaseRow.client``: pgbench, sysbench)."""
    f = summary["figures"]
    out = []
    if summary["top_waits"]:
        out.append(
            "top waits: "
            + ", ".join(
                f"{name} {pct:.0f}% ({sessions:.1f} sessions)"
                for name, pct, sessions in summary["top_waits"]
            )
        )
    server = []
    if "read_hit_ratio" in f:
        server.append(f"read hit ratio {100 * f['read_hit_ratio']:.2f}%")
    if "wal_mb_s" in f:
        server.append(f"WAL {f['wal_mb_s']:.1f} MB/s")
    written = [
        (k, f[f"buffers_{k}"])
        for k in ("checkpointer", "bgwriter", "backends")
        if f"buffers_{k}" in f
    ]
    if written:
        server.append("buffers written by " + ", ".join(f"{k} {v:,.0f}" for k, v in written))
    if "checkpoints" in f:
        server.append(f"{f['checkpoints']:.0f} checkpoint(s) completed")
    if server:
        out.append("; ".join(server))
    if "cpu_user_pct" in f:
        cpu = (
            f"CPU user {f['cpu_user_pct']:.0f}% system {f['cpu_system_pct']:.0f}% "
            f"iowait {f['cpu_iowait_pct']:.0f}% steal {f['cpu_steal_pct']:.0f}%"
        )
        if "pgbench_cpu_pct" in f:
            cpu += (
                f"; {client} {f['pgbench_cpu_pct']:.0f}% of a core, postgres "
                f"{f['postgres_cpu_pct']:.0f}%"
            )
        if f.get("client_bound"):
            cpu += f" — CLIENT-BOUND: {client} used most of a core"
        out.append(cpu)
    if "disk_write_mb_s" in f:
        out.append(
            f"disk read {f['disk_read_mb_s']:.1f} MB/s, write {f['disk_write_mb_s']:.1f} "
            f"MB/s, busy {f['disk_util_pct']:.0f}%"
        )
    out += [" ".join(n.split()) for n in summary["notes"]]  # one line each (a HINT: too)
    return out
