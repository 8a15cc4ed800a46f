"""The per-transaction log's sampling rate chosen by pglab, and the 95% interval of a percentile
estimated from a sample (``pgbench/sampling.py``)."""

from __future__ import annotations

import math
import random

import pytest

from pglab.analysis import tidy
from pglab.pgbench import latency, sampling
from pglab.records import PgbenchReport
from pglab.report import model as report_model
from pglab.rows import PhaseRow, StoredRun


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


def _run(rid: int, latencies_us: list[float], rate: float | None) -> StoredRun:
    """A run of one measured phase whose log's histogram holds ``latencies_us`` (one second)."""
    argv = ["pgbench", "-l"] + ([f"--sampling-rate={rate:g}"] if rate else [])
    phase = PhaseRow(idx=0, name="main", iteration=1, measured=True, started_at=0.0,
                     elapsed_s=1.0, argv=argv, tps=None, transactions=None, failed=None,
                     latency_avg_ms=None, latency_stddev_ms=None, initial_connection_ms=None,
                     report=PgbenchReport(tps=0.0, transactions=0), output="")  # fmt: skip
    hist = [list(b) for b in latency.histogram(latencies_us)]
    return StoredRun(
        id=rid, campaign="c", run_key=f"p/{rid}", point_key="p", variant="v", label="p",
        repeat=rid, status="ok", tps=None, started_at=0.0, finished_at=1.0, error=None,
        metrics={}, axes={}, phases=(phase,),
        series={"0": {"latency": {"columns": ["t", "histogram"], "rows": [[0, hist]]}}},
    )  # fmt: skip


def test_a_sampled_run_weighs_as_the_transactions_it_stands_for() -> None:
    # a first run that logged all of its 1,000 transactions (all at 1 ms) and a later one that
    # logged a 1-in-10 sample of its 1,000 (all at 10 ms): half the point's transactions took
    # 10 ms, so its median is 1 ms and its p90 10 ms. Unweighted, the sample's 100 lines would
    # count as 100 transactions and p90 would be 1 ms.
    full, sampled = _run(1, [1000.0] * 1000, None), _run(2, [10000.0] * 100, 0.1)
    assert tidy.sampling_rate(full.phases[0]) is None
    assert tidy.sampling_rate(sampled.phases[0]) == 0.1
    assert sum(n for _, n in tidy.phase_histogram(sampled, 0)) == 1000
    got = tidy.percentiles([full, sampled], {1: [0], 2: [0]})
    assert got[50] == pytest.approx(1.0, rel=0.02)
    assert got[90] == pytest.approx(10.0, rel=0.02)
    assert report_model._histogram(sampled) == tidy.phase_histogram(sampled, 0)


def test_scaled_counts_stay_whole_and_never_vanish() -> None:
    hist = ((3, 1), (4, 7), (5, 0))
    assert latency.scaled(hist, 1.0) is hist
    assert latency.scaled(hist, 1 / 0.3) == ((3, 3), (4, 23))
    assert latency.scaled(hist, 0.01) == ((3, 1), (4, 1))
