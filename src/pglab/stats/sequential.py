"""Sequential repeats (``repeats = "auto"``): when a point has run enough.

Runs go in interleaved rounds; after each round every comparison (a point against its reference
point: the baseline variant's at the same matrix coordinates, or the compared axis's first
value) is judged on an **anytime-valid confidence sequence** for the mean **within-round** log
ratio d_r = log B_r − log A_r (paired by round, as the fixed design's blocked analysis: what a
round shares cancels), and a point stops when every comparison it takes part in is decided. A
confidence sequence covers the true difference at *every* round at once with probability ≥ 1 −
α, so looking after each round and stopping whenever one likes — on a verdict, on a precision
reached, or for any other reason — cannot raise the error rates.

The sequence is the inversion of the scale-invariant Bayes-factor e-process of the two-sample t
test ("safe t-test"): with a normal prior N(0, g) on the standardized effect δ = Δ/σ and the
right-Haar prior on the common location and scale, the Bayes factor of δ ≠ 0 against δ = 0 has
the closed form of Gönen, Johnson, Lu & Westfall (2005, The American Statistician 59(3), "The
Bayesian two-sample t test"):

    BF_g(t) = (1 + n_δ g)^(-1/2) · [(1 + t²/ν) / (1 + t²/(ν (1 + n_δ g)))]^((ν+1)/2)

with t the pooled two-sample t statistic, ν = n₁ + n₂ − 2 and n_δ = n₁n₂/(n₁ + n₂); on the
within-round ratios (and a point's own mean, ``look_alone``) the one-sample case: t of their
mean, ν = n − 1, n_δ = n. Being the
likelihood ratio of the maximal invariant under location-scale changes (Berger, Pericchi &
Varshavsky 1998), it is a nonnegative martingale under the null for every σ, hence an e-process
(Pérez-Ortiz, Lardy, de Heide & Grünwald 2024, Annals of Statistics 52(4), "E-statistics, group
invariance and anytime-valid testing"; Wang & Ramdas 2025, Sequential Analysis 44(1),
"Anytime-valid t-tests and confidence sequences for Gaussian means with unknown variance").
By Ville's inequality P(sup_n E_n ≥ 1/α) ≤ α under the null. An equal-weight mixture over a
grid of g is again an e-process; ``G_GRID`` holds a single g = 10 (a prior SD of about 3
standard deviations of the run-to-run noise, since a setting may move TPS by many times its
noise), which is the mixture's special case of one component. Testing every shifted null Δ = Δ₀ and
keeping the Δ₀ not rejected gives the confidence sequence Δ̂ ± t*·SE, t* the |t| at which the
mixture reaches 1/α (Lai 1976, Annals of Statistics 4(2), "On confidence sequences").

A campaign's m comparisons each get level α/m (Bonferroni), so every verdict of the campaign
holds together with probability ≥ 1 − α however the rounds went. The verdicts read off the
sequence, in the fixed design's words (``analysis.verdicts``): "+"/"−" when it excludes 0; "="
when it lies within ±the equivalence margin (by default the effect of interest: an anytime-valid
interval inside the margin, a stronger claim than the fixed design's two one-sided tests);
decided on one of those, or with a ``precision``, when the half-width of its Δ% interval is at
most that. Undecided at ``max``: "~" when it would have found the effect (its half-width plus
the 80% quantile of its standard error within it, as the fixed design's 80% power), else "?".
Paired, 3 rounds give 2 degrees of freedom: enough for one comparison at 5%, not for two or
more at α/m (the e-value's bound (1 + 3g)^(ν/2) = 31 stays below 1/α): such a campaign
decides at round 4 at the earliest.

Pure functions on plain numbers (no store, no server), tested on synthetic data with known
answers and by simulated A/A campaigns (``bench/sequential.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from pglab.stats.differences import Rounds, Verdict
from pglab.stats.significance import ALPHA

# the prior variance g of the standardized effect δ: an SD of about 3 (see t_star in the tests)
G_GRID = (10.0,)
DEFAULT_MIN = 3  # rounds before the first look: 2 runs a side give no useful interval
DEFAULT_MAX = 20


@dataclass(frozen=True)
class SequentialSpec:
    """``repeats = "auto"`` with its ``[sequential]`` table."""

    min: int = DEFAULT_MIN
    max: int = DEFAULT_MAX
    precision: float | None = None  # wanted CI half-width of Δ% (points); None: a verdict


def _log_bf(t2: float, nu: float, n_eff: float, g: float) -> float:
    r = 1.0 + n_eff * g
    return -0.5 * math.log(r) + (nu + 1) / 2 * (math.log1p(t2 / nu) - math.log1p(t2 / (nu * r)))


def e_value(t: float, nu: float, n_eff: float) -> float:
    """The mixture Bayes factor (the e-process's value) at pooled t statistic ``t``."""
    if nu < 1:
        return 1.0
    t2 = min(t * t, 1e300)
    return float(np.mean([math.exp(_log_bf(t2, nu, n_eff, g)) for g in G_GRID]))


@lru_cache(maxsize=4096)
def t_star(nu: float, n_eff: float, alpha: float) -> float:
    """The |t| at which the e-value reaches 1/alpha (inf when it never can at this size)."""
    target = 1.0 / alpha
    if nu < 1 or e_value(1e150, nu, n_eff) < target:
        return math.inf
    low, high = 0.0, 1.0
    while e_value(high, nu, n_eff) < target:
        low, high = high, high * 2
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if e_value(mid, nu, n_eff) < target else (low, mid)
    return high


@dataclass(frozen=True)
class Look:
    """One comparison judged on what has run so far (Δ% of geometric means, as in verdicts)."""

    delta_pct: float
    ci_low: float | None  # the anytime-valid interval of Δ% at level alpha (None: unbounded)
    ci_high: float | None
    e_value: float  # against Δ = 0
    verdict: Verdict  # as the fixed design's (analysis.verdicts)
    decided: bool  # the comparison needs no more runs
    n_a: int = 0
    n_b: int = 0
    rounds: int = 0  # rounds paired (both sides ran)
    noise_pct: float | None = None  # one run's SD of log TPS in % (the ratios' SD / √2)
    detectable_pct: float | None = None  # the effect it would find with POWER (see ``look``)

    @property
    def half_width(self) -> float | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_high - self.ci_low) / 2


Z_POWER = 0.8416  # the standard normal's 80% quantile: POWER of stats.power, for "~"


def look(
    baseline: Rounds,
    other: Rounds,
    alpha: float,
    effect_pct: float,
    precision: float | None = None,
    equivalence_pct: float | None = None,
) -> Look:
    """``other`` against ``baseline`` (each side's figure by round) on the confidence sequence
    at ``alpha`` of the mean within-round log ratio (the rounds both ran: paired by round, as
    the fixed design's blocked analysis; one-sample: ν = n − 1, n_δ = n). The verdict in the
    fixed design's words: "+"/"−" when the sequence excludes 0; "=" when it lies within
    ±``equivalence_pct`` (default: the effect); "~" when not, but it would have found
    ±``effect_pct`` (the effect, shifted by its 80% quantile, beyond the sequence's
    half-width: as the fixed design's 80% power); else "?". Decided: "+", "−" or "="
    (with a ``precision``: its half-width at most that)."""
    common = sorted(set(baseline) & set(other))
    n_a, n_b = len(baseline), len(other)
    d = np.log([float(other[r]) for r in common]) - np.log([float(baseline[r]) for r in common])
    n = len(d)
    if n == 0:
        return Look(math.nan, None, None, 1.0, "?", False, n_a, n_b)
    diff = float(d.mean())
    delta = math.expm1(diff) * 100
    if n < 2:
        return Look(delta, None, None, 1.0, "?", False, n_a, n_b, n)
    sd = float(d.std(ddof=1))
    se = sd / math.sqrt(n)
    noise = sd / math.sqrt(2) * 100
    t = diff / se if se else (0.0 if diff == 0 else math.inf)
    e = e_value(t, n - 1.0, float(n))
    ts = t_star(n - 1.0, float(n), alpha)
    if math.isinf(ts):
        return Look(delta, None, None, e, "?", False, n_a, n_b, n, noise)
    low, high = math.expm1(diff - ts * se) * 100, math.expm1(diff + ts * se) * 100
    found = math.expm1((ts + Z_POWER) * se) * 100
    margin = effect_pct if equivalence_pct is None else equivalence_pct
    verdict: Verdict
    if low > 0 or high < 0:
        verdict = "+" if low > 0 else "-"
    elif -margin < low and high < margin:
        verdict = "="
    elif found <= effect_pct:
        verdict = "~"
    else:
        verdict = "?"
    decided = verdict in "+-=" if precision is None else (high - low) / 2 <= precision
    return Look(delta, low, high, e, verdict, decided, n_a, n_b, n, noise, found)


def look_alone(
    values: Sequence[float], alpha: float, precision: float | None
) -> tuple[float | None, bool]:
    """A point with nothing to compare (one variant): the half-width in % of the confidence
    sequence of its mean log TPS (one-sample t: ν = n − 1, n_δ = n) and whether it is within
    ``precision`` (without one, a single point is decided at its ``min`` runs)."""
    x = np.log(np.asarray(values, dtype=float))
    n = len(x)
    if n < 2:
        return None, False
    se = float(x.std(ddof=1)) / math.sqrt(n)
    ts = t_star(float(n - 1), float(n), alpha)
    if math.isinf(ts):
        return None, precision is None
    half = math.expm1(ts * se) * 100
    return half, precision is None or half <= precision


def family_alpha(comparisons: int) -> float:
    """Each comparison's level: Bonferroni over the campaign's planned comparisons."""
    return ALPHA / max(1, comparisons)


@dataclass(frozen=True)
class Point:
    """What the stopping rule needs of a point: its key and the key of the point it is
    compared with (``against``: its reference, the baseline variant's point at the same matrix
    coordinates or the compared axis's first value; None: it is a reference, or compares
    nothing), as the campaign's comparisons are asked (``campaign.questions``)."""

    key: str
    against: str | None = None


def comparisons_of(points: Sequence[Point]) -> list[tuple[str, str]]:
    """(the reference point's key, the other point's key): the campaign's family."""
    keys = {p.key for p in points}
    return [(p.against, p.key) for p in points if p.against is not None and p.against in keys]


def undecided(
    points: Sequence[Point],
    values: Mapping[str, Rounds],
    spec: SequentialSpec,
    effect_pct: float,
    family: int | None = None,
    equivalence_pct: float | None = None,
) -> set[str]:
    """The keys of the points that need another round: fewer than ``spec.min`` ok runs, or a
    comparison they take part in (as the compared point or as its reference) not decided yet
    (``look``: paired by round, as the answer it ends on). A point with nothing to compare
    needs a ``precision`` to go past ``min``. ``values``: each point's figure by round;
    ``family``: the number of comparisons the level is shared by, when ``points`` are only part
    of them."""
    pairs = comparisons_of(points)
    alpha = family_alpha(len(pairs) if family is None else family)
    want = {p.key for p in points if len(values.get(p.key, {})) < spec.min}
    compared: set[str] = set()
    for base, other in pairs:
        compared |= {base, other}
        if base in want or other in want:
            want |= {base, other}
            continue
        got = look(values[base], values[other], alpha, effect_pct, spec.precision, equivalence_pct)
        if not got.decided:
            want |= {base, other}
    alone_alpha = ALPHA / max(1, len(points))
    for p in points:
        if p.key in compared or p.key in want:
            continue
        if not look_alone(list(values[p.key].values()), alone_alpha, spec.precision)[1]:
            want.add(p.key)
    return want


def expected_runs(
    spec: SequentialSpec,
    groups: int,
    variants: int,
    noise_pct: float,
    effect_pct: float,
    draws: int = 200,
) -> float:
    """Runs a campaign of ``groups`` matrix coordinates × ``variants`` is expected to take when
    no variant differs from the baseline, at run-to-run noise ``noise_pct`` (SD of log TPS, %):
    simulated with a fixed seed, so the plan says the same every time."""
    rng = np.random.default_rng(0)
    comparisons = groups * (variants - 1)
    points = [Point(str(v), "0" if v and variants > 1 else None) for v in range(variants)]
    sd = noise_pct / 100
    total = 0
    for _ in range(draws):
        data = np.exp(rng.normal(0.0, sd, (variants, spec.max)))
        runs = {p.key: 0 for p in points}
        active = set(runs)
        for _round in range(spec.max):
            for key in active:
                runs[key] += 1
            seen = {p.key: dict(enumerate(data[int(p.key), : runs[p.key]], 1)) for p in points}
            active = undecided(points, seen, spec, effect_pct, comparisons)
            if not active:
                break
        total += sum(runs.values())
    return groups * total / draws
