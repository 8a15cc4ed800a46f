"""pglab's t and F tails, Mann-Whitney's test and the drift's line, computed without importing
scipy.stats, are scipy.stats's numbers bit for bit; and the views that show verdicts do not
import scipy.stats (most of a CPU second each command paid)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from pglab.stats import significance as dist
from pglab.stats.ranks import mann_whitney_p
from pglab.stats.steady import _line

DFS = [1, 1.5, 2, 3, 4.7, 7, 12, 30, 118.3, 1e6]


@pytest.mark.parametrize("df", DFS)
def test_t_tails_and_quantiles_are_scipy_s(df: float) -> None:
    xs = np.array([0.0, 1e-9, 0.3, 1.0, 1.96, 2.5, 4.0, 12.0, 40.0, -0.7, -3.1])
    assert np.array_equal(dist.t.sf(xs, df), stats.t.sf(xs, df))
    for x in xs:
        assert float(dist.t.sf(x, df)) == float(stats.t.sf(x, df))
    qs = np.array([1e-12, 0.001, 0.025, 0.05, 0.3, 0.5, 0.9, 0.975, 0.999999])
    assert np.array_equal(dist.t.isf(qs, df), stats.t.isf(qs, df))
    assert np.array_equal(dist.t.ppf(qs, df), stats.t.ppf(qs, df))


def test_f_tail_is_scipy_s() -> None:
    for dfn, dfd in [(1, 1), (2, 7), (3.5, 20), (12, 48), (40, 4)]:
        xs = np.array([0.0, 0.2, 1.0, 2.7, 9.0, 150.0])
        assert np.array_equal(dist.f.sf(xs, dfn, dfd), stats.f.sf(xs, dfn, dfd))


def test_mann_whitney_is_scipy_s_exact_and_approximate_with_ties() -> None:
    rng = np.random.default_rng(7)
    for n1 in range(1, 13):
        for n2 in range(1, 13):
            for trial in range(4):
                if trial == 0:  # ties: the normal approximation with the tie correction
                    x, y = rng.integers(0, 4, n1) * 1.0, rng.integers(0, 4, n2) * 1.0
                else:  # no ties: exact while one side has ≤ 8 values
                    x, y = rng.normal(0, 1, n1), rng.normal(0.4 * trial, 1, n2)
                want = float(stats.mannwhitneyu(x, y, alternative="two-sided").pvalue)
                assert mann_whitney_p(x, y) == want, (n1, n2, trial)


def test_the_drift_line_is_linregress_s() -> None:
    rng = np.random.default_rng(3)
    for n in (3, 4, 10, 61, 600):
        x = np.arange(n, dtype=float)
        for slope in (0.0, 0.01, -2.0):
            y = 1000 + slope * x + rng.normal(0, 5, n)
            fit = stats.linregress(x, y)
            assert _line(x, y) == (float(fit.slope), float(fit.pvalue))
    y = 3.0 * np.arange(5.0)  # a perfect line: r = 1, the p-value from the tiny term
    fit = stats.linregress(np.arange(5.0), y)
    assert _line(np.arange(5.0), y) == (float(fit.slope), float(fit.pvalue))


def test_show_and_report_do_not_import_scipy_stats(tmp_path: Path) -> None:
    """A campaign with verdicts, drifts and Mann-Whitney p-values, shown and reported in a
    process of its own: scipy.stats never loaded (it fails when one of them imports it)."""
    from helpers.synthetic_runs import fill

    from pglab.store import open_store

    store = tmp_path / "r.sqlite"
    with open_store(str(store)) as s:
        fill(s, "syn", clients=(1, 4), repeats=3, seconds=30)
    code = (
        "import sys\nfrom pglab.cli import main\n"
        f"for argv in (['show', 'syn', '--store', {str(store)!r}],\n"
        f"             ['report', 'syn', '--store', {str(store)!r}, '--lab-dir', "
        f"{str(tmp_path)!r}, '-o', {str(tmp_path / 'r.html')!r}]):\n"
        "    try:\n        main(argv)\n    except SystemExit as e:\n        assert not e.code, e\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "+" in done.stdout and (tmp_path / "r.html").is_file()  # verdicts were given
    assert done.stdout.splitlines()[-1] == "False"
