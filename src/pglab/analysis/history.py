"""Change points in a series of executions: where a point's figure shifted, and by how much.

A series is one point's runs over the executions of a campaign (``pglab run FILE --execution``:
``NAME@LABEL`` campaigns, nightly or one per commit), in the order they ran. Each execution
holds a few repeats; the question is at which executions the level moved, not whether two
chosen ones differ.

The detection is E-Divisive's idea (Matteson & James 2014, as MongoDB and Apache Otava use it) on a
mean-shift statistic: circular binary segmentation (Olshen et al. 2004), each segment's cut found
where the standardized difference of mean log figure between a stretch of executions and the rest
is largest (a stretch reaching an end is a step; one inside is a level that went and came back,
which a single cut misses), and kept only if that maximum is larger than in at least 1 − α of the
same segment's random reorderings (a permutation test on whole executions: under no change,
executions are exchangeable; the runs of one execution stay together, so what they share does not
count as evidence). The permutation test makes the false-alarm rate α for a series without a change
whatever the noise's shape, which ``bench/history.py`` checks on simulated A/A series; the pieces a
change point cuts are searched each at α divided by their number, so that a real change does not
bring false ones beside it. Otava and MongoDB's package are not used: both pin numpy below the
version pglab's scipy needs.

Each change point found is then measured as any comparison is (``engine.ask``, apart: Δ% of
the executions after it against those before it, back to the previous change point and up to
the next, each execution one observation, with its 95% CI), and kept only when that CI excludes
0: the two tests must agree (the least significant one that does not is dropped, and the others
measured again).

A series without a change point is one level only if a change could have been found: with few
executions, or noisy ones, the permutation test finds nothing whatever happened (``reach``).
Nine executions are the fewest in which even a clean step (four before, five after, a 2x step
against 1% noise) passes it four times in five (eight: one in three); beyond that, the
executions a change of a given size needs at the series' noise are estimated from the test's
statistic at the true cut (a noncentral t) against its critical value under no change
(``CRITICAL``, the 95th percentile of the largest statistic over the cuts of random normal
series).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from pglab.analysis import engine, verdicts
from pglab.stats.power import POWER
from pglab.stats.significance import ALPHA, scipy_stats

PERMUTATIONS = 999
MIN_SEGMENT = 2  # executions on each side of a change point


@dataclass(frozen=True)
class ChangePoint:
    index: int  # the first execution of the new level
    p_value: float  # of the permutation test that kept it
    comparison: verdicts.Comparison  # the executions after it against those before


def change_points(
    executions: Sequence[Sequence[float]],
    alpha: float = ALPHA,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> list[ChangePoint]:
    """The change points of a series (each execution's run values, in order; an execution
    without a value is skipped by the caller), sorted by index."""
    logs = [np.log(np.asarray([v for v in ex if v > 0], dtype=float)) for ex in executions]
    if any(len(x) == 0 for x in logs):
        raise ValueError("every execution needs a positive value")
    rng = np.random.default_rng(seed)
    found: list[tuple[int, float]] = []
    _split(logs, 0, len(logs), alpha, permutations, rng, found)
    found.sort()
    # each execution one observation (its geometric mean), as in the test that found it: a
    # night's runs share what that night had, so counting them apart would narrow the CI
    means = [float(np.exp(x.mean())) for x in logs]
    while True:
        out = _measured(means, found)
        # kept when its comparison agrees: a CI of Δ% that includes 0 is no change to report
        # (a short piece can pass a permutation test of few arrangements by chance)
        weak = [k for k, c in enumerate(out) if not _excludes_zero(c.comparison)]
        if not weak:
            return out
        del found[max(weak, key=lambda k: found[k][1])]  # the least significant first


def _measured(means: list[float], found: list[tuple[int, float]]) -> list[ChangePoint]:
    bounds = [0, *(i for i, _ in found), len(means)]
    out = []
    for k, (index, p) in enumerate(found):
        before, after = means[bounds[k] : index], means[index : bounds[k + 2]]
        out.append(ChangePoint(index, p, _answer(before, after)))
    return out


# executions are campaigns of their own: their runs do not pair
_EXECUTIONS = engine.Pairing(
    engine.APART, "executions are campaigns of their own, each one observation: compared apart"
)


def _answer(before: list[float], after: list[float]) -> verdicts.Comparison:
    """The executions after a change point against those before it, as ``engine`` answers any
    comparison (a family of one)."""
    pair = engine.Pair(engine.apart(before), engine.apart(after))
    return engine.ask(engine.Question([pair], _EXECUTIONS))[0]


def _excludes_zero(c: verdicts.Comparison) -> bool:
    return c.ci_low is not None and c.ci_high is not None and (c.ci_low > 0 or c.ci_high < 0)


def _split(
    logs: list[np.ndarray],
    lo: int,
    hi: int,
    alpha: float,
    permutations: int,
    rng: np.random.Generator,
    found: list[tuple[int, float]],
) -> None:
    n = hi - lo
    if n < 2 * MIN_SEGMENT:
        return
    means = np.array([x.mean() for x in logs[lo:hi]])
    valid = _valid_pairs(n)
    stats = np.where(valid, _pair_stats(means[None, :])[0], -np.inf)
    i, j = np.unravel_index(int(np.argmax(stats)), stats.shape)
    observed = float(stats[i, j]) * (1 - 1e-12)
    beaten = 0
    if n > LONG:  # fewer reorderings of a long segment: p's floor is still 1/200
        permutations = min(permutations, LONG_PERMUTATIONS)
    chunk = max(1, CELLS // (n + 1) ** 2)
    for start in range(0, permutations, chunk):
        rows = min(chunk, permutations - start)
        shuffled = rng.permuted(np.tile(means, (rows, 1)), axis=1)
        best = np.where(valid, _pair_stats(shuffled), -np.inf).reshape(rows, -1).max(axis=1)
        beaten += int((best >= observed).sum())
        if (beaten + 1) / (permutations + 1) >= alpha:
            return  # not significant whatever the remaining reorderings say
    p = (beaten + 1) / (permutations + 1)
    cuts = [lo + int(c) for c in (i, j) if 0 < c < n]
    found.extend((c, p) for c in cuts)
    # the pieces are searched in turn, each at alpha / pieces: a change found does not raise
    # the chance of a false one beside it above alpha (at alpha each, two pieces made ~2·alpha)
    edges = [lo, *cuts, hi]
    for a, b in zip(edges, edges[1:], strict=False):
        _split(logs, a, b, alpha / (len(edges) - 1), permutations, rng, found)


LONG, LONG_PERMUTATIONS = 60, 199
CELLS = 2_000_000  # (i, j) cells of the permutations computed at once (memory: ~16 MB each)


def _valid_pairs(n: int) -> np.ndarray:
    """Which (i, j) may cut a segment of n executions into [0, i), [i, j), [j, n): the middle
    and any outer piece that is not empty at least MIN_SEGMENT long, and not the whole."""
    i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = (j - i >= MIN_SEGMENT) & ((i == 0) | (i >= MIN_SEGMENT))
    ok &= (j == n) | (n - j >= MIN_SEGMENT)
    return cast(np.ndarray, ok & ~((i == 0) & (j == n)))


def _pair_stats(means: np.ndarray) -> np.ndarray:
    """Circular binary segmentation's statistic (Olshen et al. 2004) for each row of execution
    means (log scale) and each (i, j): executions i..j−1 against the others, |mean inside −
    mean outside| / (s·√(1/n_in + 1/n_out)), s the pooled SD of the means around their side's
    mean. One cut (i = 0 or j = n) is a step; two are a level that went and came back."""
    rows, n = means.shape
    csum = np.concatenate([np.zeros((rows, 1)), np.cumsum(means, axis=1)], axis=1)
    total = csum[:, -1][:, None, None]
    squares = (means**2).sum(axis=1)[:, None, None]
    idx = np.arange(n + 1)
    n_in = (idx[None, :] - idx[:, None]).astype(float)[None]
    n_out = n - n_in
    with np.errstate(divide="ignore", invalid="ignore"):
        sum_in = csum[:, None, :] - csum[:, :, None]
        m_in, m_out = sum_in / n_in, (total - sum_in) / n_out
        resid = squares - n_in * m_in**2 - n_out * m_out**2
        s = np.sqrt(np.maximum(resid, 0.0) / max(1, n - 2))
        diff = np.abs(m_in - m_out)
        stat = diff / (s * np.sqrt(1 / n_in + 1 / n_out))
    return np.where(s > 1e-12, stat, np.where(diff > 1e-12, np.inf, 0.0))


def higher_is_better(figure: str) -> bool:
    """Whether a rise in ``figure`` is an improvement (TPS, NOPM) or a regression (latency)."""
    return not ("latency" in figure or figure.endswith("_ms") or figure.endswith("_s"))


def regression_pct(change: ChangePoint, figure: str) -> float:
    """How much worse the figure got at the change point, in % (negative: it got better)."""
    delta = change.comparison.delta_pct
    return -delta if higher_is_better(figure) else delta


# -- reach: what a series without a change point could have found ----------------------------

MIN_EXECUTIONS = 9  # the fewest in which a clean step passes the permutation test with POWER
MAX_EXECUTIONS = 60  # beyond which "N executions needed" is no useful answer
# CRITICAL[n]: the 95th percentile of the largest _pair_stats over the valid cuts of n random
# normal values (``critical(n)`` with 4000 series; past 40 it stays about 4.0)
CRITICAL = {
    9: 4.37,
    10: 4.22,
    11: 4.29,
    12: 4.39,
    13: 4.3,
    14: 4.2,
    15: 4.17,
    16: 4.17,
    17: 4.16,
    18: 4.16,
    19: 4.11,
    20: 4.02,
    21: 4.15,
    22: 4.08,
    23: 4.06,
    24: 4.08,
    25: 4.08,
    26: 4.01,
    27: 4.07,
    28: 4.08,
    29: 4.08,
    30: 4.07,
    31: 4.03,
    32: 4.05,
    33: 4.08,
    34: 4.05,
    35: 3.98,
    36: 4.03,
    37: 4.06,
    38: 4.03,
    39: 3.99,
    40: 4.0,
}


def critical(n: int, alpha: float = ALPHA, series: int = 4000, seed: int = 0) -> float:
    """The critical value of the segmentation's statistic for ``n`` executions at ``alpha``:
    its (1 − alpha) quantile over random normal series (how ``CRITICAL`` was made)."""
    x = np.random.default_rng(seed + n).standard_normal((series, n))
    best = np.where(_valid_pairs(n), _pair_stats(x), -np.inf).reshape(series, -1).max(axis=1)
    return float(np.quantile(best, 1 - alpha))


def step_power(n: int, noise_pct: float, effect_pct: float) -> float:
    """The probability that ``n`` executions, half before a step of ``effect_pct`` and half
    after, each execution's mean log figure as noisy as ``noise_pct`` (SD, %), show a
    statistic beyond the critical value: 0 below ``MIN_EXECUTIONS``."""
    if n < MIN_EXECUTIONS:
        return 0.0
    if noise_pct <= 0:
        return 1.0
    k = n // 2
    se = noise_pct / 100 * math.sqrt(1 / k + 1 / (n - k))
    ncp = abs(math.log1p(effect_pct / 100)) / se
    crit, st = CRITICAL.get(n, 4.0), scipy_stats()
    far = float(st.nct.sf(crit, n - 2, ncp))
    if not math.isfinite(far):  # scipy's nct far in its tail: a shifted central t
        far = float(st.t.sf(crit - ncp, n - 2))
    return min(1.0, far)


def executions_needed(noise_pct: float, effect_pct: float) -> int | None:
    """The fewest executions (half before the change, half after) that find a change of
    ``effect_pct`` with probability POWER at ``noise_pct``; None: more than MAX_EXECUTIONS."""
    for n in range(MIN_EXECUTIONS, MAX_EXECUTIONS + 1):
        if step_power(n, noise_pct, effect_pct) >= POWER:
            return n
    return None


@dataclass(frozen=True)
class Reach:
    """Whether a series without a change point could have found a change of ``effect_pct``:
    its executions, their noise (SD of each execution's mean log figure, %, and where it was
    measured) and the executions that would find it (None: more than MAX_EXECUTIONS)."""

    executions: int
    noise_pct: float
    noise_source: str
    effect_pct: float
    needed: int | None

    @property
    def enough(self) -> bool:
        return self.needed is not None and self.executions >= self.needed

    def text(self) -> str:
        """What a series without a change point says."""
        if self.enough:
            return "no change point: one level throughout"
        needed = (
            f"{self.needed} needed"
            if self.needed is not None
            else f"more than {MAX_EXECUTIONS} needed: reduce the noise first"
        )
        return (
            f"no change point found, but too few executions to find a change of "
            f"{self.effect_pct:g}% at this noise ({needed}; {self.executions} here, noise "
            f"{self.noise_pct:.1f}% {self.noise_source})"
        )


def reach(executions: Sequence[Sequence[float]], effect_pct: float) -> Reach:
    """What a series (each execution's run values, in order) could have found: its noise
    between executions from 3 of them on, else within them (an execution's mean as noisy as
    its runs' SD over √runs), else ``verdicts.DEFAULT_CV_PCT``, assumed."""
    logs = [np.log(np.asarray([v for v in ex if v > 0], dtype=float)) for ex in executions]
    logs = [x for x in logs if len(x)]
    within = [x for x in logs if len(x) >= 2]
    if len(logs) >= 3:
        noise = float(np.std([x.mean() for x in logs], ddof=1)) * 100
        source = "between executions"
    elif within:
        sd = math.sqrt(float(np.mean([np.var(x, ddof=1) for x in within])))
        noise = sd / math.sqrt(float(np.mean([len(x) for x in within]))) * 100
        source = "within executions"
    else:
        noise, source = verdicts.DEFAULT_CV_PCT, "assumed"
    return Reach(len(logs), noise, source, effect_pct, executions_needed(noise, effect_pct))
