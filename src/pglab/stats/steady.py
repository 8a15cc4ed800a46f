"""A series settling and drifting: where a per-second TPS series' warm-up ends, and the linear
trend over a series. Pure functions on plain numbers:

- ``steady_start``: the warm-up to trim from a per-second TPS series, by MSER-5 (White 1997: the
  truncation point that minimises the standard error of the remaining mean, on batch means of 5)
  unless the campaign declares one;
- ``drift``: a linear trend over a series (within a run, or across repeats in run order),
  reported as % change over the series with its p-value (``run/metrics`` uses it within a phase,
  ``analysis/run_warnings`` across runs).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pglab.stats import significance as dist
from pglab.stats.significance import ALPHA

_TINY = 1.0e-20  # as scipy.stats.linregress: r = ±1 gives a large t, not a division by 0


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
    slope, p_value = _line(x, np.asarray(values, dtype=float))
    mean = statistics.fmean(values)
    change = slope * (len(values) - 1) / mean * 100 if mean else 0.0
    return Drift(change_pct=float(change), p_value=float(p_value))


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The least-squares slope of ``y`` on ``x`` and its two-sided p-value, as
    ``scipy.stats.linregress`` computes them (without importing scipy.stats: see
    ``significance``; ``tests/unit/test_significance.py`` holds them equal). At least 3
    values, ``x`` not all equal."""
    ssxm, ssxym, _, ssym = np.cov(x, y, bias=True).flat
    if ssxm == 0.0 or ssym == 0.0:
        r = np.float64(np.nan if ssxym == 0 else 0.0)
    else:
        r = min(max(ssxym / np.sqrt(ssxm * ssym), -1.0), 1.0)
    df = len(x) - 2
    t = r * np.sqrt(df / ((1.0 - r + _TINY) * (1.0 + r + _TINY)))
    return float(ssxym / ssxm), float(2 * dist.t.sf(np.abs(t), df))
