"""Sequential repeats (``repeats = "auto"``): when a point has run enough.

Runs go in interleaved rounds; after each round every comparison (a point against the baseline
variant's point at the same matrix coordinates) is judged on an **anytime-valid confidence
sequence** for the difference of mean log TPS, and a point stops when every comparison it takes
part in is decided. A confidence sequence covers the true difference at *every* round at once
with probability ≥ 1 − α, so looking after each round and stopping whenever one likes — on a
verdict, on a precision reached, or for any other reason — cannot raise the error rates.

The sequence is the inversion of the scale-invariant Bayes-factor e-process of the two-sample t
test ("safe t-test"): with a normal prior N(0, g) on the standardized effect δ = Δ/σ and the
right-Haar prior on the common location and scale, the Bayes factor of δ ≠ 0 against δ = 0 has
the closed form of Gönen, Johnson, Lu & Westfall (2005, The American Statistician 59(3), "The
Bayesian two-sample t test"):

    BF_g(t) = (1 + n_δ g)^(-1/2) · [(1 + t²/ν) / (1 + t²/(ν (1 + n_δ g)))]^((ν+1)/2)

with t the pooled two-sample t statistic, ν = n₁ + n₂ − 2 and n_δ = n₁n₂/(n₁ + n₂). Being the
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
sequence: "+"/"−" when it excludes 0; "~" when it lies within ±effect; with a ``precision``, a
comparison is decided when the half-width of its Δ% interval is at most that.

Pure functions on plain numbers (no store, no server), tested on synthetic data with known
answers and by simulated A/A campaigns (``bench/sequential.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

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
    verdict: str  # "+", "-", "~" or "?" (not decided yet)
    decided: bool  # the comparison needs no more runs
    n_a: int = 0
    n_b: int = 0

    @property
    def half_width(self) -> float | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return (self.ci_high - self.ci_low) / 2


def look(
    baseline: Sequence[float],
    other: Sequence[float],
    alpha: float,
    effect_pct: float,
    precision: float | None = None,
) -> Look:
    """``other`` against ``baseline`` (TPS samples) on the confidence sequence at ``alpha``."""
    a = np.log(np.asarray(baseline, dtype=float))
    b = np.log(np.asarray(other, dtype=float))
    n_a, n_b = len(a), len(b)
    if n_a == 0 or n_b == 0:
        return Look(math.nan, None, None, 1.0, "?", False, n_a, n_b)
    diff = float(b.mean() - a.mean())
    delta = math.expm1(diff) * 100
    nu = n_a + n_b - 2
    if n_a < 2 and n_b < 2 or nu < 1:
        return Look(delta, None, None, 1.0, "?", False, n_a, n_b)
    ss = float(((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum())
    se = math.sqrt(ss / nu * (1 / n_a + 1 / n_b))
    n_eff = n_a * n_b / (n_a + n_b)
    t = diff / se if se else (0.0 if diff == 0 else math.inf)
    e = e_value(t, nu, n_eff)
    ts = t_star(float(nu), n_eff, alpha)
    if math.isinf(ts):
        return Look(delta, None, None, e, "?", False, n_a, n_b)
    low, high = math.expm1(diff - ts * se) * 100, math.expm1(diff + ts * se) * 100
    if low > 0 or high < 0:
        verdict = "+" if low > 0 else "-"
    elif -effect_pct < low and high < effect_pct:
        verdict = "~"
    else:
        verdict = "?"
    decided = verdict != "?" if precision is None else (high - low) / 2 <= precision
    return Look(delta, low, high, e, verdict, decided, n_a, n_b)


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
    """What the stopping rule needs of a point: its key, variant and matrix coordinates (as
    text: a point is compared with the baseline variant's point at the same ones)."""

    key: str
    variant: str
    coords: str


def comparisons_of(points: Sequence[Point], baseline: str | None) -> list[tuple[Point, Point]]:
    """(baseline's point, other point) at each matrix coordinate: the campaign's family."""
    if baseline is None:
        return []
    base = {p.coords: p for p in points if p.variant == baseline}
    return [(base[p.coords], p) for p in points if p.variant != baseline and p.coords in base]


def undecided(
    points: Sequence[Point],
    baseline: str | None,
    tps: Mapping[str, Sequence[float]],
    spec: SequentialSpec,
    effect_pct: float,
    family: int | None = None,
) -> set[str]:
    """The keys of the points that need another round: fewer than ``spec.min`` ok runs, or a
    comparison they take part in (as the compared point or as its baseline) not decided yet.
    A point with nothing to compare needs a ``precision`` to go past ``min``. ``family``: the
    number of comparisons the level is shared by, when ``points`` are only part of them."""
    pairs = comparisons_of(points, baseline)
    alpha = family_alpha(len(pairs) if family is None else family)
    want = {p.key for p in points if len(tps.get(p.key, ())) < spec.min}
    compared: set[str] = set()
    for base, other in pairs:
        compared |= {base.key, other.key}
        if base.key in want or other.key in want:
            want |= {base.key, other.key}
            continue
        got = look(tps[base.key], tps[other.key], alpha, effect_pct, spec.precision)
        if not got.decided:
            want |= {base.key, other.key}
    alone_alpha = ALPHA / max(1, len(points))
    for p in points:
        if p.key in compared or p.key in want:
            continue
        if not look_alone(tps[p.key], alone_alpha, spec.precision)[1]:
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
    points = [Point(str(v), str(v), "") for v in range(variants)]
    baseline = "0" if variants > 1 else None
    sd = noise_pct / 100
    total = 0
    for _ in range(draws):
        data = np.exp(rng.normal(0.0, sd, (variants, spec.max)))
        runs = {p.key: 0 for p in points}
        active = set(runs)
        for _round in range(spec.max):
            for key in active:
                runs[key] += 1
            tps = {p.key: list(data[int(p.key), : runs[p.key]]) for p in points}
            active = undecided(points, baseline, tps, spec, effect_pct, comparisons)
            if not active:
                break
        total += sum(runs.values())
    return groups * total / draws
