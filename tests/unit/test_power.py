"""stats.power's noncentral t tails, read by the functions scipy's ``nct`` calls, are the
numbers ``scipy.stats.nct`` gives, bit for bit, over the degrees of freedom, critical values
and noncentralities the verdicts ask for (nan far in the tails included)."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from pglab.stats import power


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("df", [1.0, 1.3, 2.0, 3.7, 8.0, 17.25, 48.0, 198.0])
def test_the_tails_are_scipy_s_nct(df: float) -> None:
    for alpha in (0.05, 0.05 / 7, 0.05 / 190):
        crit = float(stats.t.isf(alpha / 2, df))
        for ncp in (0.0, 1e-9, 0.3, 1.0, 2.5, 4.0, 9.5, 20.0, 40.0, 41.7, 80.0, 1e3):
            far, near = power._nct_tails(crit, df, ncp)
            assert _same(far, float(stats.nct.sf(crit, df, ncp))), (df, crit, ncp)
            assert _same(near, float(stats.nct.cdf(-crit, df, ncp))), (df, crit, ncp)


def test_power_and_the_smallest_effect_found_are_as_before() -> None:
    # the exact figures of the public scipy calls (before the tails were read directly)
    assert power.power(0.02, 8.0, 5.0, 0.05) == 0.5725920041700331
    assert power.detectable_pct(0.02, 8.0, 0.05) == 6.6112060546875
    assert power.detectable_pct(0.013, 3.3, 0.05 / 19) == 14.318603515625
