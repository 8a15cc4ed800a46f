"""The pure parts of a maintenance operation: the statements it runs, its figures (MB/s over
what it processed), its progress rows from the progress views, the workers VACUUM VERBOSE
says it launched. No connection here: ``operations`` runs them.

MB are 10^6 bytes. The bytes an operation processed are those of ``pgbench_accounts``'s heap
(all its partitions): what VACUUM and ANALYZE read (ANALYZE samples it: its MB/s is of the
table, not of what it read), and the table CREATE INDEX scans.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from typing import Any

from pglab.campaign.spec import PhaseSpec

TABLE = "pgbench_accounts"
INDEX = "pglab_operation_idx"  # the index create_index builds, dropped after (not measured)
OPERATION_KIND = "operation"  # the phase's table of its figures, one row
# a parallel index build needs 32 MB of maintenance_work_mem per participant, or PostgreSQL
# plans fewer workers than asked (plan_create_index_workers)
PARTICIPANT_KB = 32 * 1024
DIRTY_SEED = 1664525  # the rows a vacuum's dirtying updates: the same ones every time
DIRTY_BUCKETS = 1 << 20

# per operation: the progress view, its phase column and (done, total) columns; the same from
# 15 to 18 (17 renamed others of pg_stat_progress_vacuum's columns, not these)
PROGRESS_SQL = {
    "vacuum": "SELECT phase, heap_blks_scanned, heap_blks_total "
    "FROM pg_stat_progress_vacuum WHERE pid = %s",
    "analyze": "SELECT phase, sample_blks_scanned, sample_blks_total "
    "FROM pg_stat_progress_analyze WHERE pid = %s",
    "create_index": "SELECT phase, CASE WHEN blocks_total > 0 THEN blocks_done ELSE tuples_done "
    "END, CASE WHEN blocks_total > 0 THEN blocks_total ELSE tuples_total END "
    "FROM pg_stat_progress_create_index WHERE pid = %s",
}
PROGRESS_COLUMNS = ["t", "phase", "done", "total", "pct"]
WORKERS_SQL = "SELECT count(*) FROM pg_stat_activity WHERE leader_pid = %s"
# a partitioned table's leaves (pg_partition_tree has no rows for a plain table: its own size)
SIZE_SQL = (
    f"SELECT coalesce((SELECT sum(pg_relation_size(relid)) FROM pg_partition_tree('{TABLE}')), "
    f"pg_relation_size('{TABLE}'))"
)

_LAUNCHED = re.compile(r"launched (\d+) parallel vacuum workers? for index \w+ \(planned: (\d+)")


@dataclass(frozen=True, slots=True)
class OperationFigures:
    """What one operation did: its time, the bytes it processed and their rate, the parallel
    workers it asked for, was planned (where the server says) and launched (the most seen at
    once beside it, or VACUUM VERBOSE's count), and the maintenance_work_mem it ran with."""

    operation: str
    elapsed_s: float
    bytes: int
    mb_s: float
    parallel: int
    workers_planned: int | None
    workers_launched: int | None
    maintenance_work_mem_kb: int | None

    def to_table(self) -> dict[str, Any]:
        d = asdict(self)
        return {"columns": list(d), "rows": [list(d.values())]}

    @classmethod
    def from_table(cls, data: dict[str, Any]) -> OperationFigures:
        known = {f.name for f in fields(cls)}
        row = dict(zip(data["columns"], data["rows"][0], strict=True))
        return cls(**{k: v for k, v in row.items() if k in known})


def mb_per_s(nbytes: int, elapsed_s: float) -> float:
    """MB (10^6 bytes) per second; 0 for no time (nothing measurable)."""
    return nbytes / 1e6 / elapsed_s if elapsed_s > 0 else 0.0


def figures(
    phase: PhaseSpec,
    elapsed_s: float,
    nbytes: int,
    planned: int | None,
    launched: int | None,
    mwm_kb: int | None,
) -> OperationFigures:
    assert phase.operation is not None
    return OperationFigures(
        operation=phase.operation,
        elapsed_s=elapsed_s,
        bytes=nbytes,
        mb_s=mb_per_s(nbytes, elapsed_s),
        parallel=phase.parallel,
        workers_planned=planned,
        workers_launched=launched,
        maintenance_work_mem_kb=mwm_kb,
    )


def progress_row(t: float, row: tuple[Any, ...]) -> list[Any]:
    """A row of the progress table from a progress view's (phase, done, total) at epoch ``t``:
    ``pct`` is None while the total is not known (0)."""
    phase, done, total = row
    done, total = int(done or 0), int(total or 0)
    pct = round(100.0 * done / total, 1) if total > 0 else None
    return [t, str(phase), done, total, pct]


def progress_text(operation: str, row: list[Any]) -> str:
    """A progress row in words, for the live progress line: "vacuum: scanning heap 43%"."""
    _, phase, done, total, pct = row
    if pct is not None:
        return f"{operation}: {phase} {pct:.0f}%"
    return f"{operation}: {phase}" + (f" {done:,}" if done else "")


def statement(phase: PhaseSpec) -> str:
    """The measured statement of an operation phase."""
    if phase.operation == "vacuum":
        opts = ["VERBOSE", f"PARALLEL {phase.parallel}"] + ["FREEZE"] * phase.freeze
        return f"VACUUM ({', '.join(opts)}) {TABLE}"
    if phase.operation == "analyze":
        return f"ANALYZE {TABLE}"
    if phase.operation == "create_index":
        return f"CREATE INDEX {INDEX} ON {TABLE} USING {phase.method} ({', '.join(phase.columns)})"
    raise ValueError(f"not an operation: {phase.operation!r}")


def dirty_statement(fraction: float) -> str:
    """The UPDATE that dirties ``fraction`` of the accounts: the same rows every time (by a
    hash of aid with a fixed seed), so every repeat vacuums the same dead tuples."""
    below = round(fraction * DIRTY_BUCKETS)
    return (
        f"UPDATE {TABLE} SET abalance = abalance + 1 "
        f"WHERE (hashint4(aid # {DIRTY_SEED}) & {DIRTY_BUCKETS - 1}) < {below}"
    )


def session_settings(phase: PhaseSpec, mwm_kb: int) -> dict[str, str]:
    """What the operation's session sets: the workers it asks for and, for a parallel index
    build, maintenance_work_mem raised to what that many participants need (never lowered)."""
    if phase.operation not in ("vacuum", "create_index"):
        return {}
    out = {"max_parallel_maintenance_workers": str(phase.parallel)}
    need = PARTICIPANT_KB * (phase.parallel + 1)
    if phase.operation == "create_index" and phase.parallel > 0 and mwm_kb < need:
        out["maintenance_work_mem"] = f"{need}kB"
    return out


def vacuum_workers(notices: list[str]) -> tuple[int | None, int | None]:
    """(planned, launched) parallel vacuum workers from VACUUM VERBOSE's messages (its first
    index pass: each launches its own); (0, 0) when none was said, as when none is planned."""
    for msg in notices:
        found = _LAUNCHED.search(msg)
        if found:
            return int(found.group(2)), int(found.group(1))
    return 0, 0
