"""A log-scale latency histogram: counts per bucket, mergeable, percentiles within ~1.6 %.

Latencies are in microseconds. Bucket 0 holds everything under 1 µs (pgbench logs whole
microseconds, so in practice exactly 0). Bucket ``b >= 1`` holds the latencies in
``(GROWTH ** (b - 2), GROWTH ** (b - 1)]`` µs, with ``GROWTH = 1 + 1/32``: each bucket is 3.1 %
wider than the one before, so a value known only by its bucket is known to within 3.1 % of its
upper bound, and to within 1.6 % of the bucket's geometric middle, which ``percentile`` returns.

A histogram is a tuple of ``(bucket, count)`` pairs in bucket order, as stored in
``LatencySecond.histogram``; 224 buckets cover 1 ms to 1 s, however many latencies they hold.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

GROWTH = 1.0 + 1.0 / 32
_LOG_GROWTH = math.log(GROWTH)

Histogram = tuple[tuple[int, int], ...]


def bucket_of(us: float) -> int:
    """The bucket of a latency of ``us`` microseconds (0 for anything under 1 µs)."""
    if us < 1:
        return 0
    return 1 + math.ceil(math.log(us) / _LOG_GROWTH - 1e-9)


def bucket_upper_us(bucket: int) -> float:
    """The largest latency (µs) that falls into ``bucket``; 1.0 for the zero bucket."""
    if bucket < 0:
        raise ValueError(f"bucket must be >= 0, not {bucket}")
    return GROWTH ** (bucket - 1) if bucket >= 1 else 1.0


def bucket_value_us(bucket: int) -> float:
    """The value that stands for a whole bucket: its geometric middle, 0 for the zero bucket."""
    if bucket == 0:
        return 0.0
    return bucket_upper_us(bucket) / math.sqrt(GROWTH)


def histogram(values_us: Iterable[float]) -> Histogram:
    """The histogram of some latencies in microseconds."""
    counts: Counter[int] = Counter()
    for value, n in Counter(values_us).items():
        counts[bucket_of(value)] += n
    return tuple(sorted(counts.items()))


def merge(hists: Iterable[Histogram]) -> Histogram:
    """One histogram holding the counts of all ``hists`` (for instance of a window of seconds)."""
    counts: Counter[int] = Counter()
    for hist in hists:
        for bucket, n in hist:
            counts[bucket] += n
    return tuple(sorted(counts.items()))


def scaled(hist: Histogram, factor: float) -> Histogram:
    """The histogram with each count multiplied by ``factor`` and rounded (at least 1 where
    there was one): a sample's histogram weighted up to the transactions it stands for, so that
    it merges with others in proportion (a log of every transaction and a 1-in-8 sample)."""
    if factor == 1:
        return hist
    return tuple((bucket, max(1, round(n * factor))) for bucket, n in hist if n)


def nearest_rank(q: float, n: int) -> int:
    """The 1-based rank of the ``q``-th percentile (``q`` in 0..100) among ``n`` sorted values.

    ``ceil(q/100 * n)``, at least 1, computed so that float rounding cannot add one
    (``99.9 * 41000 / 100`` is 40959.00000000001 in floats, and its rank is 40959).
    """
    return max(1, math.ceil(q * n / 100 * (1 - 1e-12)))


def percentile(hist: Histogram, q: float) -> float:
    """The ``q``-th percentile (``q`` in 0..100, so 99 for p99) in milliseconds.

    Nearest rank: the bucket holding the ``ceil(q/100 * n)``-th smallest latency, given as
    its geometric middle, so within 1.6 % of the exact nearest-rank percentile.
    """
    return bucket_value_us(bucket_at(hist, q)) / 1000


def bucket_at(hist: Histogram, q: float) -> int:
    """The bucket holding the ``q``-th percentile (nearest rank) of a histogram."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be between 0 and 100, not {q}")
    total = sum(n for _, n in hist)
    if total == 0:
        raise ValueError("percentile of an empty histogram")
    rank = nearest_rank(q, total)
    seen = 0
    for bucket, n in hist:
        seen += n
        if seen >= rank:
            return bucket
    raise AssertionError("unreachable: rank exceeds the histogram's total")
