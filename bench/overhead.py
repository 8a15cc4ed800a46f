"""pglab's overhead: the same point run by pglab and by bare pgbench, interleaved.

Each pair runs the point once through pglab's executor (dataset reset, server start, pgbench with
``-P 1`` and the per-transaction log, parsing, fingerprint) and once as bare pgbench (same reset
and start, pgbench with no progress or log), alternating which goes first. The last line is
``overhead_ratio: X`` = median TPS with pglab / median TPS bare (target ≥ 0.98).

    .venv/bin/python bench/overhead.py [--pairs 5] [--duration 15] [--clients 2]
        [--script select-only]
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
from pathlib import Path

from pglab import campaign, dataset, procs
from pglab.executor import Executor
from pglab.lab import Lab
from pglab.pgbench import auto_threads
from pglab.plan import make_plan
from pglab.server import Cluster
from pglab.sources import resolve


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--duration", type=int, default=15)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--script", default="select-only")
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--lab-dir", type=Path, default=None)
    args = ap.parse_args()

    lab = Lab.open(args.lab_dir) if args.lab_dir else Lab.open()
    doc = {
        "name": "bench-overhead",
        "dataset": {"scale": args.scale},
        "workload": {"script": args.script, "clients": args.clients, "duration": args.duration},
    }
    camp = campaign.parse(doc, default_name="bench-overhead")
    (point,) = make_plan(camp).points
    binaries = resolve(point.server, lab)
    ds = dataset.ensure(lab, binaries, point.server, point.dataset)
    phase = point.phases[0]
    pglab_tps: list[float] = []
    bare_tps: list[float] = []
    executor = Executor(lab, store=None)

    def with_pglab() -> float:
        result = executor.run_one(point, binaries)
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

    try:
        for i in range(args.pairs):
            order = [("pglab", with_pglab), ("bare", bare)]
            if i % 2:
                order.reverse()
            for name, fn in order:
                tps = fn()
                (pglab_tps if name == "pglab" else bare_tps).append(tps)
                print(f"pair {i + 1} {name:5s} {tps:10.1f} tps", flush=True)
    finally:
        executor.close()
    ratio = statistics.median(pglab_tps) / statistics.median(bare_tps)
    print(
        f"pglab median {statistics.median(pglab_tps):.1f} tps, "
        f"bare median {statistics.median(bare_tps):.1f} tps "
        f"({args.pairs} pairs, {args.script}, {args.clients} clients, {args.duration} s)"
    )
    print(f"overhead_ratio: {ratio:.4f}")


if __name__ == "__main__":
    main()
