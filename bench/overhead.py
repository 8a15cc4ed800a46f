"""pglab's overhead: the same point run by pglab and by bare pgbench, interleaved.

Each round runs every arm once, in a rotating order (each arm leads in turn), each on a fresh
copy of the dataset and a freshly started server; an arm's ratio is its TPS over bare
pgbench's TPS *in the same round* (which cancels the drift of a shared machine between rounds),
summed up as the median over rounds with a 95% bootstrap interval of that median.

Default arms: pglab with ``latency_log = "full"`` (its default: ``-P 1`` and pgbench's
per-transaction log, parsed into per-second histograms), pglab with ``"aggregate"`` (``-P 1``
and pgbench's own per-second aggregates), the same with ``progress = false`` (no ``-P 1``: the
per-second series read from the aggregate log after the run) and bare pgbench (no progress, no
log). Prints ``overhead_ratio_full: X``, ``overhead_ratio_no_progress: Z`` and, last,
``overhead_ratio: Y`` (aggregate, with ``-P 1`` as pglab runs by default; target ≥ 0.98).

``--breakdown`` toggles each factor on its own, all interleaved in one run: bare pgbench with
``-P 1`` only, with the per-transaction log ``-l`` only, with ``-l --aggregate-interval 1``
only, with both as pglab passes them (``bare as pglab``); pglab with no log and no telemetry
(its own process and its ``-P 1``); the same plus each sampler alone (PostgreSQL statistics,
waits, shared buffers, OS); pglab with the aggregate log,
with the full log of every transaction, and with the full log sampled as by default (no
telemetry); pglab as it runs by default; and pglab with the aggregate log and every sampler
(``default agg``, set against ``bare as pglab``: what pglab adds beyond pgbench's own options).

pglab's default full log is sampled once a point is known to exceed 10,000 TPS
(``pgbench/sampling.py``): the executor keeps the TPS of each arm's point, so an arm's first
round logs every transaction and the later ones a sample, as the repeats of a campaign do.
Each arm's line gives its median ratio to bare with the 95% CI, and what it adds over the arm it
builds on.

    .venv/bin/python bench/overhead.py [--rounds 15] [--duration 15] [--clients 2]
        [--script select-only] [--breakdown] [--arms NAME,NAME]
    .venv/bin/python bench/overhead.py --pool LOG LOG   # earlier runs' rounds (same point) together
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from _common import bare_tps, bootstrap_median_ci, open_lab, parser, point_doc, scratch_store

from pglab.campaign import parse as campaign
from pglab.planning.plan import make_plan
from pglab.postgres import dataset
from pglab.postgres.server import Cluster
from pglab.postgres.sources import resolve
from pglab.run.executor import Executor
from pglab.telemetry import watch
from pglab.telemetry.base import Sampler

# the samplers one arm keeps (None: all of them), by class name
SAMPLERS = {
    "stats": "PgStatsSampler",
    "waits": "WaitsSampler",
    "buffers": "BuffersSampler",
    "os": "OsSampler",
}
_only: set[str] | None = None
_samplers = watch.PhaseWatch.samplers


def _some_samplers(self: watch.PhaseWatch) -> list[Sampler]:  # keeping only the arm's
    found = _samplers(self)
    return found if _only is None else [s for s in found if type(s).__name__ in _only]


watch.PhaseWatch.samplers = _some_samplers  # type: ignore[method-assign]

# arm: (what it is, the arm it adds to)
BREAKDOWN = {
    "bare -P 1": ("bare pgbench with its progress lines (-P 1)", "bare"),
    "bare -l": ("bare pgbench with its per-transaction log (-l)", "bare"),
    "bare -l agg": ("bare pgbench with its per-second aggregate log", "bare"),
    "bare as pglab": ("bare pgbench with pglab's arguments: -P 1 and the aggregate log", "bare"),
    "pglab": ("pglab, no latency log, no telemetry: its process, -P 1", "bare -P 1"),
    "+stats": ("pglab + the PostgreSQL statistics sampler", "pglab"),
    "+waits": ("pglab + the wait-event sampler (10 Hz)", "pglab"),
    "+buffers": ("pglab + the shared-buffers sampler", "pglab"),
    "+os": ("pglab + the OS sampler (/proc)", "pglab"),
    "+log agg": ("pglab + the aggregate latency log", "pglab"),
    "+log every": ("pglab + the full latency log of every transaction, parsed", "pglab"),
    "+log full": ("pglab + the full latency log, sampled as by default, parsed", "pglab"),
    "default": ("pglab as it runs by default: full log, every sampler", "pglab"),
    "default agg": ("pglab with latency_log aggregate, every sampler", "bare as pglab"),
}
DEFAULT = {
    "full": ("pglab, latency_log full (default)", "bare"),
    "no -P": ("pglab, latency_log aggregate, progress = false (no -P 1)", "aggregate"),
    "aggregate": ("pglab, latency_log aggregate", "bare"),
}


def main() -> None:
    ap = parser(__doc__, duration=15)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--breakdown", action="store_true", help="toggle each factor on its own")
    ap.add_argument("--arms", help="only these arms (comma-separated; bare is always run)")
    ap.add_argument(
        "--pool",
        nargs="+",
        metavar="LOG",
        help="run nothing: sum up together the rounds that earlier runs of this "
        "script printed (their output saved in each LOG)",
    )
    args = ap.parse_args()
    if args.pool:
        summarise(pooled_rounds(args.pool), BREAKDOWN | DEFAULT, args)
        return

    lab = open_lab(args)
    doc = point_doc("bench-overhead", args)
    doc["matrix"] = {"latency_log": ["full", "aggregate", "off"]}
    camp = campaign.parse(doc, default_name="bench-overhead")
    points = {pt.axes[0][1]: pt for pt in make_plan(camp).points}
    binaries = resolve(points["full"].server, lab)
    ds = dataset.ensure(lab, binaries, points["full"].server, points["full"].dataset)
    executor = Executor(lab, store=scratch_store())
    quiet = replace(points["off"].telemetry, enabled=False)

    def with_pglab(
        log: str,
        telemetry: bool = True,
        only: set[str] | None = None,
        every: bool = False,
        progress: bool = True,
    ) -> float:
        global _only
        _only = only
        point = points[log] if telemetry else replace(points[log], telemetry=quiet)
        # sampling_rate = 1: no sample, whatever the TPS; progress = false: no -P 1
        changes: dict[str, Any] = {"sampling_rate": 1.0} if every else {}
        changes |= {} if progress else {"progress": False}
        if changes:
            point = replace(point, phases=tuple(p.with_pgbench(**changes) for p in point.phases))
        try:
            result = executor.run_one(point, binaries)
        finally:
            _only = None
        assert result.status == "ok", result.error
        return result.metrics.value("tps")

    def bare(*extra: str) -> float:
        executor.close()
        datadir = lab.clusters / "w-bench-bare"
        dataset.reset(lab, ds, datadir)
        with Cluster(binaries, lab, datadir, "w-bench-bare") as cluster:
            cluster.start()
            with tempfile.TemporaryDirectory() as tmp:
                return bare_tps(binaries, cluster, args, extra, tmp)

    runs: dict[str, Callable[[], float]] = {"bare": bare}
    if args.breakdown:
        arms = BREAKDOWN
        runs |= {
            "bare -P 1": lambda: bare("-P", "1"),
            "bare -l": lambda: bare("-l"),
            "bare -l agg": lambda: bare("-l", "--aggregate-interval", "1"),
            "bare as pglab": lambda: bare("-P", "1", "-l", "--aggregate-interval", "1"),
            "pglab": lambda: with_pglab("off", telemetry=False),
            **{f"+{k}": partial(with_pglab, "off", only={SAMPLERS[k]}) for k in SAMPLERS},
            "+log agg": lambda: with_pglab("aggregate", telemetry=False),
            "+log every": lambda: with_pglab("full", telemetry=False, every=True),
            "+log full": lambda: with_pglab("full", telemetry=False),
            "default": lambda: with_pglab("full"),
            "default agg": lambda: with_pglab("aggregate"),
        }
    else:
        arms = DEFAULT
        runs |= {
            "full": lambda: with_pglab("full"),
            "no -P": lambda: with_pglab("aggregate", progress=False),
            "aggregate": lambda: with_pglab("aggregate"),
        }
    if args.arms:
        keep = {a.strip() for a in args.arms.split(",")} | {"bare"}
        runs = {k: v for k, v in runs.items() if k in keep}
    summarise(ratios_by_round(runs, args.rounds, executor), arms, args)


def summarise(
    results: dict[str, list[float]], arms: dict[str, tuple[str, str]], args: argparse.Namespace
) -> None:
    """Each arm's ratio to bare pgbench in the same round (median, 95% CI), and to the arm it
    builds on in the same round; then the figures' lines."""
    rounds = len(results["bare"])
    print(
        f"{rounds} rounds, {args.script}, {args.clients} clients, {args.duration} s each; "
        f"median TPS bare {statistics.median(results['bare']):.1f}"
    )
    ratio: dict[str, float] = {}
    for name, tps in results.items():
        if name == "bare":
            continue
        within = [a / b for a, b in zip(tps, results["bare"], strict=True)]
        ratio[name] = statistics.median(within)
        low, high = bootstrap_median_ci(within)
        what, base = arms[name]
        extra = ""
        if base != "bare" and base in results:
            over = [a / b - 1 for a, b in zip(tps, results[base], strict=True)]
            lo, hi = bootstrap_median_ci(over)
            extra = f"; over {base}: {statistics.median(over):+.2%} (95% CI {lo:+.2%}–{hi:+.2%})"
        print(
            f"  {name:12s} {ratio[name]:.4f} (95% CI {low:.4f}–{high:.4f}; median TPS "
            f"{statistics.median(tps):.1f}){extra}  {what}"
        )
    figures = {
        "full": "overhead_ratio_full",
        "no -P": "overhead_ratio_no_progress",
        "aggregate": "overhead_ratio",
        "default": "overhead_ratio_default",
        "default agg": "overhead_ratio_default_agg",
    }
    for arm, figure in figures.items():
        if arm in ratio:
            print(f"{figure}: {ratio[arm]:.4f}")


def pooled_rounds(logs: list[str]) -> dict[str, list[float]]:
    """The rounds of earlier outputs, together: only rounds where every arm ran, and only the
    arms that every output has."""
    results: dict[str, list[float]] = {}
    every: set[str] | None = None
    for log in logs:
        rounds: dict[int, dict[str, float]] = {}
        for line in Path(log).read_text().splitlines():
            m = re.match(r"round (\d+) (.+?)\s+([0-9.]+) tps$", line)
            if m:
                rounds.setdefault(int(m[1]), {})[m[2]] = float(m[3])
        arms = set().union(*rounds.values()) if rounds else set()
        every = arms if every is None else every & arms
        for found in rounds.values():
            if set(found) == arms:
                for name, tps in found.items():
                    results.setdefault(name, []).append(tps)
    results = {name: tps for name, tps in results.items() if name in (every or set())}
    if not results.get("bare") or any(len(v) != len(results["bare"]) for v in results.values()):
        raise SystemExit("the logs' rounds do not have the same arms, or have no bare round")
    return results


def ratios_by_round(
    runs: dict[str, Callable[[], float]], rounds: int, executor: Executor
) -> dict[str, list[float]]:
    """Every arm once per round, the order rotated so that each leads in turn."""
    names = list(runs)
    results: dict[str, list[float]] = {name: [] for name in names}
    try:
        for i in range(rounds):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                tps = runs[name]()
                results[name].append(tps)
                print(f"round {i + 1} {name:12s} {tps:10.1f} tps", flush=True)
    finally:
        executor.close()
    return results


if __name__ == "__main__":
    main()
