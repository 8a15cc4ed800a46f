"""``repeats = "auto"``: the anytime-valid confidence sequence and the stopping rule, on synthetic
data with known answers (seeded, so every run is the same), and its error rate under the very
optional stopping it allows, by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pglab.analysis import points, verdicts
from pglab.campaign.parse import parse
from pglab.errors import CampaignError
from pglab.planning.plan import make_plan
from pglab.rows import RunRow
from pglab.stats import sequential as seq
from pglab.stats.sequential import Point, SequentialSpec, look, undecided


def test_the_e_value_is_goenen_s_bayes_factor() -> None:
    """The closed form against its definition: the noncentral t density of t mixed over the
    prior on the standardized effect, over the central t density."""
    stats = pytest.importorskip("scipy.stats")
    integrate = pytest.importorskip("scipy.integrate")
    (g,) = seq.G_GRID
    for t, nu, n_eff in ((2.0, 6, 2.0), (4.0, 10, 3.0), (1.0, 4, 1.5)):

        def density(d: float, t: float = t, nu: int = nu, n_eff: float = n_eff) -> float:
            return float(stats.nct.pdf(t, nu, d * math.sqrt(n_eff)) * stats.norm.pdf(d, 0, g**0.5))

        mixed = integrate.quad(density, -60, 60, limit=400)[0]
        assert seq.e_value(t, nu, n_eff) == pytest.approx(mixed / stats.t.pdf(t, nu), rel=1e-6)


def test_the_interval_is_wider_than_a_fixed_one_and_never_bounded_at_2_runs() -> None:
    # t* where the e-value reaches 1/alpha: above the fixed t quantile, shrinking with n
    stars = [seq.t_star(2.0 * n - 2, n / 2, 0.05) for n in (3, 5, 10, 20)]
    assert stars == sorted(stars, reverse=True)
    assert 3.0 < stars[-1] < 4.0 and stars[0] < 6.0
    assert seq.t_star(2.0, 1.0, 0.05) == math.inf  # 2 runs a side: no e-value reaches 20


def by_round(values: object) -> dict[int, float]:
    return dict(enumerate(values, 1))  # type: ignore[call-overload]


def test_a_known_5_percent_effect_is_found_and_a_a_is_called_no_difference() -> None:
    """Paired by round, in the fixed design's words: "−", and "=" (no difference beyond the
    effect) where the sequence once said "~"."""
    rng = np.random.default_rng(5)
    base = by_round(2000 * np.exp(rng.normal(0, 0.008, 5)))
    slower = by_round(1900 * np.exp(rng.normal(0, 0.008, 5)))
    same = by_round(2000 * np.exp(rng.normal(0, 0.008, 5)))
    b = look(base, slower, 0.025, effect_pct=5)
    assert b.verdict == "-" and b.decided and b.ci_low < -5 < b.ci_high < 0 and b.rounds == 5
    a = look(base, same, 0.025, effect_pct=5)
    assert a.verdict == "=" and a.decided and -5 < a.ci_low < 0 < a.ci_high < 5
    # a margin narrower than the interval: not "=", but it would have found ±5%: "~", going on
    near = look(base, same, 0.025, effect_pct=5, equivalence_pct=1)
    assert near.verdict == "~" and not near.decided and near.detectable_pct < 5
    # what every round shares cancels: a drift of ±20% between rounds changes nothing
    drift = by_round(np.exp(rng.normal(0, 0.2, 5)))
    moved = {r: v * drift[r] for r, v in base.items()}, {r: v * drift[r] for r, v in slower.items()}
    assert look(*moved, 0.025, effect_pct=5).ci_low == pytest.approx(b.ci_low)
    # rounds only one side ran are left out of the pairing
    assert look({**base, 9: 1.0}, slower, 0.025, effect_pct=5).ci_low == pytest.approx(b.ci_low)
    # a precision asked for: not decided until the interval is that narrow
    assert not look(base, same, 0.025, effect_pct=5, precision=0.1).decided
    assert look(base, same, 0.025, effect_pct=5, precision=5).decided


def test_too_few_runs_or_too_much_noise_is_not_decided() -> None:
    two = look({1: 1000.0, 2: 1010.0}, {1: 900.0, 2: 905.0}, 0.05, effect_pct=10)
    assert two.verdict == "?" and not two.decided and two.ci_low is None
    rng = np.random.default_rng(9)
    noisy = look(by_round(1000 * np.exp(rng.normal(0, 0.1, 5))),
                 by_round(1000 * np.exp(rng.normal(0, 0.1, 5))), 0.05, effect_pct=5)  # fmt: skip
    assert noisy.verdict == "?" and not noisy.decided and noisy.half_width > 5


def _points(coords: tuple[str, ...] = ("c=1",)) -> list[Point]:
    return [Point(f"{v}{c}", None if v == "A" else f"A{c}") for c in coords for v in "ABC"]


def test_a_point_stops_when_every_comparison_it_takes_part_in_is_decided() -> None:
    spec = SequentialSpec(min=3, max=10)
    pts = _points()
    rng = np.random.default_rng(3)
    tps = {
        "Ac=1": by_round(2000 * np.exp(rng.normal(0, 0.005, 4))),
        "Bc=1": by_round(1900 * np.exp(rng.normal(0, 0.005, 4))),  # −5%: decided "−"
        "Cc=1": by_round(2000 * np.exp(rng.normal(0, 0.05, 4))),  # 5% noise: undecided
    }
    left = undecided(pts, tps, spec, effect_pct=5)
    assert left == {"Ac=1", "Cc=1"}  # the baseline goes on for C's sake
    tps["Cc=1"] = by_round(2000 * np.exp(rng.normal(0, 0.004, 4)))
    assert undecided(pts, tps, spec, effect_pct=5) == set()  # C "=": no difference beyond 5%
    # below min nothing stops, however clear
    short = {k: {r: v for r, v in x.items() if r <= 2} for k, x in tps.items()}
    assert undecided(pts, short, spec, effect_pct=5) == {p.key for p in pts}
    # a point with nothing to compare: decided at min without a precision, else by it
    alone = [Point("x")]
    values = {"x": {1: 1000.0, 2: 1030.0, 3: 970.0}}
    assert undecided(alone, values, SequentialSpec(3, 10), 5) == set()
    assert undecided(alone, values, SequentialSpec(3, 10, precision=1), 5) == {"x"}


def _replay(effects: tuple[float, ...], cv: float, spec: SequentialSpec,
            rng: np.random.Generator, effect_pct: float) -> tuple[list[str], int]:  # fmt: skip
    """One campaign judged round by round as the executor does; its verdicts and runs."""
    pts = [Point(str(i), "0" if i else None) for i in range(len(effects) + 1)]
    shift = np.log1p(np.array([0.0, *effects]))
    data = 1000 * np.exp(shift[:, None] + rng.normal(0, cv, (len(pts), spec.max)))
    runs = {p.key: 0 for p in pts}
    active = set(runs)
    for _ in range(spec.max):
        for key in active:
            runs[key] += 1
        tps = {p.key: by_round(data[int(p.key), : runs[p.key]]) for p in pts}
        active = undecided(pts, tps, spec, effect_pct)
        if not active:
            break
    found = verdicts.compare_sequential([(tps["0"], tps[p.key]) for p in pts[1:]], effect_pct)
    return [c.verdict for c in found], sum(runs.values())


def test_a_a_false_positives_stay_below_5_percent_under_optional_stopping() -> None:
    """300 simulated A/A campaigns (a baseline and 3 identical variants, 3–15 rounds, looked at
    after every round): the share with any "+" or "−" must stay at or below α; a fixed Welch
    test looked at after every round and stopped at the first "significant" is shown to fail
    the same check (the reason for the confidence sequence)."""
    rng = np.random.default_rng(17)
    spec = SequentialSpec(min=3, max=15)
    hits = 0
    for _ in range(300):
        found, _ = _replay((0.0, 0.0, 0.0), 0.03, spec, rng, effect_pct=1.0)
        hits += any(v in "+-" for v in found)
    assert hits / 300 <= 0.05
    stats = pytest.importorskip("scipy.stats")
    data = rng.normal(0, 0.03, (300, 4, 15))  # log TPS
    peeked = np.zeros(300, dtype=bool)
    for n in range(3, 16):  # Welch's test at α/3 per comparison after every round
        p = stats.ttest_ind(data[:, 1:, :n], data[:, :1, :n], axis=2, equal_var=False).pvalue
        peeked |= (p < verdicts.ALPHA / 3).any(axis=1)
    peeking = int(peeked.sum())
    assert peeking / 300 > 0.08  # naive peeking inflates the rate well past 5%


def test_clear_cases_stop_early_and_keep_the_fixed_design_s_verdicts() -> None:
    rng = np.random.default_rng(23)
    spec = SequentialSpec(min=3, max=10)
    used, agree = 0, 0
    for _ in range(40):
        found, runs = _replay((0.0, -0.05), 0.008, spec, rng, effect_pct=5)
        used += runs
        agree += found == ["=", "-"]
    assert used / (40 * 3 * 10) < 0.5  # more than half the runs of 10 fixed repeats saved
    assert agree >= 38


def test_repeats_auto_in_a_campaign_file_and_its_plan() -> None:
    doc = {"repeats": "auto", "sequential": {"min": 2, "max": 6}, "variants": {"a": {}, "b": {}}}
    camp = parse(doc, "auto")
    assert camp.sequential == SequentialSpec(2, 6) and camp.repeats == 6
    plan = make_plan(camp)
    assert len(plan.runs) == 12 and [r.repeat for r in plan.runs[:4]] == [1, 1, 2, 2]
    with pytest.raises(CampaignError) as err:
        parse({"repeats": "auto", "order": "sequential", "sequential": {"min": 7, "max": 6}}, "x")
    assert "min = 7 is above max = 6" in str(err.value)
    assert 'needs order = "interleaved"' in str(err.value)
    with pytest.raises(CampaignError, match='applies to repeats = "auto" only'):
        parse({"repeats": 3, "sequential": {"max": 6}}, "x")
    with pytest.raises(CampaignError, match='expected an integer ≥ 1, or "auto"'):
        parse({"repeats": "many"}, "x")


def test_stored_auto_campaigns_are_judged_sequentially() -> None:
    def row(i: int, variant: str, tps: float) -> RunRow:
        repeat = (i + 1) // 2  # a round each pair of runs
        return RunRow(i, "c", f"k{i}", variant, variant, variant, repeat, "ok", tps, 0.0, 0.0,
                      None)  # fmt: skip

    runs = [row(1, "a", 1000), row(2, "b", 950), row(3, "a", 1001), row(4, "b", 951),
            row(5, "a", 999), row(6, "b", 949), row(7, "a", 1000), row(8, "b", 950)]  # fmt: skip
    camp = {"spec": {"repeats": "auto", "variants": {"a": {}, "b": {}},
                     "sequential": {"max": 8}, "analysis": {"effect": 5}}}  # fmt: skip
    (b,) = [r.comparison for r in points.campaign_rows(runs, camp) if r.comparison]
    fixed = points.point_rows(runs, "a", 5.0, blocked=True)[1].comparison
    assert b.verdict == "-" and "sequential" in b.reason and "pair by round" in b.why
    # the same pairing as the fixed design's, its interval wider: the price of looking often
    assert fixed is not None and b.ci_low < fixed.ci_low and b.ci_high > fixed.ci_high


def test_the_plan_expects_fewer_runs_when_the_noise_is_low() -> None:
    spec = SequentialSpec(3, 20)
    quiet = seq.expected_runs(spec, groups=2, variants=3, noise_pct=0.5, effect_pct=10)
    loud = seq.expected_runs(spec, groups=2, variants=3, noise_pct=8, effect_pct=10)
    # 6 points × 4 rounds: paired by round, 3 rounds give the ratios 2 degrees of freedom, too
    # few for an anytime-valid interval at α/4 (the e-value's bound, (1 + 3g)^(ν/2) = 31,
    # is below 1/α = 80); 4 rounds decide a quiet point
    assert seq.t_star(2.0, 3.0, 0.05 / 4) == math.inf > seq.t_star(3.0, 4.0, 0.05 / 4)
    assert quiet == pytest.approx(24, abs=1)
    assert quiet < loud <= 6 * 20


def test_the_example_is_an_auto_campaign() -> None:
    from pathlib import Path

    from pglab.campaign.parse import load

    camp = load(Path(__file__).parents[2] / "examples" / "auto-repeats.toml")
    assert camp.sequential == SequentialSpec(3, 10) and camp.effect_pct == 5
    assert [v.name for v in camp.variants] == ["base", "same", "slower"]


def test_a_stored_campaign_is_replayed_paired_by_round() -> None:
    """``bench/sequential.py --campaign`` pairs a campaign's runs by round, as the engine does
    (``engine.in_common_rounds``): a round where one side's run failed is left out of both
    sides (by list position, round 3 of one side stood beside round 2 of the other)."""
    from pglab.analysis import engine

    def run(i: int, variant: str, repeat: int, tps: float | None) -> RunRow:
        status = "ok" if tps is not None else "failed"
        return RunRow(i, "c", f"{variant}/{repeat}", variant, variant, variant, repeat, status,
                      tps, 0.0, 1.0, None)  # fmt: skip

    runs = [run(1, "a", 1, 100.0), run(2, "b", 1, 110.0), run(3, "a", 2, 50.0),
            run(4, "b", 2, None), run(5, "a", 3, 100.0), run(6, "b", 3, 111.0)]  # fmt: skip
    a = points.tps_by_round([r for r in runs if r.variant == "a"], "tps")
    b = points.tps_by_round([r for r in runs if r.variant == "b"], "tps")
    assert engine.in_common_rounds([a, b]) == [[100.0, 100.0], [110.0, 111.0]]
    assert engine.in_common_rounds([a]) == [[100.0, 50.0, 100.0]]
    assert engine.in_common_rounds([]) == []
