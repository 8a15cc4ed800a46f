"""Change points in a series of executions (``analysis/history.py``), on synthetic series with a
known answer: a shift found where it is and measured, none in series without one."""

from __future__ import annotations

import numpy as np
import pytest

from pglab.analysis import history
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


# -- what a series without a change point could have found (issue 52) -----------------------


def test_nine_executions_are_the_fewest_in_which_a_clean_step_is_found() -> None:
    """MIN_EXECUTIONS is the permutation test's own floor: a 2x step against 1% noise, half
    the executions before it, is found 4 times in 5 from 9 executions on, rarely below."""
    rng = np.random.default_rng(5)

    def found(n: int) -> float:
        hits = 0
        for t in range(20):
            values = [[(1.0 if i < n // 2 else 2.0) * (1 + 0.01 * rng.standard_normal())]
                      for i in range(n)]  # fmt: skip
            hits += bool(change_points(values, seed=t))
        return hits / 20

    assert history.MIN_EXECUTIONS == 9
    assert found(7) <= 0.2 and found(8) < 0.8 <= found(9)


def test_the_critical_values_are_those_of_random_series() -> None:
    for n in (9, 16):
        assert history.critical(n) == pytest.approx(history.CRITICAL[n], abs=0.01)


def test_three_executions_are_too_few_to_say_one_level() -> None:
    """Issue 52: `pglab history` over 3 executions said "one level throughout" where the
    permutation test could not have found any change."""
    r = history.reach(series(3, {}, cv=0.03), 10.0)
    assert r.executions == 3 and r.noise_source == "between executions"
    assert r.needed is not None and r.needed >= history.MIN_EXECUTIONS and not r.enough
    text = r.text()
    assert "too few executions to find a change of 10% at this noise" in text, text
    assert f"({r.needed} needed; 3 here" in text and "one level" not in text


def test_enough_quiet_executions_say_one_level() -> None:
    r = history.reach(series(20, {}, cv=0.01, runs=3), 10.0)
    assert r.enough and r.text() == "no change point: one level throughout"
    # the same series asked about a 1% change: too noisy for that
    small = history.reach(series(20, {}, cv=0.01, runs=3), 1.0)
    assert not small.enough and (small.needed is None or small.needed > 20)


def test_the_executions_needed_follow_the_noise() -> None:
    """At 5% noise a 10% step in the middle needs about 24 executions (bench-style simulation
    of the detector: 73% found at 24, 57% at 20); noisier needs more, quieter fewer."""
    at5 = history.executions_needed(5.0, 10.0)
    assert at5 is not None and 18 <= at5 <= 30, at5
    quiet = history.executions_needed(1.0, 10.0)
    assert quiet == history.MIN_EXECUTIONS
    assert history.executions_needed(20.0, 10.0) is None  # more than MAX_EXECUTIONS
    assert history.step_power(6, 0.0, 50.0) == 0.0  # below the floor whatever the step


def test_one_execution_measures_its_noise_within_or_assumes_it() -> None:
    within = history.reach([[100.0, 110.0, 90.0]], 10.0)
    assert within.noise_source == "within executions" and within.noise_pct > 0
    assumed = history.reach([[100.0]], 10.0)
    assert assumed.noise_source == "assumed" and not assumed.enough
