"""latency_hist: buckets, merging, and percentiles within the bucket precision of exact ones."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pglab.pgbench.latency import (
    GROWTH,
    bucket_of,
    bucket_upper_us,
    bucket_value_us,
    histogram,
    merge,
    nearest_rank,
    percentile,
)

HALF_BUCKET = math.sqrt(GROWTH) - 1  # 1.55 %: the most the middle of a bucket is off


def test_zero_and_sub_microsecond_have_their_own_bucket() -> None:
    assert bucket_of(0) == bucket_of(0.4) == 0
    assert bucket_value_us(0) == 0.0
    assert bucket_of(1) == 1
    assert bucket_upper_us(1) == 1.0


def test_buckets_grow_by_a_32nd() -> None:
    assert GROWTH == 1 + 1 / 32
    for b in range(2, 900):
        assert bucket_upper_us(b) / bucket_upper_us(b - 1) == pytest.approx(GROWTH)
    assert bucket_of(1000) == 226  # 1 + ceil(ln(1000) / ln(33/32)) = 1 + ceil(224.5)
    assert bucket_of(1_000_000) == 450  # 1 s: 224 buckets above 1 ms


@given(st.floats(min_value=1, max_value=1e10))
def test_a_value_lies_in_its_bucket(us: float) -> None:
    b = bucket_of(us)
    assert bucket_upper_us(b - 1) < us * (1 + 1e-9)
    assert us <= bucket_upper_us(b) * (1 + 1e-9)
    assert abs(bucket_value_us(b) / us - 1) <= HALF_BUCKET + 1e-9


@given(st.integers(min_value=0, max_value=10**9), st.integers(min_value=0, max_value=10**9))
def test_buckets_keep_order(a: int, b: int) -> None:
    if a <= b:
        assert bucket_of(a) <= bucket_of(b)


def test_bucket_upper_rejects_negative() -> None:
    with pytest.raises(ValueError):
        bucket_upper_us(-1)


def test_histogram_counts_values() -> None:
    assert histogram([]) == ()
    assert histogram([0, 1000, 1000, 1001, 5000]) == ((0, 1), (226, 3), (278, 1))


def test_merge_of_parts_is_the_histogram_of_the_whole() -> None:
    rng = random.Random(1)
    values = [int(rng.lognormvariate(7, 1)) for _ in range(10_000)]
    parts = [histogram(values[i : i + 777]) for i in range(0, len(values), 777)]
    assert merge(parts) == histogram(values)
    assert merge([]) == ()


def test_nearest_rank() -> None:
    assert nearest_rank(50, 400) == 200
    assert nearest_rank(99, 400) == 396
    assert nearest_rank(100, 7) == 7
    assert nearest_rank(0, 7) == 1
    assert nearest_rank(99.9, 41000) == 40959  # 99.9 * 41000 / 100 is 40959.00000000001


def exact_percentile_ms(values_us: list[float], q: float) -> float:
    ordered = sorted(values_us)
    return ordered[nearest_rank(q, len(ordered)) - 1] / 1000


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(
    "draw",
    [
        lambda rng: rng.lognormvariate(7, 0.6),  # around 1 ms
        lambda rng: rng.expovariate(1 / 300),  # mostly under 1 ms, some at 0
        lambda rng: float(int(rng.paretovariate(1.2) * 100)),  # whole µs, a heavy tail
        lambda rng: rng.uniform(5_000, 2_000_000),  # 5 ms to 2 s
    ],
    ids=["lognormal", "exponential", "pareto-int", "uniform"],
)
def test_percentiles_are_within_half_a_bucket_of_exact(
    seed: int, draw: Callable[[random.Random], float]
) -> None:
    rng = random.Random(seed)
    values = [draw(rng) for _ in range(20_000)]
    hist = histogram(values)
    for q in (0, 1, 10, 50, 90, 95, 99, 99.9, 100):
        exact = exact_percentile_ms(values, q)
        got = percentile(hist, q)
        if exact < 0.001:  # under 1 µs: the zero bucket
            assert got == 0.0
        else:
            assert abs(got / exact - 1) <= HALF_BUCKET + 1e-9, (q, exact, got)


def test_percentiles_agree_with_statistics_quantiles() -> None:
    rng = random.Random(42)
    values = [rng.lognormvariate(7, 0.8) for _ in range(50_000)]
    hist = histogram(values)
    cuts = statistics.quantiles(values, n=100, method="inclusive")  # interpolated p1..p99
    for q in (5, 25, 50, 75, 95, 99):
        exact_ms = cuts[q - 1] / 1000
        assert percentile(hist, q) == pytest.approx(exact_ms, rel=1 / 32)


def test_percentile_of_a_merged_window() -> None:
    rng = random.Random(5)
    seconds = [[rng.lognormvariate(6 + s / 10, 0.5) for _ in range(3000)] for s in range(10)]
    window = merge(histogram(values) for values in seconds)
    everything = [v for values in seconds for v in values]
    for q in (50, 95, 99):
        exact = exact_percentile_ms(everything, q)
        assert abs(percentile(window, q) / exact - 1) <= HALF_BUCKET + 1e-9


def test_percentile_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="empty"):
        percentile((), 50)
    with pytest.raises(ValueError, match="between 0 and 100"):
        percentile(((1, 1),), 101)
    with pytest.raises(ValueError, match="between 0 and 100"):
        percentile(((1, 1),), -1)
