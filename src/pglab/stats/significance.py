"""What every statistical judgement of pglab shares: the significance level, Student's t and
Fisher's F distributions, and scipy.stats imported on first use.

``t`` and ``f`` give the tails and quantiles pglab's tests use by the functions of
``scipy.special`` that scipy.stats's own distributions call (``stdtr``, ``stdtrit``,
``fdtrc``): the same numbers, without importing scipy.stats, which takes most of a CPU second
(its distributions' docstrings are built as it loads) that every ``pglab show``, ``compare``
and ``report`` paid for a t quantile. ``tests/unit/test_significance.py`` holds them equal to
scipy.stats's, bit for bit. ``scipy_stats()`` is for the rest (a regression, a rank test,
the noncentral t where its fast path does not apply).
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any, cast

ALPHA = 0.05  # two-sided: a drift, a difference between points


def scipy_stats() -> ModuleType:
    from scipy import stats

    return cast(ModuleType, stats)


@functools.cache
def _special() -> Any:
    from scipy import special

    return special


class _StudentT:
    """``scipy.stats.t``'s ``sf``, ``isf`` and ``ppf`` (loc 0, scale 1), as its ``_sf``,
    ``_isf`` and ``_ppf`` compute them."""

    @staticmethod
    def sf(x: Any, df: Any) -> Any:
        import numpy as np

        return _special().stdtr(df, -np.asarray(x, dtype=float))

    @staticmethod
    def isf(q: Any, df: Any) -> Any:
        return -_special().stdtrit(df, q)

    @staticmethod
    def ppf(q: Any, df: Any) -> Any:
        return _special().stdtrit(df, q)


class _FisherF:
    """``scipy.stats.f.sf`` (loc 0, scale 1), as its ``_sf`` computes it."""

    @staticmethod
    def sf(x: Any, dfn: Any, dfd: Any) -> Any:
        return _special().fdtrc(dfn, dfd, x)


t = _StudentT()
f = _FisherF()
