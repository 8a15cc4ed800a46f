"""Mann-Whitney's U test, two-sided, as ``scipy.stats.mannwhitneyu(x, y)`` computes it by
default (``method="auto"``, continuity corrected): exact when one side has at most 8 values
and no two values tie, else the normal approximation with the tie correction. Written here
on numpy and ``scipy.special`` so that a comparison's robustness check (``p_rank``) does not
import scipy.stats (most of a CPU second, paid by every ``show``, ``compare`` and ``report``);
``tests/unit/test_significance.py`` holds it equal to scipy's, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

EXACT_UP_TO = 8  # scipy's choice: exact while one side is this small and nothing ties


def mann_whitney_p(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """The two-sided p-value of Mann-Whitney's U test of ``x`` against ``y``."""
    from scipy import special

    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n1, n2 = len(xa), len(ya)
    ranks, ties = _average_ranks(np.concatenate([xa, ya]))
    u1 = float(ranks[:n1].sum()) - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    if (n1 > EXACT_UP_TO and n2 > EXACT_UP_TO) or bool((ties > 1).any()):
        n = n1 + n2
        tie_term = float(np.sum(ties**3 - ties))
        s = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.float64(u - n1 * n2 / 2 - 0.5) / np.float64(s)
        p = float(special.ndtr(-z))
    else:
        p = _exact_sf(int(u), n1, n2, float(special.binom(n1 + n2, min(n1, n2))))
    return min(max(2 * p, 0.0), 1.0)


def _average_ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranks from 1, ties given their average, in the values' order; and the size of each
    group of equal values (in sorted order, padded with zeros)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.concatenate([[True], ordered[:-1] != ordered[1:]])
    starts = np.flatnonzero(first)
    counts = np.diff(starts, append=len(values))
    group_ranks = (starts + 1) + (counts.astype(float) - 1) / 2
    ranks = np.empty(len(values))
    ranks[order] = np.repeat(group_ranks, counts)
    ties = np.zeros(len(values))
    ties[first] = counts
    return ranks, ties


def _exact_sf(u: int, n1: int, n2: int, total: float) -> float:
    """P(U ≥ u) under the null hypothesis, from the number of arrangements of each U
    (counted from the left tail, as the distribution is symmetric)."""
    small, large = min(n1, n2), max(n1, n2)
    k = min(u, small * large - u)
    freqs = _u_frequencies(k, small, large)
    pmf = [c / total for c in freqs]
    cdf = list(np.cumsum(pmf))
    return 1.0 - cdf[k] + pmf[k] if u < small * large - u else float(cdf[k])


def _u_frequencies(maxu: int, n1: int, n2: int) -> list[float]:
    """How many arrangements give U = 0 … ``maxu`` (n1 ≤ n2): the recurrence on σ(u), the sum
    of the divisors of u taken with a sign, that scipy uses."""
    sigma = [0] * (maxu + 1)
    for d in range(1, n1 + 1):
        for m in range(d, maxu + 1, d):
            sigma[m] += d
    for d in range(n2 + 1, n2 + n1 + 1):
        for m in range(d, maxu + 1, d):
            sigma[m] -= d
    counts = [1.0] + [0.0] * maxu
    for u in range(1, maxu + 1):
        counts[u] = float(int(sum(counts[v] * sigma[u - v] for v in range(u)) / u))
    return counts
