"""Workload kits and sysbench: pglab's cost when it drives sysbench, and the TPC-C-like kit's
NOPM in its two modes.

1. The same sysbench point (``--test``, ``--clients``, ``--duration``; 2 tables × 10,000 rows)
   run by pglab (a fresh copy of the dataset, a started server, telemetry) and by bare sysbench
   (the same arguments, against a fresh copy and a started server, no pglab), in rotating
   order; the ratio is taken within each round (pglab / bare TPS), its median and a 95%
   bootstrap CI printed as ``sysbench_overhead_ratio: X (95% CI a–b)`` (goal ≥ 0.98).
2. ``kit = "tpcc"`` at ``--warehouses`` in ``procedures`` and ``client`` mode, interleaved:
   each mode's median NOPM with a 95% bootstrap CI (``tpcc_nopm_procedures``,
   ``tpcc_nopm_client``), and the ratio procedures / client within each round.

    .venv/bin/python bench/kits.py [--rounds 10] [--duration 30] [--clients 4]
        [--test oltp_read_only] [--warehouses 2]
    .venv/bin/python bench/kits.py --quick     # one 3 s round of each: proves it runs
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from _common import bootstrap_median_ci, open_lab, parser, scratch_store

from pglab import procs
from pglab.campaign import parse as campaign
from pglab.lab import Lab
from pglab.planning.plan import make_plan
from pglab.postgres import dataset
from pglab.postgres.server import Cluster
from pglab.postgres.sources import resolve
from pglab.run.executor import Executor
from pglab.store import Store
from pglab.workloads import dataset_kind
from pglab.workloads.sysbench.invoke import argv_for
from pglab.workloads.sysbench.load import Target, sysbench_exe
from pglab.workloads.sysbench.output import parse_report


def ci_line(name: str, values: list[float], digits: int = 1) -> str:
    low, high = bootstrap_median_ci(values) if len(values) > 1 else (values[0], values[0])
    return (
        f"{name}: {statistics.median(values):.{digits}f} "
        f"(95% CI {low:.{digits}f}–{high:.{digits}f}, {len(values)} rounds)"
    )


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
    (point,) = make_plan(campaign.parse(doc, default_name="bench-kits-sysbench")).points
    binaries = resolve(point.server, lab)
    ds = dataset.ensure(
        lab, binaries, point.server, point.dataset, print, kind=dataset_kind(point.dataset)
    )
    executor = Executor(lab, store=store)
    ratios: list[float] = []

    def pglab() -> float:
        result = executor.run_one(point, binaries)
        assert result.status == "ok", result.error
        return result.metrics["tps"]

    def bare() -> float:
        executor.close()  # its server stopped: one server at a time
        datadir = lab.clusters / "w-bench-sysbench-bare"
        dataset.reset(lab, ds, datadir)
        with Cluster(binaries, lab, datadir, "w-bench-sysbench-bare") as cluster:
            cluster.start()
            with cluster.connect() as conn:
                target = Target.of(conn)
            argv = argv_for(sysbench_exe(), point.phases[0], target)
            with tempfile.TemporaryDirectory() as tmp:
                out = procs.run(argv, timeout=args.duration * 3 + 60, cwd=tmp)
            cluster.stop("fast")
        return parse_report(out.stdout).tps

    try:
        for i in range(args.rounds):
            arms = [("pglab", pglab), ("bare", bare)]
            got = dict((name, arm()) for name, arm in (arms if i % 2 == 0 else arms[::-1]))
            ratios.append(got["pglab"] / got["bare"])
            print(
                f"round {i + 1}: pglab {got['pglab']:.1f} tps, bare {got['bare']:.1f} tps, "
                f"ratio {ratios[-1]:.4f}",
                flush=True,
            )
    finally:
        executor.close()
    return ratios


def tpcc_modes(lab: Lab, store: Store, args: argparse.Namespace) -> dict[str, list[float]]:
    doc = {
        "name": "bench-kits-tpcc",
        "dataset": {"scale": args.warehouses},
        "workload": {"kit": "tpcc", "clients": args.clients, "duration": args.duration},
        "matrix": {"mode": ["procedures", "client"]},
    }
    points = make_plan(campaign.parse(doc, default_name="bench-kits-tpcc")).points
    binaries = resolve(points[0].server, lab)
    executor = Executor(lab, store=store)
    nopm: dict[str, list[float]] = {"procedures": [], "client": []}
    try:
        for i in range(args.rounds):
            for point in points if i % 2 == 0 else points[::-1]:
                result = executor.run_one(point, binaries)
                assert result.status == "ok", result.error
                assert result.metrics["inconsistent"] == 0, "the kit broke its own data"
                mode = point.phases[0].mode or ""
                nopm[mode].append(result.metrics["nopm"])
                print(f"round {i + 1}: {mode} {nopm[mode][-1]:,.0f} nopm", flush=True)
    finally:
        executor.close()
    return nopm


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--duration", type=int, default=30)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--test", default="oltp_read_only")
    ap.add_argument("--warehouses", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="one round of 3 s each")
    args = ap.parse_args()
    if args.quick:
        args.rounds, args.duration = 1, 3
    lab = open_lab(args)
    Path(lab.home).mkdir(parents=True, exist_ok=True)
    store = scratch_store()  # the executor reads the store's runs
    ratios = sysbench_overhead(lab, store, args)
    nopm = tpcc_modes(lab, store, args)
    ratio = [p / c for p, c in zip(nopm["procedures"], nopm["client"], strict=True)]
    print(ci_line("tpcc_nopm_procedures", nopm["procedures"]))
    print(ci_line("tpcc_nopm_client", nopm["client"]))
    print(ci_line("tpcc_procedures_over_client", ratio, 4))
    print(ci_line("sysbench_overhead_ratio", ratios, 4))


if __name__ == "__main__":
    main()
