"""How likely a test is to find an effect, and how many runs it takes: the power of a two-sided
t-test (noncentral t) and the smallest effect it finds, a campaign design's power by simulation
(the blocked analysis of ``differences`` or Welch's test), the fewest runs per point for an
effect, and Holm's step-down correction over a family of comparisons. Pure functions on plain
numbers; the verdicts (``analysis/verdicts``) put them into words."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np

from pglab.stats import differences
from pglab.stats import significance as dist
from pglab.stats.significance import ALPHA, scipy_stats

POWER = 0.8  # the power that makes a comparison (or a design) able to find an effect
MAX_RUNS = 100  # runs per point beyond which "needs N runs" is not a useful answer


def power(se: float, df: float, effect_pct: float, alpha: float) -> float:
    """Probability that a two-sided t-test at ``alpha`` with standard error ``se`` (log scale)
    and ``df`` degrees of freedom finds a true effect of ``effect_pct`` (noncentral t)."""
    if se == 0:
        return 1.0
    crit = _critical(alpha, df)
    ncp = abs(math.log1p(effect_pct / 100)) / se  # symmetric: a fall is found as a rise is
    far, near = _nct_tails(crit, df, ncp)  # the effect's side; the other, vanishing
    # scipy's nct gives nan far in its tails (at 1-2 degrees of freedom from ncp ≈ 40): the
    # other side is then 0 to double precision, and the effect's side is approximated by a
    # shifted central t (only where nct failed: mixing the two per call made power fall as
    # the effect grew)
    if not math.isfinite(near):
        near = 0.0
    if not math.isfinite(far):
        far = float(dist.t.sf(crit - ncp, df))
    p = far + near
    return min(1.0, p)


def _nct_tails(crit: float, df: float, ncp: float) -> tuple[float, float]:
    """``nct.sf(crit, df, ncp)`` and ``nct.cdf(-crit, df, ncp)``: by the functions scipy's
    distribution calls (``_nct_sf``, clipped to [0, 1] as ``nct._sf`` does, and
    ``special.nctdtr``) where its checks pass (df > 0, ncp and crit not nan; crit finite),
    the same numbers without their 0.3 ms of argument handling a call (the verdicts of 200
    points made 11,000 such calls; ``tests/unit/test_power.py`` holds them equal); else
    through ``scipy.stats.nct``."""
    from scipy import special
    from scipy.special import _ufuncs

    sf = getattr(_ufuncs, "_nct_sf", None)
    if sf is not None and df > 0 and ncp == ncp and math.isfinite(crit):
        with np.errstate(over="ignore"):  # as nct._sf (scipy gh-17432)
            far = float(np.clip(sf(crit, df, ncp), 0, 1))
        return far, float(special.nctdtr(df, ncp, -crit))
    st = scipy_stats()
    return float(st.nct.sf(crit, df, ncp)), float(st.nct.cdf(-crit, df, ncp))


@functools.lru_cache(maxsize=1024)
def _critical(alpha: float, df: float) -> float:
    """The two-sided t-test's critical value: the same for every effect a bisection of
    ``detectable_pct`` or ``fewest`` tries at one ``df`` (a third of their scipy calls)."""
    return float(dist.t.isf(alpha / 2, df))


def detectable_pct(se: float, df: float, alpha: float, target: float = POWER) -> float:
    """The smallest effect (in %) found with probability ``target`` (the inverse of ``power``)."""
    if se == 0:
        return 0.0
    low, high = 0.0, 1.0
    while power(se, df, high, alpha) < target:  # bracket it; effects beyond +100% are rare
        low, high = high, high * 2
        if high > 1e6:
            return math.inf
    for _ in range(16):  # bisection to 1/65536 of the bracket: 0.0001 points at 10%
        mid = (low + high) / 2
        low, high = (mid, high) if power(se, df, mid, alpha) < target else (low, mid)
    return high


def design_power(
    runs: int,
    comparisons: int,
    noise_pct: float,
    effect_pct: float,
    draws: int = 20000,
    blocked: bool = True,
) -> float:
    """Power of the campaign's test (``blocked``: the blocked analysis of an interleaved
    campaign, ``differences.simulated_power``; else Welch's) of ``runs`` against ``runs`` at SD
    ``noise_pct`` (log scale, %) for an effect of ``effect_pct``, at Holm's strictest level
    ALPHA / comparisons. Simulated (a fixed seed: the same answer every time), because the
    tests' degrees of freedom are themselves random (Welch's) or chosen by the data (the blocked
    test's guard): a noncentral t at 2·runs − 2 would promise more than Welch delivers (at 4 runs,
    5 comparisons and 4% noise: 46% against the 37% that ``bench/verdicts.py --simulate``
    finds)."""
    if blocked:
        return differences.simulated_power(runs, comparisons, noise_pct, effect_pct, draws)
    if runs < 2:
        return 0.0
    rng = np.random.default_rng(0)
    sd, n = noise_pct / 100, runs
    diff = math.log1p(effect_pct / 100) + rng.standard_normal(draws) * sd * math.sqrt(2 / n)
    va = sd**2 * rng.chisquare(n - 1, draws) / (n - 1) / n
    vb = sd**2 * rng.chisquare(n - 1, draws) / (n - 1) / n
    df = (va + vb) ** 2 / ((va**2 + vb**2) / (n - 1))
    p = 2 * dist.t.sf(np.abs(diff) / np.sqrt(va + vb), df)
    return float(np.mean(p < ALPHA / max(1, comparisons)))


def runs_needed(
    comparisons: int, noise_pct: float, effect_pct: float, blocked: bool = True
) -> int | None:
    """The fewest runs per point with which each comparison finds ``effect_pct`` with POWER;
    None when more than MAX_RUNS would be needed."""
    return fewest(
        lambda n: design_power(n, comparisons, noise_pct, effect_pct, blocked=blocked) >= POWER
    )


def fewest(enough: Callable[[int], bool]) -> int | None:
    """The smallest n in 2..MAX_RUNS for which ``enough(n)`` (monotone in n), by bisection."""
    if not enough(MAX_RUNS):
        return None
    low, high = 1, MAX_RUNS  # enough(high), not enough(low) (a single run tests nothing)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
