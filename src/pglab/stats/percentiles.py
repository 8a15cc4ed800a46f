"""The 95% interval of a percentile estimated from a random sample: the distribution-free one of
order statistics. Of ``n`` values drawn at random, the rank of the population's ``q``-th
percentile is binomial, so the interval runs between the ranks ``n·p ∓ z·√(n·p·(1−p))``
(p = q/100), the upper one a rank further (the value at or above it). ``pgbench/sampling``
reads the two ranks off a sampled latency histogram, whose buckets are all a value is known by.
"""

from __future__ import annotations

import math

Z95 = 1.959964


def rank_interval(n: int, q: float, z: float = Z95) -> tuple[float, float]:
    """The percentiles (0–100) of the sample whose values bound the population's ``q``-th
    percentile with the confidence of ``z`` (95% by default), for a sample of ``n`` values."""
    if n == 0:
        raise ValueError("interval of an empty sample")
    p = q / 100
    half = z * math.sqrt(n * p * (1 - p))
    return 100 * max(0.0, n * p - half) / n, 100 * min(float(n), n * p + half + 1) / n
