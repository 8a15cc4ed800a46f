"""Whether a difference in TPS is real, and whether the runs could have told.

Pure functions on plain numbers, tested on synthetic samples with known answers and, over
thousands of simulated campaigns, by ``bench/verdicts.py --simulate``.

The test. TPS differences are multiplicative (a setting makes a server 8% faster, not 300 TPS
faster) and a point's repeats are few (3–10), so comparisons are made on log TPS: the Δ% shown is
the back-transformed difference of mean log TPS, with its 95% CI. Which test measures it depends on
how the runs were made (``differences``): an interleaved campaign's comparisons are **blocked**
(within-round log ratios, whatever drift a round shares cancelling, their variance pooled over
the campaign's comparisons unless one is noisier than the rest); runs that do not pair (a
sequential-order campaign, points of different campaigns) get **Welch's t-test** (no
equal-variance assumption: a setting may change the spread as well as the level). Unlike a rank
test neither has a discreteness floor: the exact two-sided Mann-Whitney test cannot go below
2/70 = 0.029 with 4 runs a side, so after Holm's correction over 5 comparisons no difference,
however large, could be called significant. The Mann-Whitney p-value is kept beside it
(``p_rank``) as a robustness check.

The family. All comparisons of one campaign (every point against the baseline variant's point at
the same matrix coordinates) are corrected together by Holm's step-down method, which keeps the
probability of any false "+"/"−" in the campaign at or below ``ALPHA`` whatever the dependence
between the comparisons (they share the baseline's runs).

The verdict. "+"/"−" when the Holm-adjusted p is below ``ALPHA``. Otherwise "=" when the
difference is shown to lie within ±``equivalence`` % (``[analysis] equivalence``, by default the
effect of interest): two one-sided tests at ALPHA / m each, i.e. the 1 − 2·ALPHA/m interval inside
the margin — "no regression beyond 2%" as a claim with the same 5% error as a "+". Otherwise
"~" only if it *could* have found a difference of the campaign's effect of interest (``effect``,
10% unless ``[analysis] effect`` says otherwise): the smallest effect it detects with 80% power at
its own noise, runs and number of comparisons (at Holm's strictest level, ALPHA / m) must be
within that effect. Otherwise it says "?", with the reason and the runs per point that would
resolve the effect. The same power calculation checks a campaign's design before it runs
(``design``), from the noise measured on similar points before, or ``DEFAULT_CV_PCT``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from pglab.campaign.spec import DEFAULT_EFFECT_PCT
from pglab.stats import differences, sequential
from pglab.stats.differences import Difference, Method, Rounds, Verdict
from pglab.stats.power import (
    MAX_RUNS,
    POWER,
    design_power,
    detectable_pct,
    fewest,
    holm,
    power,
    runs_needed,
)
from pglab.stats.ranks import mann_whitney_p
from pglab.stats.significance import ALPHA

MIN_INTERVAL_RUNS = 3  # fewer runs on a side: a t interval too wide to say much (a warning)
DEFAULT_CV_PCT = 5.0  # the noise assumed before anything similar was measured (2-core VMs: 5-9%)


# each test in words (a report's legend, `pglab show`'s footnote); docs/concepts/statistics.md
METHOD_TEXT = {
    "blocked": "blocked (within-round ratios, variance pooled over the comparisons)",
    "paired": "paired (within-round ratios, the comparison's own variance)",
    "welch": "Welch (runs that do not pair)",
    "sequential": "anytime-valid sequence of within-round ratios (repeats = auto)",
}


def methods_text(comparisons: Sequence[Comparison | None]) -> str:
    """The tests behind ``comparisons``, each with how many used it, and why the runs allowed
    them (``Comparison.why``, after the test): "11 blocked (…), 1 paired (…) — runs of one
    interleaved campaign (x) pair by round"."""
    used: dict[str, int] = {}
    why: dict[str, None] = {}
    for c in comparisons:
        if c is not None and c.p_value is not None:
            used[c.method] = used.get(c.method, 0) + 1
        if c is not None and c.why:
            why[c.why.split(": ", 1)[-1]] = None
    text = ", ".join(f"{n} {METHOD_TEXT[m]}" for m, n in used.items()) or "no test"
    return f"{text} — {'; '.join(why)}" if why else text


@dataclass(frozen=True)
class Comparison:
    """``other`` against ``baseline``; Δ% is the ratio of geometric means minus one."""

    delta_pct: float
    ci_low: float | None  # 95% CI of delta_pct (Welch, log scale), None below 2 runs a side
    ci_high: float | None
    p_value: float | None  # two-sided Welch p on log TPS
    verdict: Verdict
    reason: str = ""  # why "?", or what "~" rules out, in words
    p_holm: float | None = None  # p_value after Holm's correction over the family
    p_rank: float | None = None  # two-sided Mann-Whitney U p (robustness check, not the verdict)
    n_a: int = 0
    n_b: int = 0
    comparisons: int = 1  # size of the Holm family
    noise_pct: float | None = None  # pooled SD of log TPS, in % (≈ CV)
    detectable_pct: float | None = None  # smallest effect found with POWER at ALPHA / m
    effect_pct: float = DEFAULT_EFFECT_PCT  # the effect of interest the verdict was judged on
    runs_needed: int | None = None  # runs per point for POWER at effect_pct (None: > MAX_RUNS)
    method: Method = "welch"
    equivalence_pct: float | None = None  # the margin "=" was judged on
    why: str = ""  # the test and why the runs allowed it (analysis.engine)
    warnings: tuple[str, ...] = ()  # what the reader should know of this answer


def beyond_spread(c: Comparison, spread_pct: float | None) -> Comparison:
    """``c`` held to the spread of identical builds (``postgres.build_spread``; None: A and B
    are not two builds, or it was never measured here): a "+" stands only when its 95% CI lies
    above +spread, a "-" when below -spread; one whose interval reaches into ±spread could be
    the builds' own difference, not the source's, and becomes "?" with the reason. Every other
    verdict is kept, the spread named in its warnings."""
    if spread_pct is None or spread_pct <= 0:
        return c
    said = f"within the spread of identical builds: ±{spread_pct:.1f}%"
    if c.verdict not in ("+", "-"):
        return replace(c, warnings=(*c.warnings, f"two builds compared; {said}"))
    beyond = (
        (c.ci_low is not None and c.ci_low > spread_pct)
        if c.verdict == "+"
        else (c.ci_high is not None and c.ci_high < -spread_pct)
    )
    if beyond:
        return replace(
            c, warnings=(*c.warnings, f"beyond the spread of identical builds (±{spread_pct:.1f}%)")
        )
    ci = ""
    if c.ci_low is not None and c.ci_high is not None:
        ci = f" [{c.ci_low:+.1f}, {c.ci_high:+.1f}]"
    return replace(
        c,
        verdict="?",
        reason=f"{said} (Δ {c.delta_pct:+.1f}%{ci}: "
        f"'{c.verdict}' without it; more runs narrow the interval)",
    )


def _runs_needed_like(w: Difference, n0: float, comparisons: int, effect_pct: float) -> int | None:
    """``runs_needed`` for a comparison already measured: its own standard error and Welch
    degrees of freedom scaled to n runs a side (SE ∝ 1/√n, df ∝ n − 1), so that at its own number
    of runs the answer agrees with its verdict."""

    def enough(n: int) -> bool:
        se = w.se * math.sqrt(n0 / n)
        df = max(1.0, w.df * (n - 1) / max(n0 - 1, 1.0))
        return power(se, df, effect_pct, ALPHA / max(1, comparisons)) >= POWER

    return fewest(enough)


def _needs_text(n: int | None, effect_pct: float) -> str:
    if n is None:
        return (
            f"more than {MAX_RUNS} runs per point would be needed for ±{effect_pct:g}%: "
            "reduce the noise first"
        )
    return f"needs ≥ {n} runs per point for ±{effect_pct:g}%"


def _sides_text(n_a: int, n_b: int) -> str:
    return f"{n_a} runs a side" if n_a == n_b else f"{n_a} and {n_b} runs"


def _measure(baseline: Sequence[float], other: Sequence[float], d: Difference | None) -> Comparison:
    """Δ%, CI, raw p-values and noise of one comparison, before any judging."""
    a = np.log(np.asarray(baseline, dtype=float))
    b = np.log(np.asarray(other, dtype=float))
    if d is None:
        delta = math.expm1(float(b.mean() - a.mean())) * 100
        return Comparison(delta, None, None, None, "?", n_a=len(a), n_b=len(b))
    low, high = d.interval(1 - ALPHA)
    rank = mann_whitney_p(b, a)
    return Comparison(
        math.expm1(d.diff) * 100,
        math.expm1(low) * 100,
        math.expm1(high) * 100,
        d.p(),
        "?",
        p_rank=rank,
        n_a=len(a),
        n_b=len(b),
        noise_pct=d.noise * 100,
        method=d.method,
    )


def _judge(
    c: Comparison,
    d: Difference | None,
    p_holm: float | None,
    m: int,
    effect_pct: float,
    margin: float,
) -> Comparison:
    c = replace(c, comparisons=m, effect_pct=effect_pct, p_holm=p_holm, equivalence_pct=margin)
    if d is None or c.noise_pct is None or p_holm is None:
        n = runs_needed(m, DEFAULT_CV_PCT, effect_pct)
        why = (
            "no test with fewer than 2 runs a side"
            if min(c.n_a, c.n_b) < 2
            else "no test: too few rounds to measure this comparison's noise alone (two give one "
            "degree of freedom, an interval of any width) or no spread at all between them"
        )
        return replace(
            c,
            verdict="?",
            runs_needed=n,
            reason=(
                f"{_sides_text(c.n_a, c.n_b)}: {why}; "
                f"{_needs_text(n, effect_pct)} at {DEFAULT_CV_PCT:g}% noise"
            ),
        )
    found = detectable_pct(d.se, d.df, ALPHA / m)
    n0 = d.rounds or (c.n_a + c.n_b) / 2
    needed = _runs_needed_like(d, n0, m, effect_pct)
    c = replace(c, detectable_pct=found, runs_needed=needed)
    if p_holm < ALPHA:  # then the raw p is too, and the CI excludes 0
        return replace(c, verdict="+" if c.delta_pct > 0 else "-", reason="")
    family = f" with {m} comparisons" if m > 1 else ""
    within = _equivalent(d, m, margin)
    if within:
        return replace(c, verdict="=", reason=within + family)
    if found <= effect_pct:
        return replace(
            c,
            verdict="~",
            reason=(
                f"not significant; {_sides_text(c.n_a, c.n_b)} at {c.noise_pct:.1f}% noise{family} "
                f"would have found ±{found:.1f}% or more"
            ),
        )
    beyond = "no effect" if math.isinf(found) else f"only effects beyond ±{found:.0f}%"
    return replace(
        c,
        verdict="?",
        reason=(
            f"{_sides_text(c.n_a, c.n_b)} at {c.noise_pct:.1f}% noise{family}: {beyond} can be "
            f"told from noise; {_needs_text(needed, effect_pct)}"
        ),
    )


def _equivalent(d: Difference, m: int, margin: float) -> str:
    """Why the difference is shown to lie within ±``margin`` % ("" when it is not): two one-sided
    tests at ALPHA / m each (Bonferroni over the family), i.e. the 1 − 2·ALPHA/m interval inside
    the margin."""
    level = 1 - 2 * ALPHA / m
    low, high = (math.expm1(x) * 100 for x in d.interval(level))
    if not (-margin < low and high < margin):
        return ""
    return (
        f"no difference beyond ±{margin:g}%: its {level:.0%} interval "
        f"[{low:+.1f}, {high:+.1f}] lies within (two one-sided tests)"
    )


def judged(
    samples: Sequence[tuple[Sequence[float], Sequence[float]]],
    diffs: Sequence[Difference | None],
    effect_pct: float,
    equivalence_pct: float | None,
) -> list[Comparison]:
    """Comparisons (``samples``: each side's TPS) measured by ``diffs``, Holm-corrected
    together, each judged."""
    measured = [_measure(a, b, d) for (a, b), d in zip(samples, diffs, strict=True)]
    tested = [i for i, d in enumerate(diffs) if d is not None]
    adjusted = dict(zip(tested, holm([measured[i].p_value or 0.0 for i in tested]), strict=True))
    m = max(1, len(tested))
    margin = effect_pct if equivalence_pct is None else equivalence_pct
    return [
        _judge(c, diffs[i], adjusted.get(i), m, effect_pct, margin) for i, c in enumerate(measured)
    ]


def compare_family(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
    effect_pct: float = DEFAULT_EFFECT_PCT,
    equivalence_pct: float | None = None,
) -> list[Comparison]:
    """Each (baseline, other) pair of TPS samples compared by Welch's test (runs that do not
    pair: points of different campaigns, a sequential-order campaign), Holm-corrected over all
    of them (the family is every pair given: one campaign's comparisons, or one ``pglab
    compare``). ``equivalence_pct``: the margin of "=" (default: ``effect_pct``)."""
    diffs = [
        differences.welch(np.log(np.asarray(a, float)), np.log(np.asarray(b, float)))
        if len(a) >= 2 and len(b) >= 2
        else None
        for a, b in pairs
    ]
    return judged(pairs, diffs, effect_pct, equivalence_pct)


def compare_rounds(
    pairs: Sequence[tuple[Rounds, Rounds]],
    effect_pct: float = DEFAULT_EFFECT_PCT,
    equivalence_pct: float | None = None,
    groups: Sequence[Hashable] | None = None,
) -> list[Comparison]:
    """The comparisons of an interleaved campaign, each side's TPS by round: the blocked
    analysis of ``differences`` (paired within rounds, variance pooled over the family, Welch
    where rounds do not pair), Holm-corrected over all of them. ``groups``: which comparisons
    share a baseline point."""
    diffs = differences.measure(pairs, groups)
    samples = [(list(a.values()), list(b.values())) for a, b in pairs]
    return judged(samples, diffs, effect_pct, equivalence_pct)


def compare(
    baseline: Sequence[float], other: Sequence[float], effect_pct: float = DEFAULT_EFFECT_PCT
) -> Comparison:
    """One comparison on its own (a family of one)."""
    return compare_family([(baseline, other)], effect_pct)[0]


def compare_sequential(
    pairs: Sequence[tuple[Rounds, Rounds]],
    effect_pct: float = DEFAULT_EFFECT_PCT,
    precision: float | None = None,
    equivalence_pct: float | None = None,
) -> list[Comparison]:
    """The comparisons of a campaign run with ``repeats = "auto"``, each side's figure by
    round: judged on the anytime-valid confidence sequence of the within-round log ratios its
    rounds stopped on (``pglab.stats.sequential.look``: paired by round, as the fixed design),
    at ALPHA / m each (Bonferroni), not on a fixed test, whose p-values do not hold once the
    number of runs depends on the data; the verdicts in the fixed design's words ("=" within
    ±``equivalence_pct``, default the effect). ``p_value`` is 1/E (E the e-value against no
    difference), valid at any stopping time; ``p_holm`` is m/E."""
    m = max(1, sum(1 for a, b in pairs if len(a) and len(b)))
    alpha = sequential.family_alpha(m)
    margin = effect_pct if equivalence_pct is None else equivalence_pct
    family = f" with {m} comparisons" if m > 1 else ""
    out = []
    for a, b in pairs:
        lk = sequential.look(a, b, alpha, effect_pct, precision, equivalence_pct)
        sides = f"{lk.rounds} rounds paired" if lk.rounds else _sides_text(lk.n_a, lk.n_b)
        if lk.verdict == "=":
            reason = (
                f"no difference beyond ±{margin:g}%: its anytime-valid interval lies "
                f"within (sequential, {sides}{family})"
            )
        elif lk.verdict == "~":
            reason = (
                f"not significant; its anytime-valid interval ({sides}{family}) would have "
                f"found ±{lk.detectable_pct:.1f}% or more"
            )
        elif lk.verdict == "?" and lk.ci_low is None:
            reason = f"{sides}: too few for an anytime-valid interval (sequential)"
        elif lk.verdict == "?":
            reason = (
                f"{sides}: the anytime-valid interval still reaches ±{effect_pct:g}% "
                "(sequential: raise [sequential] max, or reduce the noise)"
            )
        else:
            reason = f"sequential, {sides}"
        out.append(
            Comparison(
                lk.delta_pct,
                lk.ci_low,
                lk.ci_high,
                min(1.0, 1 / lk.e_value),
                lk.verdict,
                reason,
                p_holm=min(1.0, m / lk.e_value),
                n_a=lk.n_a,
                n_b=lk.n_b,
                comparisons=m,
                noise_pct=lk.noise_pct,
                detectable_pct=lk.detectable_pct,
                effect_pct=effect_pct,
                method="sequential",
                equivalence_pct=margin,
            )
        )
    return out


@dataclass(frozen=True)
class Design:
    """Can a campaign's planned repeats and comparisons reach a verdict on ``effect_pct``?"""

    repeats: int
    comparisons: int
    noise_pct: float
    noise_source: str  # where the noise figure comes from, in words
    effect_pct: float
    power: float  # probability that one comparison finds a true effect of effect_pct
    runs_needed: int | None

    @property
    def enough(self) -> bool:
        return self.power >= POWER

    def text(self) -> str:
        can = "resolve" if self.enough else "cannot resolve"
        head = (
            f"{self.repeats} repeat(s) {can} the {self.comparisons} comparison(s) with the "
            f"baseline: a ±{self.effect_pct:g}% effect is found with probability "
            f"{self.power:.0%} (noise {self.noise_pct:.1f}%, {self.noise_source})"
        )
        if self.enough:
            return head
        if self.runs_needed is None:
            return f"{head}; more than {MAX_RUNS} repeats would be needed: reduce the noise first"
        return f"{head}; {self.runs_needed} repeats find it with {POWER:.0%}"


def design(
    repeats: int,
    comparisons: int,
    noise_pct: float,
    noise_source: str,
    effect_pct: float = DEFAULT_EFFECT_PCT,
    blocked: bool = True,
) -> Design:
    """``blocked``: the campaign runs interleaved (its comparisons get the blocked analysis)."""
    return Design(
        repeats,
        comparisons,
        noise_pct,
        noise_source,
        effect_pct,
        design_power(repeats, comparisons, noise_pct, effect_pct, blocked=blocked),
        runs_needed(comparisons, noise_pct, effect_pct, blocked),
    )
