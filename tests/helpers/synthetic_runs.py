"""A synthetic campaign with full telemetry, stored without any server: for the report's tests
and for ``bench/report.py``. Every table has the columns the real samplers write, one row per
second (waits per wait event, IO per backend type, disks per device), so the report does the same
work as on a real campaign of that size."""

from __future__ import annotations

import random

from pglab.pgbench import latency as latency_hist
from pglab.records import (
    LatencySecond,
    PgbenchReport,
    PhaseResult,
    ProgressSample,
    RunResult,
    TableJson,
    Timings,
)
from pglab.store.numbers import metrics_of

T0 = 1_790_000_000.0
WAITS = [("CPU", "running"), ("LWLock", "WALWrite"), ("IO", "WalSync"), ("Lock", "transactionid"),
         ("LWLock", "BufferContent"), ("IO", "DataFileRead"), ("Client", "ClientRead"),
         ("LWLock", "WALInsert"), ("IPC", "ProcArrayGroupUpdate")]  # fmt: skip


def fill(
    store,
    name: str = "synthetic",
    variants: tuple[str, ...] = ("base", "tuned"),
    scripts: tuple[str, ...] = ("tpcb-like", "select-only"),
    clients: tuple[int, ...] = (1, 2, 4, 8, 16),
    repeats: int = 5,
    seconds: int = 60,
    effect: float = 1.10,
    failed: int = 0,
    seed: int = 1,
    facts: dict | None = None,
) -> list[int]:
    """Store a campaign of len(variants) × len(scripts) × len(clients) points × ``repeats``
    runs, interleaved; the second variant is ``effect`` times faster. The last ``failed`` runs
    fail; ``facts``: more of every run's fingerprint. Returns the run ids."""
    rng = random.Random(seed)
    doc = {
        "name": name,
        "description": "synthetic campaign for the report",
        "repeats": repeats,
        "variants": {v: {"settings": {"shared_buffers": f"{128 * (i + 1)}MB"}}
                     for i, v in enumerate(variants)},
        "matrix": {"script": list(scripts), "clients": list(clients)},
    }  # fmt: skip
    store.ensure_campaign(name, doc, None)
    points = [(v, s, c) for v in variants for s in scripts for c in clients]
    ids: list[int] = []
    now = T0
    total = len(points) * repeats
    for rep in range(1, repeats + 1):
        for v, s, c in points:
            base = (2000 if s == "tpcb-like" else 12000) * min(c, 4) ** 0.7
            tps = base * (effect if v != variants[0] else 1.0) * rng.gauss(1, 0.02)
            status = "failed" if len(ids) >= total - failed else "ok"
            run = _run(name, v, s, c, rep, tps, now, seconds, status, rng, facts or {})
            ids.append(store.save_run(run))
            now += seconds + 5
    return ids


def _run(
    camp, variant, script, clients, repeat, tps, t0, seconds, status, rng, facts=None
) -> RunResult:
    axes = [["script", script], ["clients", clients]]
    label = f"{variant} script={script} clients={clients}"
    point_key = f"{variant}-{script}-{clients}"
    spec = {
        "variant": variant, "axes": axes,
        "server": {"source": "embedded", "bindir": None, "settings": [["shared_buffers", "1"]]},
        "dataset": {"scale": 10, "reset": "run"},
        "phases": [{"name": "main", "scripts": [{"builtin": script, "path": None, "weight": 1}],
                    "clients": clients, "duration": seconds, "transactions": None, "times": 1,
                    "measured": True}],
        "derived": [], "campaign": camp, "repeat": repeat, "point_key": point_key,
    }  # fmt: skip
    fingerprint = {
        "server_version": "18.6", "server_version_num": 180006, "pgbench_version": "18.6",
        "source": "embedded", "bindir": "/opt/pg/bin", "cpus": 2, "ram_bytes": 24 * 2**30,
        "cpu_model": "synthetic CPU", "kernel": "Linux 6.1", "hostname": "lab",
        "pgdata_mount": {"fstype": "ext4", "device": "/dev/vda", "mount_options": "rw,noatime",
                         "scheduler": "mq-deadline"},
        "settings": {"shared_buffers": {"setting": "16384", "unit": "8kB", "source":
                     "configuration file", "shown": "128MB"}},
    } | (facts or {})  # fmt: skip
    common = dict(
        campaign=camp, run_key=f"{point_key}/{repeat}", point_key=point_key, repeat=repeat,
        variant=variant, label=label, spec=spec, started_at=t0, fingerprint=fingerprint,
        server_log="LOG:  database system is ready to accept connections\n",
    )  # fmt: skip
    if status != "ok":
        return RunResult(**common, status="failed", finished_at=t0 + 3,
                         error="pgbench: error: connection to server failed: FATAL:  sorry, "
                         "too many clients already")  # fmt: skip
    phase = _phase(t0 + 2, seconds, tps, clients, rng)
    metrics = {"tps": phase.report.tps, "phase.main.tps": phase.report.tps,
               "latency_avg_ms": phase.report.latency_avg_ms or 0.0, "failed": 0.0,
               "tps_steady": phase.report.tps}  # fmt: skip
    return RunResult(**common, status="ok", finished_at=t0 + seconds + 3, phases=(phase,),
                     metrics=metrics_of(metrics), timings=Timings(reset_s=0.5))  # fmt: skip


def _phase(t0: float, seconds: int, tps: float, clients: int, rng) -> PhaseResult:
    per_sec = [tps * rng.gauss(1, 0.03) for _ in range(seconds)]
    lat_ms = clients / tps * 1000
    progress = tuple(ProgressSample(float(i + 1), round(v, 1), round(lat_ms, 3), 0.05, 0)
                     for i, v in enumerate(per_sec))  # fmt: skip
    latency = []
    for i, v in enumerate(per_sec):
        hist = latency_hist.histogram(
            lat_ms * 1000 * rng.lognormvariate(0, 0.4) for _ in range(200)
        )
        scale = max(int(v) // 200, 1)
        hist = tuple((b, n * scale) for b, n in hist)
        pct = {q: latency_hist.percentile(hist, q) for q in (50, 90, 95, 99, 99.9)}
        latency.append(LatencySecond(int(t0) + i, sum(n for _, n in hist), 0, lat_ms,
                                     lat_ms * 8, pct[50], pct[95], pct[99], hist, pct[90],
                                     pct[99.9]))  # fmt: skip
    total = int(sum(per_sec))
    report = PgbenchReport(tps=sum(per_sec) / seconds, transactions=total, failed=0,
                           latency_avg_ms=lat_ms, latency_stddev_ms=lat_ms / 3,
                           initial_connection_ms=2.0, clients=clients)  # fmt: skip
    tables = _tables(t0, per_sec, rng)
    return PhaseResult("main", 1, True, t0, float(seconds), ("pgbench",), report, progress,
                       tuple(latency), "tps = ...", tables)  # fmt: skip


def _tables(t0: float, per_sec: list[float], rng) -> dict[str, TableJson]:
    n = len(per_sec)
    ts = [t0 + i + 1 for i in range(n)]

    def table(columns, rows) -> TableJson:
        return {"columns": columns, "rows": rows}

    waits = []
    for t in ts:
        for typ, ev in rng.sample(WAITS, 5):
            waits.append([float(int(t)), 10, typ, ev, rng.randint(1, 12)])
    io = []
    for t in ts:
        for bt in ("client backend", "checkpointer", "background writer", "autovacuum worker"):
            for ctx in ("normal", "vacuum", "bulkread"):
                io.append([t, bt, "relation", ctx, rng.randint(0, 50), rng.randint(0, 200), 0,
                           rng.randint(1000, 9000), 0, 0, 0, 0, 0.0, 0.0])  # fmt: skip
    checkpoint_every = 20
    pairs = list(zip(ts, per_sec, strict=True))
    return {
        "pg.database": table(
            ["t", "xact_commit", "xact_rollback", "blks_read", "blks_hit"],
            [[t, int(v), 0, rng.randint(0, 500), int(v * 12)] for t, v in pairs],
        ),
        "pg.bgwriter": table(["t", "buffers_clean", "maxwritten_clean", "buffers_alloc"],
                             [[t, rng.randint(0, 80), 0, rng.randint(0, 400)] for t in ts]),
        "pg.checkpointer": table(
            ["t", "num_timed", "num_requested", "write_time", "sync_time", "buffers_written"],
            [[t, 0, 0, 0, 0, rng.randint(0, 900) if i % checkpoint_every < 8 else 0]
             for i, t in enumerate(ts)],
        ),
        "pg.wal": table(["t", "wal_records", "wal_fpi", "wal_bytes", "wal_buffers_full"],
                        [[t, int(v * 3), 50, int(v * 600), 0] for t, v in pairs]),
        "pg.io": table(["t", "backend_type", "object", "context", "reads", "writes", "extends",
                        "hits", "evictions", "fsyncs", "read_bytes", "write_bytes",
                        "read_time", "write_time"], io),
        "waits": table(["t", "samples", "wait_event_type", "wait_event", "count"], waits),
        "checkpoints": table(
            ["t", "t_end", "reason", "buffers", "buffers_pct", "slru_buffers", "wal_added",
             "wal_removed", "wal_recycled", "write_s", "sync_s", "total_s", "distance_kb",
             "estimate_kb"],
            [[t0 + s, t0 + s + 8, "time", 2000, 12.2, 0, 0, 0, 3, 7.5, 0.2, 8.0, 9000, 9000]
             for s in range(5, n, checkpoint_every)],
        ),
        "os.cpu": table(["t", "user_pct", "system_pct", "iowait_pct", "steal_pct", "idle_pct"],
                        [[t, 45 + rng.random() * 10, 20, rng.random() * 5, 0, 25] for t in ts]),
        "os.disk": table(["t", "device", "read_iops", "write_iops", "read_mb_s", "write_mb_s",
                          "await_ms", "util_pct", "queue"],
                         [[t, d, 1.0, 200.0, 0.1, rng.random() * 40, 1.2, 30.0, 0.4]
                          for t in ts for d in ("vda", "vdb")]),
        "os.mem": table(["t", "dirty_mb", "writeback_mb", "cached_mb", "free_mb", "available_mb"],
                        [[t, 100 + rng.random() * 200, 2.0, 4000.0, 18000.0, 20000.0]
                         for t in ts]),
        "os.procs": table(["t", "pgbench_cpu_pct", "postgres_cpu_pct"],
                          [[t, 30 + rng.random() * 10, 120.0] for t in ts]),
        "pg.buffercache": table(["t", "buffers_used", "buffers_unused", "buffers_dirty",
                                 "buffers_pinned", "usagecount_avg"],
                                [[t, 16384.0, 0.0, 900.0, 2.0, 2.5] for t in ts[::5]]),
    }  # fmt: skip


def fill_executions(store_path, name: str) -> None:
    """Eight executions of ``name`` (``NAME@1`` … ``NAME@8``), point base 1.5× faster from the
    fifth on (where it is the campaign's second variant, which fill makes faster): a
    permutation test over whole executions needs 4 a side to find it."""
    from pglab.store import open_store

    with open_store(store_path) as s:
        for n in range(1, 9):
            variants = ("base",) if n <= 4 else ("other", "base")
            fill(s, f"{name}@{n}", variants=variants, scripts=("select-only",), clients=(1,),
                 repeats=3, seconds=5, effect=1.5, seed=n)  # fmt: skip
