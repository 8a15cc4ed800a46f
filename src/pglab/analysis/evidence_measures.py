"""A run's figures for the evidence of a comparison (``analysis.evidence``), over its measured
phases, keyed as ``evidence_rules`` names them: the waits in sessions; the OS's CPU split, the
disk, the CPU of the server, the load generator and every other process; WAL, temporary files
and buffers per transaction, checkpoints, the server's CPU per transaction; where the run was
profiled, each function's inclusive share of its process kind's samples, and where its machine
counted them, the server's instructions per cycle and cache misses per transaction (hardware
counters, ``profile.counters``); where it stored TPC-H-like plans, each query's spills and node
counts.

A figure whose data the run lacks is absent, never zero; within what it recorded (waits
sampled, a kind profiled, a query's plan stored) a figure not seen is zero (``scope_of``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from pglab import workloads
from pglab.analysis import profiles
from pglab.analysis.evidence_rules import (
    CPU,
    CPU_SAMPLES,
    NODE,
    PLAN,
    RULES,
    SPILL_RULES,
    THROUGHPUT,
    WAIT,
)
from pglab.profile import counters
from pglab.rows import StoredRun
from pglab.telemetry import checkpoints as checkpoint_log
from pglab.telemetry import pg_stats, waits
from pglab.telemetry.base import Table
from pglab.telemetry.summary import tables_of
from pglab.workloads.interface import PlanReader

# a function's inclusive share (% of its kind's samples) under which a run's profile does not
# name it (zero there: a function under it everywhere moves less than FUNCTION_RULE's floor)
KEPT_SHARE = 0.5


def run_measures(run: StoredRun) -> dict[str, float]:
    """The run's figures over its measured phases (``RULES``' keys and the families of
    ``evidence_rules``), and its throughput (``THROUGHPUT``: transactions per second)."""
    seconds: dict[str, list[float]] = {}  # per-second values of every measured phase
    sums: dict[str, float] = {}  # counts over the phases (waits: per event, and "samples")
    xacts = seconds_run = 0.0
    counted: dict[str, float] = {}  # hardware counters over the phases, where counted
    for ph in run.phases:
        stored = run.series.get(str(ph.idx)) if ph.measured else None
        if stored:
            tables = tables_of(stored)
            xacts += float(ph.transactions or 0)
            seconds_run += ph.elapsed_s
            _waits(tables, sums)
            _os(tables, seconds, sums)
            _counters(tables, sums)
            _hardware(tables, counted)
    out = {k: sum(v) / len(v) for k, v in seconds.items() if v}
    if counted.get("cycles") and "instructions" in counted:
        out["ipc"] = counted["instructions"] / counted["cycles"]
    if "cache-misses" in counted:
        sums["cache_misses"] = counted["cache-misses"]
    samples = sums.pop("samples", 0.0)
    for k, v in sums.items():
        if k.startswith(WAIT):
            out[k] = v / samples
        elif k in RULES:
            out[k] = v
        elif xacts > 0:  # a count that follows the throughput: per transaction
            out[f"{k}_xact"] = v / xacts
    if xacts > 0 and seconds_run > 0:
        out[THROUGHPUT] = xacts / seconds_run
    return out | profile_measures(run) | plan_measures(run)


def wait_statements(run: StoredRun, texts: dict[int, str]) -> dict[str, Counter[int]]:
    """Each wait's count by statement class (query id) over the run's measured phases, where
    the server computed query ids (``telemetry.waits.STATEMENTS``; {} without); ``texts`` gets
    a statement of each query id not in it yet."""
    out: dict[str, Counter[int]] = {}
    for ph in run.phases:
        table = run.series.get(str(ph.idx), {}).get(waits.STATEMENTS) if ph.measured else None
        for wtype, event, query_id, n, text in table["rows"] if table else []:
            out.setdefault(f"{WAIT}{wtype}:{event}", Counter())[query_id] += n
            texts.setdefault(query_id, text)
    return out


def _waits(tables: Mapping[str, Table], sums: dict[str, float]) -> None:
    w = tables.get("waits")
    if w is None or not w.rows:
        return
    col = {c: i for i, c in enumerate(w.columns)}
    _add(sums, "samples", sum({r[col["t"]]: r[col["samples"]] for r in w.rows}.values()))
    for r in w.rows:
        _add(sums, f"{WAIT}{r[col['wait_event_type']]}:{r[col['wait_event']]}", r[col["count"]])


_OS_COLUMNS = (
    ("os.cpu", "cpu_", ("user_pct", "system_pct", "iowait_pct", "steal_pct")),
    ("os.procs", "", ("pgbench_cpu_pct", "postgres_cpu_pct", "others_cpu_pct")),
)


def _os(
    tables: Mapping[str, Table], seconds: dict[str, list[float]], sums: dict[str, float]
) -> None:
    for kind, prefix, columns in _OS_COLUMNS:
        t = tables.get(kind)
        if t is None:
            continue
        for c in columns:
            if c in t.columns:
                i = t.columns.index(c)
                seconds.setdefault(prefix + c, []).extend(r[i] for r in t.rows if r[i] is not None)
    _server_cpu(tables.get("os.procs"), sums)
    disk = tables.get("os.disk")
    if disk is None or not disk.rows:
        return
    col = {c: i for i, c in enumerate(disk.columns)}
    for c in ("read_mb_s", "write_mb_s"):  # the devices' MB/s added up each second
        per_t: dict[float, float] = {}
        for r in disk.rows:
            per_t[r[0]] = per_t.get(r[0], 0.0) + r[col[c]]
        seconds.setdefault(f"disk_{c}", []).extend(per_t.values())
    awaits = [r[col["await_ms"]] for r in disk.rows if r[col["await_ms"]] is not None]
    seconds.setdefault("disk_await_ms", []).extend(awaits)


def _server_cpu(procs: Table | None, sums: dict[str, float]) -> None:
    """The server's CPU time over the phase in µs (per transaction once added up): each
    sample's % of a core over the time since the one before (the first: as long as the
    others' median, or a second)."""
    if procs is None or len(procs.rows) < 1 or "postgres_cpu_pct" not in procs.columns:
        return
    i, t = procs.columns.index("postgres_cpu_pct"), procs.columns.index("t")
    times = [float(r[t]) for r in procs.rows]
    gaps = sorted(b - a for a, b in zip(times, times[1:], strict=False))
    first = gaps[len(gaps) // 2] if gaps else 1.0
    used = sum((r[i] or 0.0) * gap for r, gap in zip(procs.rows, [first, *gaps], strict=True))
    _add(sums, "postgres_cpu_us", used / 100 * 1e6)


def _counters(tables: Mapping[str, Table], sums: dict[str, float]) -> None:
    """WAL (kB, full-page images), temporary files (kB) and buffers (read, hit): per
    transaction once added up; checkpoints: as they are."""
    wal = pg_stats.phase_delta(tables, "pg.wal")
    if wal:
        _add(sums, "wal_kb", float(wal["wal_bytes"]) / 1024)
        _add(sums, "wal_fpi", float(wal["wal_fpi"]))
    db = pg_stats.phase_delta(tables, "pg.database")
    if db:
        _add(sums, "blks_read", float(db["blks_read"]))
        _add(sums, "blks_hit", float(db["blks_hit"]))
        if "temp_bytes" in db:
            _add(sums, "temp_kb", float(db["temp_bytes"]) / 1024)
    ckpt = pg_stats.phase_delta(tables, "pg.checkpointer")
    if ckpt:
        _add(sums, "checkpoints_requested", float(ckpt["num_requested"]))
    for k, v in checkpoint_log.summarize(tables.get("checkpoints")).items():
        if k in RULES:
            _add(sums, k, v)


def _hardware(tables: Mapping[str, Table], counted: dict[str, float]) -> None:
    """The phase's hardware counters (``profile.counters``), added to ``counted`` by event."""
    t = tables.get(counters.TABLE)
    if t is None:
        return
    col = {c: i for i, c in enumerate(t.columns)}
    for r in t.rows:
        if r[col["count"]] is not None:
            _add(counted, r[col["event"]], float(r[col["count"]]))


def _add(sums: dict[str, float], key: str, value: float) -> None:
    sums[key] = sums.get(key, 0.0) + value


def profile_measures(run: StoredRun) -> dict[str, float]:
    """Where the run was profiled: each process kind's samples (``cpu_samples:KIND``) and
    each function's inclusive share of them in % (``cpu:KIND:FUNCTION``; one under
    ``KEPT_SHARE`` left out: zero), the measured phases together."""
    out: dict[str, float] = {}
    for kind, stacks in profiles.run_stacks(run).items():
        total = sum(stacks.values())
        if not total:
            continue
        out[f"{CPU_SAMPLES}{kind}"] = float(total)
        for function, (_, incl) in profiles.shares(stacks).items():
            if incl >= KEPT_SHARE:
                out[f"{CPU}{kind}:{function}"] = incl
    return out


def plan_measures(run: StoredRun) -> dict[str, float]:
    """Where the run stored query plans (a kind's ``PlanReader``: the TPC-H-like kit's, its
    first phase that has them): each query's spills in their rule's unit (``plan:qNN:sort``,
    ...) and its nodes by type (``plan:qNN:node:TYPE``)."""
    for reader in workloads.plan_readers():
        for ph in run.phases:
            table = run.series.get(str(ph.idx), {}).get(reader.table)
            if table and table.get("rows"):
                return _plan_items(reader, table["rows"])
    return {}


def _plan_items(reader: PlanReader, rows: list[list[Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for number, plan in rows:
        query = f"{PLAN}q{int(number):02d}:"
        tree = reader.parse(plan)
        for kind, amount in reader.spills(tree).items():
            out[query + kind] = amount * SPILL_RULES[kind][1]
        for node, n in Counter(reader.node_types(tree)).items():
            out[f"{query}{NODE}{node}"] = float(n)
    return out
