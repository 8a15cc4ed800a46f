"""What every statistical judgement of pglab shares: the significance level, and scipy.stats
imported on first use (a second to import, which every ``pglab`` command would pay, ``--help``
and ``ls`` included, and which ``pglab report`` pays while its charts draw)."""

from __future__ import annotations

from types import ModuleType
from typing import cast

ALPHA = 0.05  # two-sided: a drift, a difference between points


def scipy_stats() -> ModuleType:
    from scipy import stats

    return cast(ModuleType, stats)
