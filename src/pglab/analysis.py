"""Statistics over stored runs: steady state, per-point spread, and whether a difference is real.

Pure functions on plain numbers (no store, no server), so that each is tested on synthetic data
with a known answer:

- ``steady_start``: the warm-up to trim from a per-second TPS series, by MSER-5 (White 1997: the
  truncation point that minimises the standard error of the remaining mean, on batch means of 5)
  unless the campaign declares one;
- ``drift``: a linear trend over a series (within a run, or across repeats in run order),
  reported as % change over the series with its p-value;
- ``summarize_point``: median, mean, 95% CI of the mean (Student t), CV; unstable above 10%.

Whether two points differ is ``verdicts``' question.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

UNSTABLE_CV_PCT = 10.0
ALPHA = 0.05


def _stats():
    """scipy.stats, imported on first use: it takes a second to import, which every ``pglab``
    command would pay (``--help``, ``ls``) and ``pglab report`` pays while its charts draw."""
    from scipy import stats

    return stats


def steady_start(tps: Sequence[float], declared: int | None = None, batch: int = 5) -> int:
    """Index of the first steady second: ``declared`` when given, else MSER-``batch``."""
    n = len(tps)
    if declared is not None:
        return min(max(0, declared), n)
    k = n // batch
    if k < 4:
        return 0  # too short to tell warm-up from noise
    means = np.asarray(tps[: k * batch], dtype=float).reshape(k, batch).mean(axis=1)
    best, best_d = math.inf, 0
    for d in range(k // 2 + 1):  # never trim more than half
        rest = means[d:]
        score = float(((rest - rest.mean()) ** 2).sum()) / (len(rest) ** 2)
        if score < best - 1e-12:
            best, best_d = score, d
    return best_d * batch


@dataclass(frozen=True)
class Drift:
    change_pct: float  # fitted change from the first to the last point, % of the mean
    p_value: float

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA and abs(self.change_pct) >= 2.0


def drift(values: Sequence[float]) -> Drift | None:
    """A linear trend through ``values`` (in time order); None with fewer than 3 values."""
    if len(values) < 3 or len(set(values)) < 2:
        return None
    x = np.arange(len(values), dtype=float)
    fit = _stats().linregress(x, np.asarray(values, dtype=float))
    mean = statistics.fmean(values)
    change = fit.slope * (len(values) - 1) / mean * 100 if mean else 0.0
    return Drift(change_pct=float(change), p_value=float(fit.pvalue))


@dataclass(frozen=True)
class PointSummary:
    n: int
    median: float
    mean: float
    ci_low: float | None
    ci_high: float | None
    cv_pct: float | None

    @property
    def unstable(self) -> bool:
        return self.cv_pct is not None and self.cv_pct > UNSTABLE_CV_PCT


def summarize_point(values: Sequence[float]) -> PointSummary:
    """Spread of one point's repeats; the CI needs two values."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    mean = statistics.fmean(values)
    if n < 2:
        return PointSummary(n, values[0], mean, None, None, None)
    sd = statistics.stdev(values)
    half = float(_stats().t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    cv = sd / mean * 100 if mean else None
    return PointSummary(n, statistics.median(values), mean, mean - half, mean + half, cv)
