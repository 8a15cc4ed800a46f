"""Where telemetry's cost goes: the CPU each sampler takes, in pglab and in the server.

``bench/telemetry_overhead.py`` measures what telemetry costs a run (TPS with it on and off);
this script says which part costs what, in CPU time rather than TPS, so that it holds on a
shared machine. On a scratch server of the point's dataset (with ``--load``, a pgbench of the
point running beside it, so that ``pg_stat_activity`` has its backends to scan), each sampler
of a measured phase is called ``--samples`` times in a row, as its thread calls it; for each:
the CPU time of pglab's thread (``time.thread_time``) and of its server session (the backend's
``/proc`` times), per call and per second of a phase at the sampler's default rate. The last
line is the total in milliseconds of CPU per second of phase: 10 ms is 1% of one core.

    .venv/bin/python bench/telemetry_cost.py [--samples 300] [--load] [--clients 2]
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

import psutil
from _common import open_lab, parser

from pglab.campaign import parse as campaign
from pglab.campaign.spec import TelemetrySpec
from pglab.pgbench.invoke import auto_threads
from pglab.planning.plan import make_plan
from pglab.postgres import dataset
from pglab.postgres.server import Cluster
from pglab.postgres.sources import resolve
from pglab.telemetry.watch import PhaseWatch

TICK_S = 1 / psutil.os.sysconf("SC_CLK_TCK")  # /proc's CPU times count clock ticks


def server_cpu(sampler: Any) -> Callable[[], float]:
    """The CPU seconds so far of the sampler's server session (0 for one without)."""
    conn = getattr(sampler, "_conn", None)
    if conn is None:
        return lambda: 0.0
    proc = psutil.Process(conn.info.backend_pid)

    def seconds() -> float:
        t = proc.cpu_times()
        return float(t.user + t.system)

    return seconds


def measure(sampler: Any, samples: int) -> tuple[float, float, float]:
    """(client ms, server ms) per call, and calls per second of a phase."""
    sampler.start(time.time())
    try:
        on_server = server_cpu(sampler)
        s0, c0 = on_server(), time.thread_time()
        for _ in range(samples):
            sampler.sample(time.time())
        client = (time.thread_time() - c0) / samples
        server = (on_server() - s0) / samples
    finally:
        sampler.finish(time.time())
    return 1000 * client, 1000 * server, 1 / sampler.interval


def main() -> None:
    ap = parser(__doc__, scale=1)
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--load", action="store_true", help="run the point's pgbench meanwhile")
    args = ap.parse_args()
    lab = open_lab(args)
    doc = {
        "name": "bench-telemetry-cost",
        "dataset": {"scale": args.scale},
        "workload": {"script": args.script, "clients": args.clients, "duration": 1},
    }
    point = make_plan(campaign.parse(doc, default_name="bench-telemetry-cost")).points[0]
    binaries = resolve(point.server, lab)
    ds = dataset.ensure(lab, binaries, point.server, point.dataset)
    datadir = lab.clusters / "w-bench-telemetry-cost"
    dataset.reset(lab, ds, datadir)
    with Cluster(binaries, lab, datadir, "w-bench-telemetry-cost") as cluster:
        cluster.start()
        with cluster.connect() as conn:
            row = conn.execute("SHOW server_version_num").fetchone()
            assert row is not None
            version = int(row[0])
        load = None
        if args.load:
            argv = [
                binaries.exe("pgbench"),
                "-c",
                str(args.clients),
                "-j",
                str(auto_threads(args.clients)),
                "-T",
                "3600",
                "-b",
                args.script,
                *cluster.pgbench_conn_args(),
            ]
            load = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(2)
        try:
            watch = PhaseWatch(cluster, TelemetrySpec(), version)
            rows = [(s.name, *measure(s, args.samples)) for s in watch.samplers()]
        finally:
            if load is not None:
                load.terminate()
                load.wait()
        cluster.stop("fast")
    total = 0.0
    print(f"{'sampler':10s} {'client ms':>10s} {'server ms':>10s} {'calls/s':>8s} {'ms/s':>7s}")
    for name, client, server, rate in rows:
        per_s = (client + server) * rate
        total += per_s
        print(f"{name:10s} {client:10.3f} {server:10.3f} {rate:8.1f} {per_s:7.2f}")
    said = f"with {args.clients} clients of {args.script}" if args.load else "on an idle server"
    print(
        f"({args.samples} calls each, {said}; server times counted in {TICK_S * 1000:.0f} ms ticks)"
    )
    print(f"telemetry_cpu_ms_per_s: {total:.2f} ({total / 10:.2f}% of one core)")


if __name__ == "__main__":
    main()
