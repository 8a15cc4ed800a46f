"""Where pgbench's per-transaction log costs: bare pgbench with ``-l`` writing its log on the
filesystem of the data and WAL (the lab home, as pglab's runs do), and on tmpfs (/dev/shm),
against bare pgbench without a log; interleaved, rotating order, each run on a fresh copy of the
dataset and a freshly started server.

Asks whether the log's writes slow a commit-bound workload through the filesystem (ext4's
ordered journal flushing data with every WAL fsync) rather than through pgbench's CPU. Prints
each arm's TPS per round, then ``log_fs_ratio_data: X`` and ``log_fs_ratio_tmpfs: Y``: the median
over rounds of the arm's TPS over the no-log arm's in the same round, with a 95% bootstrap CI.

    .venv/bin/python bench/log_fs.py [--rounds 6] [--script tpcb-like] [--clients 4]
        [--duration 15] [--scale 10]
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


def main() -> None:
    ap = parser(__doc__, duration=15, clients=4, script="tpcb-like")
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    lab = open_lab(args)
    camp = campaign.parse(point_doc("bench-log-fs", args), default_name="bench-log-fs")
    point = make_plan(camp).points[0]
    binaries = resolve(point.server, lab)
    ds = dataset.ensure(lab, binaries, point.server, point.dataset)

    def bare(where: str, *extra: str) -> float:
        datadir = lab.clusters / "w-bench-log-fs"
        dataset.reset(lab, ds, datadir)
        with Cluster(binaries, lab, datadir, "w-bench-log-fs") as cluster:
            cluster.start()
            with tempfile.TemporaryDirectory(dir=where) as tmp:
                return bare_tps(binaries, cluster, args, extra, tmp)

    arms: dict[str, Callable[[], float]] = {
        "none": lambda: bare(tempfile.gettempdir()),
        "data": lambda: bare(str(lab.home), "-l"),
        "tmpfs": lambda: bare("/dev/shm", "-l"),
    }
    tps: dict[str, list[float]] = {name: [] for name in arms}
    names = list(arms)
    for r in range(args.rounds):
        for name in names[r % 3 :] + names[: r % 3]:
            tps[name].append(arms[name]())
            print(f"round {r + 1} {name:6s} {tps[name][-1]:10.1f} tps", flush=True)
    print(
        f"{args.rounds} rounds, {args.script}, {args.clients} clients, {args.duration} s; "
        f"median TPS without a log {statistics.median(tps['none']):.1f}"
    )
    for name in ("data", "tmpfs"):
        ratios = [a / b for a, b in zip(tps[name], tps["none"], strict=True)]
        low, high = bootstrap_median_ci(ratios)
        print(f"log_fs_ratio_{name}: {statistics.median(ratios):.4f} (95% CI {low:.4f}–{high:.4f})")


if __name__ == "__main__":
    main()
