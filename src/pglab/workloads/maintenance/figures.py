"""The pure parts of a maintenance operation: the statements it runs, its figures (MB/s over
what it processed, tuples/s, WAL bytes), its progress rows from the progress views with their
rate and ETA, the workers VACUUM VERBOSE says it launched. No connection here: ``operations``
runs them.

MB are 10^6 bytes. The bytes a statement processed are those of ``pgbench_accounts``'s heap
(all its partitions): what VACUUM and ANALYZE read (ANALYZE samples it: its MB/s is of the
table, not of what it read), the table CREATE INDEX, CLUSTER, VACUUM FULL and REINDEX scan.
The client programs' (``clients``) are of the database or the cluster they copy.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields
from typing import Any

from pglab.campaign.spec import PhaseSpec
from pglab.postgres.versioned_sql import sql_for
from pglab.records import TableJson
from pglab.workloads.maintenance.work import operation_work

TABLE = "pgbench_accounts"
PRIMARY_KEY = "pgbench_accounts_pkey"  # what cluster orders by and reindex rebuilds
INDEX = "pglab_operation_idx"  # the index create_index builds, dropped after (not measured)
OPERATION_KIND = "operation"  # the phase's table of its figures, one row
# a parallel index build needs 32 MB of maintenance_work_mem per participant, or PostgreSQL
# plans fewer workers than asked (plan_create_index_workers)
PARTICIPANT_KB = 32 * 1024
DIRTY_SEED = 1664525  # the rows a vacuum's dirtying updates: the same ones every time
DIRTY_BUCKETS = 1 << 20

# per operation run by a statement: its progress view's phase, (done, total) and their unit,
# the same from 15 to 18 (17 renamed others of pg_stat_progress_vacuum's columns, not these).
# %(pid)s is the operation's backend, %(tuples)s the table's live tuples (pg_class's estimate:
# CLUSTER's index scan and its writing count tuples, with no total of their own)
_CREATE_INDEX_PROGRESS = (
    "SELECT phase, CASE WHEN blocks_total > 0 THEN blocks_done ELSE tuples_done END, "
    "CASE WHEN blocks_total > 0 THEN blocks_total ELSE tuples_total END, "
    "CASE WHEN blocks_total > 0 THEN 'blocks' ELSE 'tuples' END "
    "FROM pg_stat_progress_create_index WHERE pid = %(pid)s"
)
_CLUSTER_PROGRESS = (
    "SELECT phase, CASE phase WHEN 'seq scanning heap' THEN heap_blks_scanned "
    "WHEN 'writing new heap' THEN heap_tuples_written ELSE heap_tuples_scanned END, "
    "CASE phase WHEN 'seq scanning heap' THEN heap_blks_total ELSE %(tuples)s END, "
    "CASE phase WHEN 'seq scanning heap' THEN 'blocks' ELSE 'tuples' END "
    "FROM pg_stat_progress_cluster WHERE pid = %(pid)s"
)
PROGRESS_SQL = {
    "vacuum": "SELECT phase, CASE phase WHEN 'vacuuming heap' THEN heap_blks_vacuumed "
    "ELSE heap_blks_scanned END, heap_blks_total, 'blocks' "
    "FROM pg_stat_progress_vacuum WHERE pid = %(pid)s",
    "analyze": "SELECT phase, sample_blks_scanned, sample_blks_total, 'blocks' "
    "FROM pg_stat_progress_analyze WHERE pid = %(pid)s",
    "create_index": _CREATE_INDEX_PROGRESS,
    "reindex": _CREATE_INDEX_PROGRESS,
    "vacuum_full": _CLUSTER_PROGRESS,
    "cluster": _CLUSTER_PROGRESS,
}
# t: epoch; done and total in unit (blocks, tuples or bytes); rate: unit per second over the
# progress phase so far; eta_s: what is left of the phase (None: not known yet), eta_by: how it
# was told ("rate": at that rate; "history": from an earlier run of the same point), and with
# history what is left of the whole operation, its later progress phases too (eta_all_s)
PROGRESS_COLUMNS = [
    "t",
    "phase",
    "done",
    "total",
    "pct",
    "unit",
    "rate",
    "eta_s",
    "eta_by",
    "eta_all_s",
]
WORKERS_SQL = "SELECT pid FROM pg_stat_activity WHERE leader_pid = %(pid)s"
# a partitioned table's leaves (pg_partition_tree has no rows for a plain table: its own size)
SIZE_SQL = (
    f"SELECT coalesce((SELECT sum(pg_relation_size(relid)) FROM pg_partition_tree('{TABLE}')), "
    f"pg_relation_size('{TABLE}'))"
)
TUPLES_SQL = (
    "SELECT coalesce(sum(greatest(reltuples, 0)), 0)::bigint FROM pg_class WHERE relkind = 'r' "
    f"AND (oid = '{TABLE}'::regclass OR oid IN (SELECT relid FROM pg_partition_tree('{TABLE}')))"
)
WAL_LSN_SQL = "SELECT pg_current_wal_lsn()"
WAL_BYTES_SQL = "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)::bigint"
# the operations whose work is counted in tuples of pgbench_accounts (ANALYZE samples it; the
# client programs move a whole database)
TUPLE_OPERATIONS = ("vacuum", "create_index", "vacuum_full", "cluster", "reindex")

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
    # WAL the server wrote meanwhile (LSN difference), the table's live tuples and their rate
    # (None where it does not apply, and in runs stored before these were)
    wal_bytes: int | None = None
    tuples: int | None = None
    tuples_s: float | None = None
    # CPU seconds (user + system) of the operation's backend and of its parallel workers
    # together, on a server pglab runs here (seed 004's single-core bottleneck: a leader near
    # 100% of a core while the workers idle); None elsewhere
    leader_cpu_s: float | None = None
    workers_cpu_s: float | None = None
    # bytes of relations read meanwhile by client backends and parallel workers (pg_stat_io's
    # reads: what shared_buffers did not hold), for a statement's operation on 16+; else None
    io_read_bytes: int | None = None

    def to_table(self) -> TableJson:
        d = asdict(self)
        return {"columns": list(d), "rows": [list(d.values())]}

    @classmethod
    def from_table(cls, data: TableJson) -> OperationFigures:
        known = {f.name for f in fields(cls)}
        row = dict(zip(data["columns"], data["rows"][0], strict=True))
        return cls(**{k: v for k, v in row.items() if k in known})


def io_read_sql(server_version_num: int) -> str | None:
    """The statement summing what client backends and parallel workers read (None before 16:
    no pg_stat_io)."""
    return sql_for("pglab.workloads.maintenance", "io_read", server_version_num)


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
    wal_bytes: int | None = None,
    tuples: int | None = None,
    cpu: tuple[float | None, float | None] = (None, None),
    io_read_bytes: int | None = None,
) -> OperationFigures:
    rate = tuples / elapsed_s if tuples is not None and elapsed_s > 0 else None
    return OperationFigures(
        operation=operation_work(phase).operation,
        elapsed_s=elapsed_s,
        bytes=nbytes,
        mb_s=mb_per_s(nbytes, elapsed_s),
        parallel=operation_work(phase).parallel,
        workers_planned=planned,
        workers_launched=launched,
        maintenance_work_mem_kb=mwm_kb,
        wal_bytes=wal_bytes,
        tuples=tuples,
        tuples_s=rate,
        leader_cpu_s=cpu[0],
        workers_cpu_s=cpu[1],
        io_read_bytes=io_read_bytes,
    )


@dataclass(frozen=True, slots=True)
class Prior:
    """The progress of the same operation measured before (an earlier run of the same point:
    same operation, options, version and dataset): its rows and the epoch it ended."""

    rows: list[list[Any]]
    ended: float


def progress_row(
    t: float, row: tuple[Any, ...], before: list[list[Any]], prior: Prior | None = None
) -> list[Any]:
    """A row of the progress table from a progress view's (phase, done, total, unit) at epoch
    ``t``, after the rows ``before``: ``pct`` is None while the total is not known (0); the
    rate is over the progress phase so far (from its first row), the ETA what is left of it:
    from ``prior`` when it reached this phase and share (its time left there, scaled by this
    run's time from the phase's first row to here against the earlier run's between the same
    shares: "history"), else at that rate ("rate"). Both None until the phase has two rows and
    moved."""
    phase, done, total, unit = row
    done, total = int(done or 0), int(total or 0)
    pct = round(100.0 * done / total, 1) if total > 0 else None
    rate = eta = by = whole = None
    first = _stretch_start(before, len(before), str(phase), str(unit))
    if first is not None and done > first[2] and t > first[0]:
        rate = (done - first[2]) / (t - first[0])
        if total > 0:
            eta, by = round(max(total - done, 0) / rate, 1), "rate"
            left = _left_before(prior, str(phase), _share(first), done / total) if prior else None
            if left is not None:
                pace = (t - first[0]) / left[0]  # this run's time for it against the other's
                eta, by = round(left[1] * pace, 1), "history"
                whole = round(left[2] * pace, 1)
    return [t, str(phase), done, total, pct, str(unit), rate, eta, by, whole]


def _stretch_start(rows: list[list[Any]], end: int, phase: str, unit: str) -> list[Any] | None:
    """The first row of the stretch of ``phase`` rows ending just before index ``end``."""
    first = None
    for r in reversed(rows[:end]):
        if r[1] != phase or r[5] != unit:
            break
        first = r
    return first


def _share(row: list[Any]) -> float:
    return row[2] / row[3] if row[3] else 0.0


def stretch_last(rows: list[list[Any]], at: int, phase: str) -> int:
    """The index of the last row of the stretch of ``phase`` rows that holds index ``at``."""
    last = at
    while last + 1 < len(rows) and rows[last + 1][1] == phase:
        last += 1
    return last


def _left_before(
    prior: Prior, phase: str, since: float, share: float
) -> tuple[float, float, float] | None:
    """(seconds the earlier run took from share ``since`` of ``phase`` to ``share``, seconds it
    had left of the phase from there, and of the operation) in the stretch of its rows where it
    first reached ``share``; None when it never did (or has no such phase). A share's time is
    interpolated between the rows either side (a row is read about once a second: the first
    row past a share may be far past it); a share before the stretch's first row is at that
    row. The phase ended after its last row when what was left there would have taken at its
    last rate (at most at the next row), or with the operation."""
    rows = prior.rows
    at = next(
        (i for i, r in enumerate(rows) if r[1] == phase and r[3] and _share(r) >= share), None
    )
    if at is None:
        return None
    start = rows.index(_stretch_start(rows, at + 1, phase, rows[at][5]))  # type: ignore[arg-type]
    stretch = rows[start : at + 1]
    last = stretch_last(rows, at, phase)
    end = _end_of(rows[start : last + 1], rows[last + 1][0] if last + 1 < len(rows) else None)
    now, then = _time_at(stretch, share), _time_at(stretch, since)
    end = min(end if end is not None else prior.ended, prior.ended)
    if now <= then:
        return None
    return now - then, end - now, prior.ended - now


def _end_of(stretch: list[list[Any]], after: float | None) -> float | None:
    """When a stretch of a phase's rows ended, before the next row (at ``after``; None: with
    the operation): its units left after its last row at the rate between its last two, within
    that row and the next (their midpoint when the rate is not known)."""
    last = stretch[-1]
    if after is None:
        return None
    if len(stretch) > 1 and last[3] and last[2] > stretch[-2][2] and last[0] > stretch[-2][0]:
        rate = (last[2] - stretch[-2][2]) / (last[0] - stretch[-2][0])
        return float(min(last[0] + max(last[3] - last[2], 0) / rate, after))
    return float((last[0] + after) / 2)


def _time_at(stretch: list[list[Any]], share: float) -> float:
    """When ``stretch`` (rows of one phase, the last at or past ``share``) reached ``share``."""
    before = stretch[0]
    for r in stretch:
        if _share(r) >= share:
            if _share(r) <= _share(before):
                return float(r[0])
            return float(
                before[0]
                + (r[0] - before[0]) * (share - _share(before)) / (_share(r) - _share(before))
            )
        before = r
    return float(stretch[-1][0])


def rate_text(rate: float, unit: str, block_size: int = 8192) -> str:
    """A progress rate in words: MB/s of blocks or bytes, else tuples/s (a tenth below 10)."""
    value, shown = rate, f"{unit}/s"
    if unit in ("blocks", "bytes"):
        value, shown = rate * (block_size if unit == "blocks" else 1) / 1e6, "MB/s"
    return f"{value:,.{1 if value < 10 else 0}f} {shown}"


def clock(seconds: float) -> str:
    """Seconds as h:mm:ss, or m:ss under an hour."""
    s = round(seconds)
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def progress_text(operation: str, row: list[Any], block_size: int = 8192) -> str:
    """A progress row in words, for the live progress line:
    "vacuum: scanning heap 43%, 212 MB/s, ETA 0:12"; with an earlier run of the point to go
    by, also the whole operation's: "..., ETA 0:12 (all 0:40)"."""
    _, phase, done, total, pct, unit, rate, eta = row[:8]
    if pct is not None:
        text = f"{operation}: {phase} {pct:.0f}%"
    else:
        shown = f"{done / 1e6:,.0f} MB" if unit == "bytes" else f"{done:,}"
        text = f"{operation}: {phase}" + (f" {shown}" if done else "")
    if rate is not None:
        text += f", {rate_text(rate, unit, block_size)}"
    if eta is not None:
        text += f", ETA {clock(eta)}"
    whole = row[9] if len(row) > 9 else None
    if whole is not None and eta is not None and whole > eta + 0.5:  # later phases to come
        text += f" (all {clock(whole)})"
    return text


def statement(phase: PhaseSpec) -> str:
    """The measured statement of an operation phase."""
    op = operation_work(phase)
    if op.operation == "vacuum":
        opts = ["VERBOSE", f"PARALLEL {op.parallel}"] + ["FREEZE"] * op.freeze
        return f"VACUUM ({', '.join(opts)}) {TABLE}"
    if op.operation == "analyze":
        return f"ANALYZE {TABLE}"
    if op.operation == "create_index":
        return f"CREATE INDEX {INDEX} ON {TABLE} USING {op.method} ({', '.join(op.columns)})"
    if op.operation == "vacuum_full":
        return f"VACUUM (FULL, VERBOSE) {TABLE}"
    if op.operation == "cluster":
        return f"CLUSTER {TABLE} USING {PRIMARY_KEY}"
    if op.operation == "reindex":
        return f"REINDEX INDEX {PRIMARY_KEY}"
    raise ValueError(f"not an operation: {op.operation!r}")


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
    op = operation_work(phase)
    if op.operation not in ("vacuum", "create_index", "reindex"):
        return {}
    out = {"max_parallel_maintenance_workers": str(op.parallel)}
    need = PARTICIPANT_KB * (op.parallel + 1)
    if op.operation != "vacuum" and op.parallel > 0 and mwm_kb < need:
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
