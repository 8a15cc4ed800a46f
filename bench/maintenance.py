"""Parallel maintenance on this machine: CREATE INDEX with 0 vs 1 parallel workers, and
pg_dump -j 1 vs -j 2, interleaved.

Each round runs two points through pglab's executor, in alternating order (a fresh copy of the
dataset each): "serial" (CREATE INDEX on pgbench_accounts(abalance) with
max_parallel_maintenance_workers = 0, then pg_dump -F d -j 1 -Z 0) and "parallel" (1 worker,
-j 2). A round's speedup is the parallel point's MB/s over the serial one's, per operation; the
last lines are ``maintenance_speedup_index: X`` and ``maintenance_speedup_dump: Y``: the
median over rounds with a 95% bootstrap interval of that median.

    .venv/bin/python bench/maintenance.py [--rounds 6] [--scale 30]
"""

from __future__ import annotations

import statistics

from _common import bootstrap_median_ci, open_lab, parser, scratch_store

from pglab.campaign import parse as campaign
from pglab.planning.plan import make_plan
from pglab.postgres.sources import resolve
from pglab.run.executor import Executor

PHASES = {"index": "maintenance_speedup_index", "dump": "maintenance_speedup_dump"}


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--scale", type=int, default=30)
    args = ap.parse_args()
    lab = open_lab(args)
    doc = {
        "name": "bench-maintenance",
        "dataset": {"scale": args.scale},
        "phases": [
            {"name": "index", "operation": "create_index"},
            {"name": "dump", "operation": "dump", "compress": False},
        ],
        "variants": {
            "serial": {"workload": {"parallel": 0, "jobs": 1}},
            "parallel": {"workload": {"parallel": 1, "jobs": 2}},
        },
    }
    points = {pt.variant: pt for pt in make_plan(campaign.parse(doc, default_name="b")).points}
    binaries = resolve(points["serial"].server, lab)
    executor = Executor(lab, store=scratch_store())
    mb_s: dict[str, dict[str, list[float]]] = {v: {ph: [] for ph in PHASES} for v in points}
    try:
        for i in range(args.rounds):
            for name in list(points) if i % 2 == 0 else reversed(list(points)):
                result = executor.run_one(points[name], binaries)
                assert result.status == "ok", result.error
                for ph in PHASES:
                    mb_s[name][ph].append(result.metrics.value("mb_s", ph))
                workers = result.metrics.get("workers_launched", "index")
                print(
                    f"round {i + 1} {name:8s} index {mb_s[name]['index'][-1]:7.1f} MB/s "
                    f"({workers:.0f} workers), dump {mb_s[name]['dump'][-1]:7.1f} MB/s",
                    flush=True,
                )
    finally:
        executor.close()
    for ph, label in PHASES.items():
        ratios = [p / s for p, s in zip(mb_s["parallel"][ph], mb_s["serial"][ph], strict=True)]
        low, high = bootstrap_median_ci(ratios)
        print(
            f"{label}: {statistics.median(ratios):.3f} "
            f"(95% CI {low:.3f}–{high:.3f}, {len(ratios)} rounds)"
        )


if __name__ == "__main__":
    main()
