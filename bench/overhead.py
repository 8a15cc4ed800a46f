"""pglab's overhead: the same point run by pglab and by bare pgbench, interleaved.

Each round runs the point through pglab's executor twice, with ``latency_log = "full"`` (the
default: ``-P 1`` and pgbench's per-transaction log, parsed into per-second histograms) and with
``latency_log = "aggregate"`` (``-P 1`` and pgbench's own per-second aggregates), and once as
bare pgbench (same reset and server start, no progress and no log), in a rotating order. It
prints ``overhead_ratio_full: X`` and, last, ``overhead_ratio: Y`` for the aggregate mode: the
median over rounds of TPS with pglab / TPS bare in the same round (target ≥ 0.98 for the
aggregate mode; the full log costs pgbench CPU that shows at high TPS on few cores).

    .venv/bin/python bench/overhead.py [--rounds 5] [--duration 15] [--clients 2]
        [--script select-only]
"""

from __future__ import annotations

import re
import statistics
import tempfile

from _common import open_lab, parser, point_doc

from pglab import procs
from pglab.campaign import parse as campaign
from pglab.pgbench.invoke import auto_threads
from pglab.postgres import dataset
from pglab.postgres.server import Cluster
from pglab.postgres.sources import resolve
from pglab.run.executor import Executor
from pglab.run.plan import make_plan


def main() -> None:
    ap = parser(__doc__, duration=15)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    lab = open_lab(args)
    doc = point_doc("bench-overhead", args)
    doc["matrix"] = {"latency_log": ["full", "aggregate"]}
    camp = campaign.parse(doc, default_name="bench-overhead")
    points = {pt.axes[0][1]: pt for pt in make_plan(camp).points}
    point = points["full"]
    binaries = resolve(point.server, lab)
    ds = dataset.ensure(lab, binaries, point.server, point.dataset)
    phase = point.phases[0]
    results: dict[str, list[float]] = {"full": [], "aggregate": [], "bare": []}
    executor = Executor(lab, store=None)

    def with_pglab(mode: str) -> float:
        result = executor.run_one(points[mode], binaries)
        assert result.status == "ok", result.error
        return result.metrics["tps"]

    def bare() -> float:
        executor.close()
        datadir = lab.clusters / "w-bench-bare"
        dataset.reset(lab, ds, datadir)
        with Cluster(binaries, lab, datadir, "w-bench-bare") as cluster:
            cluster.start()
            threads = str(phase.threads or auto_threads(phase.clients))
            with tempfile.TemporaryDirectory() as tmp:
                out = procs.run(
                    [
                        binaries.exe("pgbench"),
                        "-c",
                        str(phase.clients),
                        "-j",
                        threads,
                        "-T",
                        str(phase.duration),
                        "-b",
                        args.script,
                        *cluster.pgbench_conn_args(),
                    ],
                    timeout=phase.duration * 3 + 60,
                    cwd=tmp,
                )
        return float(re.search(r"^tps = ([0-9.]+)", out.stdout, re.M).group(1))

    arms = [("full", lambda: with_pglab("full")), ("aggregate", lambda: with_pglab("aggregate")),
            ("bare", bare)]  # fmt: skip
    try:
        for i in range(args.rounds):
            for name, fn in arms[i % 3 :] + arms[: i % 3]:  # each arm leads in turn
                tps = fn()
                results[name].append(tps)
                print(f"round {i + 1} {name:9s} {tps:10.1f} tps", flush=True)
    finally:
        executor.close()
    med = {name: statistics.median(v) for name, v in results.items()}
    print(
        f"median tps: pglab full {med['full']:.1f}, pglab aggregate {med['aggregate']:.1f}, "
        f"bare {med['bare']:.1f} ({args.rounds} rounds, {args.script}, {args.clients} clients, "
        f"{args.duration} s)"
    )
    # the ratio within each round cancels the drift of a shared machine between rounds
    ratios = {
        mode: statistics.median(a / b for a, b in zip(results[mode], results["bare"], strict=True))
        for mode in ("full", "aggregate")
    }
    print(f"overhead_ratio_full: {ratios['full']:.4f}")
    print(f"overhead_ratio: {ratios['aggregate']:.4f}")


if __name__ == "__main__":
    main()
