"""Does ``pglab history`` find a change point where there is one, and only there?

Simulated series of executions (``--executions`` of ``--runs`` runs each), log figure =
execution effect + run noise: ``--noise`` % per run and ``--between`` % per execution (what a
night shares: a reboot, the machine's state). Each judged by ``analysis.history.change_points``
as ``pglab history`` judges it. Prints, with 95% Wilson intervals:

- ``history_false_alarm_rate``: the share of A/A series (no change) with any change point,
  promised ≤ 0.05;
- ``history_power_<S>pct``: the share of series with a step of −S % after the middle execution
  in which a change point is found within one execution of it, for S = 5, 10, 20;
- ``history_delta_coverage_10pct``: how often the 95% CI of the change found covers the true
  −10 % (the comparison's own promise: ≈ 0.95);
- ``history_extra_alarms_20pct``: the share of series with one −20 % step in which more change
  points than that one are found (false ones beside a true one), promised ≤ 0.05;
- ``history_power_predicted_<S>pct``: what ``analysis.history.step_power`` (the estimate behind
  "too few executions to find a change of S% at this noise (N needed)") predicts of the power
  above, at the executions' noise (√(between² + noise²/runs)): close to it when the estimate
  holds.

    .venv/bin/python bench/history.py [--series 400] [--executions 12] [--runs 3]
"""

from __future__ import annotations

import math

import numpy as np
from _common import parser, wilson

from pglab.analysis.history import ChangePoint, change_points, step_power


def series(
    rng: np.random.Generator, n: int, runs: int, noise: float, between: float, step_pct: float
) -> list[list[float]]:
    out = []
    for i in range(n):
        level = math.log1p(step_pct / 100) if i >= n // 2 else 0.0
        level += rng.normal(0, between / 100)
        out.append(list(1000 * np.exp(level + rng.normal(0, noise / 100, runs))))
    return out


def main() -> None:
    p = parser(__doc__, point=False)
    p.add_argument("--series", type=int, default=400, help="simulated series per case")
    p.add_argument("--executions", type=int, default=12)
    p.add_argument("--runs", type=int, default=3, help="runs per execution")
    p.add_argument("--noise", type=float, default=3.0, help="run-to-run noise, %%")
    p.add_argument("--between", type=float, default=1.0, help="execution-to-execution noise, %%")
    a = p.parse_args()
    rng = np.random.default_rng(7)
    n, half = a.executions, a.executions // 2

    def judged(step: float) -> list[list[ChangePoint]]:
        return [
            change_points(series(rng, n, a.runs, a.noise, a.between, step), seed=s)
            for s in range(a.series)
        ]

    def line(name: str, k: int) -> None:
        low, high = wilson(k, a.series)
        print(f"{name}: {k / a.series:.4f} (95% CI {low:.4f}–{high:.4f}, {a.series} series)")

    print(
        f"{n} executions × {a.runs} runs, {a.noise:g}% run noise, {a.between:g}% between "
        f"executions, step after execution {half}"
    )
    line("history_false_alarm_rate", sum(bool(found) for found in judged(0.0)))
    covered = 0
    for step in (-5.0, -10.0, -20.0):
        found = judged(step)
        near = [next((c for c in f if abs(c.index - half) <= 1), None) for f in found]
        line(f"history_power_{int(-step)}pct", sum(c is not None for c in near))
        sigma = math.sqrt(a.between**2 + a.noise**2 / a.runs)
        predicted = step_power(n, sigma, -step)
        print(f"history_power_predicted_{int(-step)}pct: {predicted:.4f}")
        if step == -20.0:
            line("history_extra_alarms_20pct", sum(len(f) > 1 for f in found))
        if step == -10.0:
            covered = sum(
                c is not None
                and c.comparison.ci_low is not None
                and c.comparison.ci_high is not None
                and c.comparison.ci_low <= -10.0 <= c.comparison.ci_high
                for c in near
            )
            hits = max(1, sum(c is not None for c in near))
            print(f"history_delta_coverage_10pct: {covered / hits:.4f} (of {hits} found)")


if __name__ == "__main__":
    main()
