"""The watchers' cost on one server: pgbench with telemetry (and with the profiler) against
pgbench alone, alternating on the same started server and the same dataset.

``bench/telemetry_overhead.py`` and ``bench/profile_overhead.py`` measure each arm through the
executor: a fresh copy of the dataset and a freshly started server per run. On two cores
those runs vary by ±8% between themselves, so their pair ratios cannot show a 1% goal. Here
the server is started once, its dataset copied once and warmed by a first unmeasured run;
then pgbench (``--script``, ``--clients``, ``--duration`` seconds, ``--latency-log
aggregate`` as the campaigns' default) runs ``--pairs`` times in each arm, the arms of a pair
back to back in alternating order, each arm's TPS from pgbench's own report. Arms:

- ``off``: pgbench alone;
- ``telemetry``: pgbench inside a ``PhaseWatch`` (pglab's default telemetry: the statistics
  views and the OS every second, wait events at 10 Hz, buffers every 5 s);
- ``profile`` (with ``--profile``): telemetry and a ``ProfileWatch`` (perf at 99 Hz with stacks).

The ratio of each pair (arm / off) is printed as it comes; the last lines are
``watcher_overhead_telemetry: X (95% CI a–b)`` (goal ≥ 0.99) and, with ``--profile``,
``watcher_overhead_profile`` (goal ≥ 0.98): X the median of the pair ratios, the interval a
bootstrap of that median.

    .venv/bin/python bench/watcher_overhead.py [--pairs 30] [--duration 10] [--clients 2]
        [--script select-only] [--profile]
    .venv/bin/python bench/watcher_overhead.py --quick     # 2 pairs of 2 s: proves it runs
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
from pathlib import Path

from _common import bootstrap_median_ci, open_lab, parser

from pglab.campaign import parse as campaign
from pglab.campaign.spec import ProfileSpec, TelemetrySpec
from pglab.pgbench.invoke import auto_threads
from pglab.pgbench.output import parse_report
from pglab.planning.plan import make_plan
from pglab.postgres import dataset
from pglab.postgres.server import Cluster
from pglab.postgres.sources import resolve
from pglab.profile.watch import ProfileWatch
from pglab.telemetry.watch import PhaseWatch

NAME = "w-bench-watcher-overhead"


def pgbench(argv: list[str], workdir: Path, watch: PhaseWatch | None = None) -> float:
    """One pgbench run's TPS; ``watch``: told pgbench's pid, as the executor does."""
    proc = subprocess.Popen(
        argv, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    if watch is not None:
        watch.set_client(proc)
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"pgbench failed: {err.strip()[-500:]}")
    return parse_report(out).tps


def main() -> None:
    ap = parser(__doc__, scale=10)
    ap.add_argument("--pairs", type=int, default=30)
    ap.add_argument("--profile", action="store_true", help="also the profiler's arm")
    ap.add_argument("--quick", action="store_true", help="2 pairs of 2 s")
    args = ap.parse_args()
    if args.quick:
        args.pairs, args.duration = 2, 2
    lab = open_lab(args)
    doc = {
        "name": "bench-watcher-overhead",
        "dataset": {"scale": args.scale},
        "workload": {"script": args.script, "clients": args.clients, "duration": 1},
    }
    point = make_plan(campaign.parse(doc, default_name="bench-watcher-overhead")).points[0]
    binaries = resolve(point.server, lab)
    ds = dataset.ensure(lab, binaries, point.server, point.dataset, print)
    datadir = lab.clusters / NAME
    dataset.reset(lab, ds, datadir)
    arms = ["telemetry", *(["profile"] if args.profile else [])]
    ratios: dict[str, list[float]] = {arm: [] for arm in arms}
    with Cluster(binaries, lab, datadir, NAME) as cluster, tempfile.TemporaryDirectory() as tmp:
        cluster.start()
        with cluster.connect() as conn:
            row = conn.execute("SHOW server_version_num").fetchone()
            assert row is not None
            version = int(row[0])
        work = Path(tmp)
        argv = [
            binaries.exe("pgbench"),
            "-n",
            "-c",
            str(args.clients),
            "-j",
            str(auto_threads(args.clients)),
            "-T",
            str(args.duration),
            "-b",
            args.script,
            "-l",
            "--aggregate-interval",
            "1",
            *cluster.pgbench_conn_args(),
        ]
        pgbench(argv, work)  # warm the cache: not measured

        def arm(name: str) -> float:
            if name == "off":
                return pgbench(argv, work)
            with PhaseWatch(cluster, TelemetrySpec(), version) as watch:
                if name == "telemetry":
                    return pgbench(argv, work, watch)
                spec = ProfileSpec(enabled=True)
                with ProfileWatch(cluster, spec, work, "bench") as prof:
                    tps = pgbench(argv, work, watch)
                assert prof.tables or prof.notes, "the profiler recorded nothing"
                return tps

        for i in range(args.pairs):
            for name in arms:
                order = [name, "off"] if i % 2 == 0 else ["off", name]
                got = {a: arm(a) for a in order}
                ratios[name].append(got[name] / got["off"])
                print(
                    f"pair {i + 1} {name}: {got[name]:.1f} tps, off {got['off']:.1f} tps, "
                    f"ratio {ratios[name][-1]:.4f}",
                    flush=True,
                )
        cluster.stop("fast")
    for name in arms:
        values = ratios[name]
        low, high = bootstrap_median_ci(values) if len(values) > 1 else (values[0], values[0])
        print(
            f"watcher_overhead_{name}: {statistics.median(values):.4f} "
            f"(95% CI {low:.4f}–{high:.4f}, {len(values)} pairs of {args.duration} s, "
            f"{args.clients} clients of {args.script}, one server)"
        )


if __name__ == "__main__":
    main()
