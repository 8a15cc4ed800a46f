"""Statistics on synthetic data with known answers (seeded, so every run is the same)."""

from __future__ import annotations

import numpy as np
import pytest

from pglab.stats import steady
from pglab.stats.summary import summarize_point


def noisy(mean: float, sd: float, n: int, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, sd, n))


def test_mser_finds_a_warm_up_and_leaves_a_steady_series_alone() -> None:
    warm = [1000.0 + 200 * i for i in range(10)]  # 10 s climbing to 3,000 tps
    settled = noisy(3000, 30, 50, seed=1)
    start = steady.steady_start(warm + settled)
    assert 10 <= start <= 15
    assert steady.steady_start(noisy(3000, 30, 60, seed=2)) <= 5
    assert steady.steady_start(warm + settled, declared=7) == 7
    assert steady.steady_start([1.0, 2.0, 3.0]) == 0  # too short to tell


def test_drift_is_found_when_there_is_one() -> None:
    rising = [3000 * (1 + 0.002 * i) + e for i, e in enumerate(noisy(0, 10, 60, seed=3))]
    d = steady.drift(rising)
    assert d.significant and d.change_pct == pytest.approx(11.8, abs=1.0)
    flat = steady.drift(noisy(3000, 30, 60, seed=4))
    assert not flat.significant
    assert steady.drift([1.0, 2.0]) is None and steady.drift([5.0, 5.0, 5.0]) is None


def test_point_ci_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    hits = 0
    for seed in range(400):
        s = summarize_point(noisy(1000, 50, 5, seed=seed))
        hits += s.ci_low <= 1000 <= s.ci_high
    assert 0.92 <= hits / 400 <= 0.98


def test_point_summary_flags_instability_and_needs_two_values_for_a_ci() -> None:
    s = summarize_point([100.0, 100.0, 130.0, 70.0])
    assert s.n == 4 and s.median == 100.0 and s.mean == 100.0 and s.unstable
    one = summarize_point([42.0])
    assert one.ci_low is None and one.cv_pct is None and not one.unstable
    with pytest.raises(ValueError):
        summarize_point([])


def test_run_metrics_trim_the_warm_up_of_each_phase() -> None:
    from pglab.campaign.spec import DatasetSpec, PhaseSpec, RunSpec, Script, ServerSpec
    from pglab.records import PgbenchReport, PhaseResult, ProgressSample
    from pglab.run.metrics import run_metrics
    from pglab.workloads.work import PgbenchWork

    tps = [500.0, 1000.0, 1500.0, 2000.0, 2500.0] + noisy(3000, 20, 55, seed=30)
    report = PgbenchReport(tps=sum(tps) / len(tps), transactions=int(sum(tps)))
    phase = PhaseResult(
        name="main", iteration=1, measured=True, started_at=0.0, elapsed_s=60.0, argv=(),
        report=report, progress=tuple(ProgressSample(t=i + 1.0, tps=v) for i, v in enumerate(tps)),
    )  # fmt: skip
    main = PhaseSpec("main", PgbenchWork(scripts=(Script("tpcb-like"),)))
    spec = RunSpec(campaign="c", variant="v", axes=(), server=ServerSpec(),
                   dataset=DatasetSpec(), phases=(main,))  # fmt: skip
    m = run_metrics(spec, [phase])
    assert m.value("tps") == pytest.approx(report.tps) and m.value("tps") < 2900  # pgbench's
    assert m.value("tps_steady") == pytest.approx(3000, abs=15)  # the ramp is trimmed
    assert m.value("tps_steady", "main") == m.value("tps_steady")
    assert abs(m.value("drift_pct", "main")) > 2  # the ramp shows as a trend over the phase
    short = PhaseResult(name="main", iteration=1, measured=True, started_at=0.0, elapsed_s=5.0,
                        argv=(), report=report, progress=phase.progress[:5])  # fmt: skip
    assert run_metrics(spec, [short]).get("tps_steady") is None  # too short to say
