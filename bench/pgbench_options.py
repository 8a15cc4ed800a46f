"""What pgbench's own options cost pgbench, on one server: bare pgbench without options, with
``-P 1``, with the aggregate log (``-l --aggregate-interval 1``) and with both (what pglab
passes), in short runs one after another against the same running server, the order rotated
each round.

``bench/overhead.py`` starts each run on a fresh copy and server, as pglab does, which adds the
spread of a server's start to every ratio; here the server, its caches and the dataset stay the
same, so a few per cent of difference can be told from noise in a few minutes. Read-only scripts
only (a writing one would change the dataset between arms). After one warm-up run, prints each
round's TPS, then each arm's ratio to the run without options in the same round (median over
rounds, 95% bootstrap CI) and, last, ``pgbench_options_ratio: X`` (``-P 1`` and the aggregate
log together).

    .venv/bin/python bench/pgbench_options.py [--rounds 25] [--duration 5] [--clients 2]
"""

from __future__ import annotations

import statistics
import tempfile

from _common import bare_tps, bootstrap_median_ci, open_lab, parser, point_doc

from pglab.campaign import parse as campaign
from pglab.planning.plan import make_plan
from pglab.postgres import dataset
from pglab.postgres.server import Cluster
from pglab.postgres.sources import resolve

ARMS = {
    "none": (),
    "-P 1": ("-P", "1"),
    "agg log": ("-l", "--aggregate-interval", "1"),
    "both": ("-P", "1", "-l", "--aggregate-interval", "1"),
}


def main() -> None:
    ap = parser(__doc__, duration=5)
    ap.add_argument("--rounds", type=int, default=25)
    args = ap.parse_args()
    if args.script != "select-only" and not args.script.endswith(".sql"):
        raise SystemExit("a read-only script only: the arms share one dataset")
    lab = open_lab(args)
    camp = campaign.parse(
        point_doc("bench-pgbench-options", args), default_name="bench-pgbench-options"
    )
    point = make_plan(camp).points[0]
    binaries = resolve(point.server, lab)
    ds = dataset.ensure(lab, binaries, point.server, point.dataset)
    datadir = lab.clusters / "w-bench-options"
    dataset.reset(lab, ds, datadir)
    tps: dict[str, list[float]] = {name: [] for name in ARMS}
    names = list(ARMS)
    with (
        Cluster(binaries, lab, datadir, "w-bench-options") as cluster,
        tempfile.TemporaryDirectory() as tmp,
    ):
        cluster.start()

        def run(extra: tuple[str, ...]) -> float:
            return bare_tps(binaries, cluster, args, ("-n", *extra), tmp)

        print(f"warm-up {run(()):.1f} tps", flush=True)
        for r in range(args.rounds):
            k = r % len(names)
            for name in names[k:] + names[:k]:
                tps[name].append(run(ARMS[name]))
                print(f"round {r + 1} {name:8s} {tps[name][-1]:10.1f} tps", flush=True)
    print(
        f"{args.rounds} rounds, {args.script}, {args.clients} clients, {args.duration} s each, "
        f"one server; median TPS without options {statistics.median(tps['none']):.1f}"
    )
    for name in names[1:]:
        ratios = [a / b for a, b in zip(tps[name], tps["none"], strict=True)]
        low, high = bootstrap_median_ci(ratios)
        print(f"  {name:8s} {statistics.median(ratios):.4f} (95% CI {low:.4f}–{high:.4f})")
    ratios = [a / b for a, b in zip(tps["both"], tps["none"], strict=True)]
    print(f"pgbench_options_ratio: {statistics.median(ratios):.4f}")


if __name__ == "__main__":
    main()
