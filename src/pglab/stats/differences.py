"""The difference between two points' TPS, as the campaign's design allows it to be measured.

Interleaved campaigns run every point once per round (``repeat`` r of every point is round r,
in a shuffled order), so that drift of the machine — caches warming, a neighbour's job, thermal
throttling — falls on all points of a round alike. The analysis keeps that strength: a
comparison is measured on its **within-round log ratios** d_r = log TPS(B, r) − log TPS(A, r),
in which whatever a round shares cancels. Three tests, chosen per comparison:

- **blocked** (the default for interleaved campaigns): mean of d_r, its variance **pooled over
  the campaign's comparisons** — every comparison's d_r measure the same run-to-run noise when
  the variants are equally noisy, and pooling gives the few rounds of a campaign the degrees of
  freedom they lack alone. The comparisons of one matrix coordinate share their baseline's runs,
  so their variances are correlated (ρ = ½ between two comparisons at equal spreads, ρ² = ¼
  between their sample variances); the degrees of freedom are discounted for it:
  ``Σ k / (1 + (m − 1)/4)`` over the comparisons sharing a baseline (k = rounds − 1 each), or
  ``Σ k / m`` when that baseline is noisier than the group's other points (an F test at
  ``GUARD`` on its residual in the two-way table of rounds): its noise is then in every ratio.
- **paired**: the comparison's own variance of d_r (a paired t-test, k degrees of freedom; three
  rounds or more, ``MIN_OWN_ROUNDS``: from two, one degree of freedom, it is not tested), when
  it is the only one that pairs, or when its variance is larger than the others' by a one-sided
  F test at ``GUARD`` (a variant noisier than the rest, which the pooled variance would
  understate: its false alarms would exceed 5%).
- **welch**: Welch's t-test on log TPS when the runs do not pair: a sequential-order campaign,
  points of different campaigns, fewer than two rounds in common.

Why this and not a two-way ANOVA with the round as a block (or the equivalent mixed model with the
round as a random effect): the ANOVA pools one residual variance over all variants, so one variant
noisier than the baseline — or a noisier baseline — makes its false alarms several times the
promised 5% (a baseline at 8% noise and the others at 1%: 20% of A/A campaigns flag a
difference). The guard costs a little power (a variant flagged falls back to its own k degrees of
freedom). ``bench/verdicts.py --simulate`` prints the false-alarm rate of every scenario and the
power of each test; docs/concepts/statistics.md gives the figures.

Pure functions on plain numbers.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from pglab.stats import significance as dist
from pglab.stats.significance import ALPHA

GUARD = 0.10  # a comparison noisier than the others at this level is tested on its own
# rounds a comparison needs to be tested on its own variance: two give one degree of freedom,
# a spread that can be any width (two nearly equal ratios: an interval of no width and a
# verdict the runs cannot support); with fewer it is tested only on a pooled variance
MIN_OWN_ROUNDS = 3
RHO2 = 0.25  # the correlation² of two comparisons' sample variances when they share a baseline

Rounds = Mapping[int, float]  # a point's TPS by round (its repeat number)
# the test a comparison is judged by ("sequential": ``stats/sequential``'s confidence sequence)
Method = Literal["blocked", "paired", "welch", "sequential"]
# a comparison's answer: "+" / "-" significant, "=" equivalent (within the margin), "~" not
# significant (and could have been), "?" could not tell (``analysis/verdicts`` words it)
Verdict = Literal["+", "-", "=", "~", "?"]


@dataclass(frozen=True)
class Difference:
    """mean(log B) − mean(log A) with its standard error and degrees of freedom."""

    diff: float
    se: float
    df: float
    method: Method  # "blocked", "paired" or "welch"
    noise: float  # one run's SD of log TPS (≈ CV, a fraction): drift between rounds removed
    rounds: int = 0  # rounds paired (0: welch)

    def p(self) -> float:
        """Two-sided p-value against no difference."""
        if self.se == 0:
            return 1.0 if self.diff == 0 else 0.0
        return float(2 * dist.t.sf(abs(self.diff / self.se), self.df))

    def interval(self, level: float) -> tuple[float, float]:
        """The ``level`` (e.g. 0.95) interval of the difference of log means."""
        half = float(dist.t.isf((1 - level) / 2, self.df)) * self.se if self.se else 0.0
        return self.diff - half, self.diff + half


def welch(a: np.ndarray, b: np.ndarray) -> Difference:
    """Welch's t on log TPS ``a`` (baseline) and ``b``: no pairing, no equal spreads assumed."""
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        df = float(len(a) + len(b) - 2)
    else:
        df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    noise = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    return Difference(float(b.mean() - a.mean()), se, df, "welch", noise)


def log_ratios(base: Rounds, other: Rounds) -> np.ndarray:
    """log TPS(other, r) − log TPS(base, r) over the rounds both ran, in round order."""
    common = sorted(set(base) & set(other))
    return np.array([math.log(other[r]) - math.log(base[r]) for r in common], dtype=float)


def measure(
    pairs: Sequence[tuple[Rounds, Rounds]], groups: Sequence[Hashable] | None = None
) -> list[Difference | None]:
    """Each (baseline, other) comparison measured: blocked, paired or Welch as the module says.
    ``groups``: which comparisons share a baseline (same key: same baseline point); by default
    all do. None where a side has fewer than two runs, where a comparison not pooled has fewer
    than ``MIN_OWN_ROUNDS`` rounds, and where the spread is zero (no noise measured: no test)."""
    groups = list(groups) if groups is not None else [0] * len(pairs)
    ratios = [log_ratios(a, b) for a, b in pairs]
    paired = [i for i, d in enumerate(ratios) if len(d) >= 2]
    pooled = _pooled(pairs, ratios, paired, groups)
    out: list[Difference | None] = []
    for i, (a, b) in enumerate(pairs):
        d = ratios[i]
        if i in pooled:
            out.append(pooled[i])
        elif len(d) >= MIN_OWN_ROUNDS:
            out.append(_paired(d))
        elif len(d) < 2 and len(a) >= 2 and len(b) >= 2:
            out.append(welch(np.log(list(a.values())), np.log(list(b.values()))))
        else:
            out.append(None)
    return [x if x is not None and x.se > 0 else None for x in out]


def paired(d: np.ndarray) -> Difference:
    """The paired t of one comparison on its own variance, ``d`` its within-round differences
    (of logs as ``measure`` takes them, or of any figure measured once per round)."""
    return _paired(d)


def _paired(d: np.ndarray) -> Difference:
    s = float(d.std(ddof=1))
    return Difference(
        float(d.mean()), s / math.sqrt(len(d)), len(d) - 1.0, "paired", s / math.sqrt(2), len(d)
    )


def _pooled(
    pairs: Sequence[tuple[Rounds, Rounds]],
    ratios: Sequence[np.ndarray],
    paired: Sequence[int],
    groups: Sequence[Hashable],
) -> dict[int, Difference]:
    """The comparisons tested on the pooled variance (not those the guard sends to their own)."""
    if len(paired) < 2:
        return {}
    k = {i: len(ratios[i]) - 1 for i in paired}
    s2 = {i: float(ratios[i].var(ddof=1)) for i in paired}
    total_k, total_ss = sum(k.values()), sum(k[i] * s2[i] for i in paired)
    pool = total_ss / total_k
    if pool == 0:
        return {}
    by_group: dict[Hashable, list[int]] = {}
    for i in paired:
        by_group.setdefault(groups[i], []).append(i)
    df = sum(
        sum(k[i] for i in g) / (1 + (len(g) - 1) * (1.0 if _noisier_baseline(pairs, g) else RHO2))
        for g in by_group.values()
    )
    f_dist = dist.f
    out = {}
    for i in paired:
        rest_k = total_k - k[i]
        rest = (total_ss - k[i] * s2[i]) / rest_k
        if rest > 0 and f_dist.sf(s2[i] / rest, k[i], rest_k) < GUARD:
            continue  # noisier than the others: its own variance (paired)
        if rest == 0 and s2[i] > 0:
            continue
        n = len(ratios[i])
        out[i] = Difference(
            float(ratios[i].mean()), math.sqrt(pool / n), df, "blocked", math.sqrt(pool / 2), n
        )
    return out


def _noisier_baseline(pairs: Sequence[tuple[Rounds, Rounds]], group: Sequence[int]) -> bool:
    """Whether the baseline the comparisons ``group`` share is noisier than their other points
    (a one-sided F test at GUARD on its residual variance in the two-way table of the rounds
    every point ran): its noise is then in every comparison's ratios alike, and their variances
    count as one (ρ² = 1) in the pooled degrees of freedom."""
    if len(group) < 2:
        return False
    base = pairs[group[0]][0]
    common = set(base).intersection(*(pairs[i][1] for i in group))
    if len(common) < 2:
        return False
    rows = [base] + [pairs[i][1] for i in group]
    y = np.log([[row[r] for r in sorted(common)] for row in rows])
    resid = y - y.mean(1, keepdims=True) - y.mean(0, keepdims=True) + y.mean()
    ss = (resid**2).sum(1)
    if ss.sum() - ss[0] <= 0:
        return bool(ss[0] > 0)
    points, rounds = y.shape
    total = (points - 1) * (rounds - 1)
    own = total / points
    ratio = (ss[0] / own) / ((ss.sum() - ss[0]) / (total - own))
    return bool(dist.f.sf(ratio, own, total - own) < GUARD)


def simulated_power(
    runs: int, comparisons: int, noise_pct: float, effect_pct: float, draws: int = 20000
) -> float:
    """Probability that the blocked test finds a true effect of ``effect_pct`` in one of
    ``comparisons`` comparisons sharing a baseline, ``runs`` rounds each, at run-to-run noise
    ``noise_pct`` (SD of log TPS, %), at Holm's strictest level ALPHA / comparisons. Simulated
    with a fixed seed (the same answer every time), guard included."""
    if runs < 2:
        return 0.0
    m, n = max(1, comparisons), runs
    rng = np.random.default_rng(0)
    y = rng.standard_normal((draws, m + 1, n)) * noise_pct / 100
    y[:, 1, :] += math.log1p(effect_pct / 100)
    d = y[:, 1:, :] - y[:, :1, :]
    s2 = d.var(axis=2, ddof=1)
    st = dist
    own_p = 2 * st.t.sf(np.abs(d[:, 0].mean(1)) / np.sqrt(s2[:, 0] / n), n - 1)
    if m == 1:
        return float(np.mean(own_p < ALPHA))
    k = n - 1
    rest = (s2.sum(1) - s2[:, 0]) / (m - 1)
    noisier = st.f.sf(s2[:, 0] / np.maximum(rest, 1e-300), k, k * (m - 1)) < GUARD
    resid = y - y.mean(2, keepdims=True) - y.mean(1, keepdims=True) + y.mean((1, 2), keepdims=True)
    ss = (resid**2).sum(2)
    total = m * (n - 1)
    own = total / (m + 1)
    base_f = (ss[:, 0] / own) / (np.maximum(ss.sum(1) - ss[:, 0], 1e-300) / (total - own))
    rho2 = np.where(st.f.sf(base_f, own, total - own) < GUARD, 1.0, RHO2)
    df = k * m / (1 + (m - 1) * rho2)
    pooled = 2 * st.t.sf(np.abs(d[:, 0].mean(1)) / np.sqrt(s2.mean(1) / n), df)
    return float(np.mean(np.where(noisier, own_p, pooled) < ALPHA / m))
