"""Change points in a series of executions (``analysis/history.py``), on synthetic series with a
known answer: a shift found where it is and measured, none in series without one."""

from __future__ import annotations

import numpy as np
import pytest

from pglab.analysis.history import change_points, higher_is_better, regression_pct


def series(n: int, shifts: dict[int, float], cv: float = 0.03, runs: int = 3, seed: int = 1):
    rng = np.random.default_rng(seed)
    level, out = 1000.0, []
    for i in range(n):
        level *= shifts.get(i, 1.0)
        out.append(list(level * np.exp(rng.normal(0, cv, runs))))
    return out


def test_a_shift_is_found_where_it_happened_and_measured() -> None:
    (cp,) = change_points(series(10, {5: 0.8}))
    assert cp.index == 5 and cp.p_value < 0.01
    c = cp.comparison
    assert c.verdict == "-" and c.ci_low is not None and c.ci_high is not None
    assert c.ci_low < -20 < c.ci_high < 0  # Δ% of the runs after against those before
    assert regression_pct(cp, "tps") == pytest.approx(-c.delta_pct)
    assert regression_pct(cp, "latency_avg_ms") == pytest.approx(c.delta_pct)


def test_two_shifts_are_two_change_points_each_measured_between_its_neighbours() -> None:
    found = change_points(series(20, {5: 0.8, 12: 1.25}))
    assert [cp.index for cp in found] == [5, 12]
    assert found[0].comparison.delta_pct < -15 and found[1].comparison.delta_pct > 15
    # the second is measured on executions 5..11 against 12..19 (each one observation), not
    # on the whole series
    assert found[1].comparison.n_a == 7 and found[1].comparison.n_b == 8


def test_series_without_a_shift_mostly_have_none() -> None:
    # the permutation test keeps false alarms near alpha (bench/history.py measures the rate)
    alarms = sum(bool(change_points(series(10, {}, cv=0.05, runs=2, seed=s), seed=s))
                 for s in range(60))  # fmt: skip
    assert alarms <= 8  # 5% of 60 is 3; 8 is beyond the 99.5th percentile of Binomial(60, .05)


def test_too_short_a_series_has_no_change_point() -> None:
    assert change_points(series(3, {2: 0.5})) == []


def test_an_execution_without_values_is_refused() -> None:
    with pytest.raises(ValueError, match="positive value"):
        change_points([[1.0, 2.0], [], [1.0], [2.0]])


def test_which_way_is_worse() -> None:
    assert higher_is_better("tps") and higher_is_better("nopm")
    assert not higher_is_better("latency_avg_ms") and not higher_is_better("latency_p95_ms")


def test_a_short_piece_that_a_permutation_test_passes_by_chance_is_not_a_change() -> None:
    """A CI run's series (one run per execution, a −41% step at the sixth): the last two
    executions, a little higher, passed the piece's permutation test (p 0.017 of few
    arrangements) with a Δ% CI of [−32, +69]; the comparison does not agree, so it is no
    change point."""
    tps = [419.1817885922841, 421.3118656545773, 393.6082416530272, 425.3604398974382,
           414.1942417651559, 243.688985487398, 246.52066524111004, 237.85881328438106,
           248.166895817246, 271.20125974559556]  # fmt: skip
    (cp,) = change_points([[v] for v in tps])
    assert cp.index == 5 and cp.comparison.verdict == "-"
