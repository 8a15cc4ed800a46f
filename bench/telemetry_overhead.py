"""Telemetry's cost: the same point with telemetry on and off, interleaved, paired.

Each pair runs the point once with pglab's default telemetry (statistics views and OS every
second, wait events at 10 Hz, buffer cache every 5 s, checkpoints from the log) and once with
``[telemetry] enabled = false``, through the same executor (dataset reset, server start, pgbench
with ``latency_log = "aggregate"`` in both so that only the telemetry differs), alternating
which goes first. The ratio of each pair (on / off) cancels the drift of a shared machine; the
last line is ``telemetry_overhead_ratio: X (95% CI a–b)``, X the median of the pair ratios and the
interval a bootstrap of that median (target X ≥ 0.99).

    .venv/bin/python bench/telemetry_overhead.py [--pairs 10] [--duration 10] [--clients 2]
        [--script select-only]
"""

from __future__ import annotations

import statistics
from dataclasses import replace

from _common import bootstrap_median_ci, open_lab, parser, point_doc, run_pairs, scratch_store

from pglab.campaign import parse as campaign
from pglab.planning.plan import make_plan
from pglab.postgres.sources import resolve
from pglab.records import RunResult
from pglab.run.executor import Executor


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--pairs", type=int, default=10)
    args = ap.parse_args()

    lab = open_lab(args)
    doc = point_doc("bench-telemetry", args, latency_log="aggregate")
    (on,) = make_plan(campaign.parse(doc, default_name="bench-telemetry")).points
    off = replace(on, telemetry=replace(on.telemetry, enabled=False))
    binaries = resolve(on.server, lab)
    executor = Executor(lab, store=scratch_store())

    def has_telemetry(name: str, result: RunResult) -> None:
        if name == "on":
            kinds = set(result.phases[-1].tables)
            assert {"pg.database", "waits", "os.cpu"} <= kinds, kinds

    try:
        tps = run_pairs(executor, binaries, {"on": on, "off": off}, args.pairs, has_telemetry)
    finally:
        executor.close()
    ratios = [a / b for a, b in zip(tps["on"], tps["off"], strict=True)]
    low, high = bootstrap_median_ci(ratios)
    print(
        f"median tps: telemetry on {statistics.median(tps['on']):.1f}, "
        f"off {statistics.median(tps['off']):.1f} ({args.pairs} pairs, {args.script}, "
        f"{args.clients} clients, {args.duration} s)"
    )
    print(
        f"telemetry_overhead_ratio: {statistics.median(ratios):.4f} (95% CI {low:.4f}–{high:.4f})"
    )


if __name__ == "__main__":
    main()
