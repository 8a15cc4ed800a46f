"""The profiler's cost: the same point with ``[profile]`` on and off, interleaved, paired.

Each pair runs the point once with perf sampling every CPU at the given frequency (99 Hz by
default, stacks unwound from an 8 kB copy of each sample's user stack) and once without, through
the same executor (telemetry on in both, ``latency_log = "aggregate"``), alternating which goes
first. The ratio of each pair (on / off) cancels the drift of a shared machine; the last line is
``profile_overhead_ratio: X (95% CI a–b)``, X the median of the pair ratios and the interval a
bootstrap of that median (target X ≥ 0.98). perf's stop and fold after the phase are not in the
TPS (they come after pgbench ends); they are printed as seconds per phase.

    .venv/bin/python bench/profile_overhead.py [--pairs 10] [--duration 10] [--clients 2]
        [--script select-only] [--frequency 99]
"""

from __future__ import annotations

import statistics
from dataclasses import replace

from _common import bootstrap_median_ci, open_lab, parser, point_doc, run_pairs, scratch_store

from pglab.campaign import parse as campaign
from pglab.planning.plan import make_plan
from pglab.postgres.sources import resolve
from pglab.profile import folded
from pglab.records import RunResult
from pglab.run.executor import Executor


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--frequency", type=int, default=99)
    args = ap.parse_args()

    lab = open_lab(args)
    doc = point_doc("bench-profile", args, latency_log="aggregate")
    (off,) = make_plan(campaign.parse(doc, default_name="bench-profile")).points
    on = replace(off, profile=replace(off.profile, enabled=True, frequency=args.frequency))
    binaries = resolve(on.server, lab)
    executor = Executor(lab, store=scratch_store())
    folding: list[float] = []

    def has_profile(name: str, result: RunResult) -> None:
        if name == "on":
            assert folded.TABLE in result.phases[-1].tables, set(result.phases[-1].tables)
            folding.append(result.timings.profile_s or 0.0)

    try:
        tps = run_pairs(executor, binaries, {"on": on, "off": off}, args.pairs, has_profile)
    finally:
        executor.close()
    ratios = [a / b for a, b in zip(tps["on"], tps["off"], strict=True)]
    low, high = bootstrap_median_ci(ratios)
    print(
        f"median tps: profile on {statistics.median(tps['on']):.1f}, "
        f"off {statistics.median(tps['off']):.1f} ({args.pairs} pairs, {args.script}, "
        f"{args.clients} clients, {args.duration} s, {args.frequency} Hz); perf stopped and "
        f"folded in {statistics.median(folding):.2f} s a run"
    )
    print(f"profile_overhead_ratio: {statistics.median(ratios):.4f} (95% CI {low:.4f}–{high:.4f})")


if __name__ == "__main__":
    main()
