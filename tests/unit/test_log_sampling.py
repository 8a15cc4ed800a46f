"""The per-transaction log's sampling rate chosen by pglab, and the 95% interval of a percentile
estimated from a sample (``pgbench/sampling.py``)."""

from __future__ import annotations

import math
import random

import pytest

from pglab.pgbench import latency, sampling


@pytest.mark.parametrize(
    ("tps", "rate"),
    [(None, None), (500.0, None), (10_000.0, None), (10_001.0, 0.999), (118_000.0, 0.0847),
     (25_000.0, 0.4), (3_000_000.0, 0.00333)],
)  # fmt: skip
def test_the_rate_keeps_the_log_at_the_budget_rounded_down(tps, rate) -> None:
    assert sampling.auto_rate(tps) == rate
    if rate is not None:  # never above the budget, and within 1% of it
        assert 0.99 * sampling.LINE_BUDGET <= rate * tps <= sampling.LINE_BUDGET


def test_the_interval_covers_the_population_percentile_about_95_times_in_100() -> None:
    """200 samples of 2,000 log-normal latencies: the 95% interval of p50, p95 and p99 holds
    the population's percentile in at least 92% of them (the binomial spread of 200 trials at
    95% is ±3 points; the interval runs to its buckets' edges, so it errs on the wide side)."""
    rnd = random.Random(11)
    truth = {q: math.exp(7 + 0.5 * z) / 1000 for q, z in ((50, 0.0), (95, 1.6449), (99, 2.3263))}
    covered = dict.fromkeys(truth, 0)
    for _ in range(200):
        hist = latency.histogram(rnd.lognormvariate(7, 0.5) for _ in range(2000))
        for q, value in truth.items():
            lo, hi = sampling.interval(hist, q)
            covered[q] += lo <= value <= hi
    assert all(n >= 184 for n in covered.values()), covered


def test_the_interval_narrows_as_the_sample_grows() -> None:
    rnd = random.Random(3)
    widths = []
    for n in (1_000, 10_000, 100_000):
        hist = latency.histogram(rnd.lognormvariate(7, 0.5) for _ in range(n))
        lo, hi = sampling.interval(hist, 99)
        assert lo <= latency.percentile(hist, 99) <= hi
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]
    with pytest.raises(ValueError, match="empty"):
        sampling.interval((), 99)
