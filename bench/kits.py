"""Workload kits and sysbench: pglab's cost when it drives sysbench or the TPC-C-like kit,
against the same tool run bare, alternating on one started server.

Fresh servers vary by ±8% between themselves on two cores (``bench/watcher_overhead.py``), so
each kit's server is started once and kept (``reset = "never"``: the executor keeps a server
whose data its next run uses) and warmed by an unmeasured run; then ``--pairs`` pairs, each a
run driven by pglab (the executor: telemetry, pgbench's or sysbench's output read, the kit's
counters and consistency check after the phase) and the same tool bare against the same
server, back to back in alternating order. The ratio of each pair is pglab's TPS over the bare
run's; the last lines are each kit's median ratio with a 95% bootstrap interval:

1. sysbench (``--test``, ``--clients``, ``--duration``; 2 tables × 10,000 rows): bare, the
   same ``sysbench ... run`` command pglab builds: ``sysbench_overhead_ratio`` (goal ≥ 0.98);
2. ``kit = "tpcc"`` (``--warehouses``, ``--mode``): bare, the pgbench command pglab ran (the
   kit's scripts, its clients and ``-T``) without what pglab adds to it (``-P 1`` and the
   latency log): ``tpcc_overhead_ratio`` on pgbench's TPS over all of the kit's transactions
   (goal ≥ 0.98). The kit writes: the data grows over the pairs, in both arms alike.

    .venv/bin/python bench/kits.py [--pairs 20] [--duration 20] [--clients 4]
        [--test oltp_read_only] [--warehouses 2] [--mode procedures] [--only sysbench|tpcc]
    .venv/bin/python bench/kits.py --quick     # 2 pairs of 3 s each: proves it runs
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections.abc import Callable
from typing import Any

from _common import bootstrap_median_ci, open_lab, parser, scratch_store

from pglab import procs
from pglab.campaign import parse as campaign
from pglab.campaign.spec import RunSpec
from pglab.lab import Lab
from pglab.pgbench.output import parse_report as pgbench_report
from pglab.planning.plan import make_plan
from pglab.postgres.sources import resolve
from pglab.records import RunResult
from pglab.run.executor import Executor
from pglab.store import Store
from pglab.workloads.sysbench.invoke import argv_for
from pglab.workloads.sysbench.load import Target, sysbench_exe
from pglab.workloads.sysbench.output import parse_report as sysbench_report

# what pglab adds to a pgbench command: taken off for the bare arm
PGLAB_ONLY = ("-P", "-l", "--log-prefix=", "--aggregate-interval=", "--sampling-rate=")


def ci_line(name: str, values: list[float], digits: int = 4) -> str:
    low, high = bootstrap_median_ci(values) if len(values) > 1 else (values[0], values[0])
    return (
        f"{name}: {statistics.median(values):.{digits}f} "
        f"(95% CI {low:.{digits}f}–{high:.{digits}f}, {len(values)} pairs)"
    )


def bare_pgbench(argv: tuple[str, ...]) -> list[str]:
    """pglab's pgbench command without what pglab adds (``PGLAB_ONLY``)."""
    out: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word == "-P":
            skip = True  # its value follows
            continue
        if word in PGLAB_ONLY or any(word.startswith(w) for w in PGLAB_ONLY if w.endswith("=")):
            continue
        out.append(word)
    return out


def pairs(
    name: str,
    pglab: Callable[[], float],
    bare: Callable[[], float],
    count: int,
) -> list[float]:
    """``count`` pairs of the two arms, back to back, the order alternating: pglab / bare."""
    ratios: list[float] = []
    for i in range(count):
        arms = [("pglab", pglab), ("bare", bare)]
        got = {arm: run() for arm, run in (arms if i % 2 == 0 else arms[::-1])}
        ratios.append(got["pglab"] / got["bare"])
        print(
            f"{name} pair {i + 1}: pglab {got['pglab']:.1f} tps, bare {got['bare']:.1f} tps, "
            f"ratio {ratios[-1]:.4f}",
            flush=True,
        )
    return ratios


def one_server(
    lab: Lab,
    store: Store,
    doc: dict[str, Any],
    telemetry: bool = True,
    waits_hz: float | None = None,
) -> tuple[RunSpec, Executor, Callable[[], tuple[float, RunResult]]]:
    """The point of ``doc`` (its dataset kept: one server for every run), an executor, and a
    run of the point through it: its pgbench's or sysbench's TPS, and the run."""
    doc = {**doc, "dataset": {**doc["dataset"], "reset": "never"}}
    if not telemetry:  # what is left of pglab's cost without its samplers
        doc["telemetry"] = {"enabled": False}
    elif waits_hz is not None:  # the wait sampler's rate (10 a second by default)
        doc["telemetry"] = {"waits_hz": waits_hz}
    (point,) = make_plan(campaign.parse(doc, default_name=doc["name"])).points
    binaries = resolve(point.server, lab)
    executor = Executor(lab, store=store)

    def pglab() -> tuple[float, RunResult]:
        result = executor.run_one(point, binaries)
        assert result.status == "ok", result.error
        assert not result.metrics.get("inconsistent"), "the kit broke its own data"
        return float(result.phases[0].report.tps), result

    return point, executor, pglab


def sysbench_overhead(lab: Lab, store: Store, args: argparse.Namespace) -> list[float]:
    doc = {
        "name": "bench-kits-sysbench",
        "dataset": {"tables": 2, "table_size": 10000},
        "workload": {
            "generator": "sysbench",
            "test": args.test,
            "clients": args.clients,
            "duration": args.duration,
        },
    }
    point, executor, pglab = one_server(lab, store, doc, args.telemetry == "on", args.waits_hz)
    try:
        pglab()  # the dataset copied, the server started and warmed: not measured
        cluster = executor.cluster
        assert cluster is not None and cluster.running

        def bare() -> float:
            with cluster.connect() as conn:
                target = Target.of(conn)
            argv = argv_for(sysbench_exe(), point.phases[0], target)
            with tempfile.TemporaryDirectory() as tmp:
                out = procs.run(argv, timeout=args.duration * 3 + 60, cwd=tmp)
            return sysbench_report(out.stdout).tps

        return pairs("sysbench", lambda: pglab()[0], bare, args.pairs)
    finally:
        executor.close()


def tpcc_overhead(lab: Lab, store: Store, args: argparse.Namespace) -> list[float]:
    doc = {
        "name": "bench-kits-tpcc",
        "dataset": {"scale": args.warehouses},
        "workload": {
            "kit": "tpcc",
            "mode": args.mode,
            "clients": args.clients,
            "duration": args.duration,
        },
    }
    _, executor, pglab = one_server(lab, store, doc, args.telemetry == "on", args.waits_hz)
    try:
        _, warm = pglab()  # not measured; its command is the bare arm's
        argv = bare_pgbench(warm.phases[0].argv)

        def bare() -> float:
            with tempfile.TemporaryDirectory() as tmp:
                out = procs.run(argv, timeout=args.duration * 3 + 60, cwd=tmp)
            return pgbench_report(out.stdout).tps

        return pairs("tpcc", lambda: pglab()[0], bare, args.pairs)
    finally:
        executor.close()


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--duration", type=int, default=20)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--test", default="oltp_read_only")
    ap.add_argument("--warehouses", type=int, default=2)
    ap.add_argument("--mode", default="procedures", choices=["procedures", "client"])
    ap.add_argument("--only", choices=["sysbench", "tpcc"])
    ap.add_argument(
        "--telemetry",
        default="on",
        choices=["on", "off"],
        help="off: pglab's arm without its samplers (what the rest of pglab costs)",
    )
    ap.add_argument(
        "--waits-hz", type=float, help="the wait sampler's samples a second in pglab's arm"
    )
    ap.add_argument("--quick", action="store_true", help="2 pairs of 3 s each")
    args = ap.parse_args()
    if args.quick:
        args.pairs, args.duration = 2, 3
    lab = open_lab(args)
    lab.home.mkdir(parents=True, exist_ok=True)
    store = scratch_store()  # the executor reads the store's runs
    found: dict[str, list[float]] = {}
    if args.only in (None, "sysbench"):
        found["sysbench_overhead_ratio"] = sysbench_overhead(lab, store, args)
    if args.only in (None, "tpcc"):
        found["tpcc_overhead_ratio"] = tpcc_overhead(lab, store, args)
    for name, ratios in found.items():
        print(ci_line(name, ratios))


if __name__ == "__main__":
    main()
