"""A point's spread over its repeats. Pure functions on plain numbers (no store, no server),
tested on synthetic data with a known answer:

- ``summarize_point``: median, mean, 95% CI of the mean (Student t), CV; unstable above 10%.

Whether two points differ is ``verdicts``' question.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from pglab.stats import significance as dist

UNSTABLE_CV_PCT = 10.0


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


@lru_cache(maxsize=256)
def _t975(df: int) -> float:
    """Student t's 97.5% quantile (a scipy call costs a millisecond; a campaign asks few dfs)."""
    return float(dist.t.ppf(0.975, df))


def summarize_point(values: Sequence[float]) -> PointSummary:
    """Spread of one point's repeats; the CI needs two values."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    mean = statistics.fmean(values)
    if n < 2:
        return PointSummary(n, values[0], mean, None, None, None)
    sd = statistics.stdev(values)
    half = _t975(n - 1) * sd / math.sqrt(n)
    cv = sd / mean * 100 if mean else None
    return PointSummary(n, statistics.median(values), mean, mean - half, mean + half, cv)
