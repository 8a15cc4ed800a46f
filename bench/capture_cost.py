"""What a capture costs the source (``pglab capture``): bare pgbench against a server pglab
makes, with PostgreSQL's logging as it is and with the logging a capture sets
(``replay.logfile.SETTINGS``: every statement, connection and disconnection written to the
server's log file in the lab home); interleaved, rotating order, a fresh copy of the dataset
and a freshly started server each run.

Prints each arm's TPS per round, then ``capture_cost_ratio: X [lo, hi]``: the median over
rounds of the capture arm's TPS over the plain arm's in the same round, with a 95% bootstrap
CI (1.0: no cost; 0.8: the capture takes a fifth of the throughput).

    .venv/bin/python bench/capture_cost.py [--rounds 4] [--script select-only] [--clients 2]
        [--duration 10] [--scale 10]
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable

from _common import bare_tps, bootstrap_median_ci, open_lab, parser, point_doc

from pglab.campaign import parse as campaign
from pglab.planning.plan import make_plan
from pglab.postgres import dataset
from pglab.postgres.server import Cluster
from pglab.postgres.sources import resolve
from pglab.workloads.replay.logfile import SETTINGS


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    lab = open_lab(args)
    camp = campaign.parse(point_doc("bench-capture", args), default_name="bench-capture")
    point = make_plan(camp).points[0]
    binaries = resolve(point.server, lab)
    ds = dataset.ensure(lab, binaries, point.server, point.dataset)

    def bare(settings: dict[str, str]) -> float:
        datadir = lab.clusters / "w-bench-capture"
        dataset.reset(lab, ds, datadir)
        with Cluster(binaries, lab, datadir, "w-bench-capture") as cluster:
            cluster.start(settings)
            with tempfile.TemporaryDirectory() as tmp:
                return bare_tps(binaries, cluster, args, (), tmp)

    arms: dict[str, Callable[[], float]] = {
        "plain": lambda: bare({}),
        "capture": lambda: bare(dict(SETTINGS)),
    }
    tps: dict[str, list[float]] = {name: [] for name in arms}
    names = list(arms)
    for r in range(args.rounds):
        for name in names[r % 2 :] + names[: r % 2]:
            tps[name].append(arms[name]())
            print(f"round {r + 1} {name:8s} {tps[name][-1]:10.1f} tps", flush=True)
    ratios = [c / p for c, p in zip(tps["capture"], tps["plain"], strict=True)]
    lo, hi = bootstrap_median_ci(ratios)
    print(
        f"{args.rounds} rounds, {args.script}, {args.clients} clients, {args.duration} s, "
        f"scale {args.scale}; median TPS plain {statistics.median(tps['plain']):.1f}, "
        f"capturing {statistics.median(tps['capture']):.1f}"
    )
    print(f"capture_cost_ratio: {statistics.median(ratios):.3f} [{lo:.3f}, {hi:.3f}]")


if __name__ == "__main__":
    main()
