"""Every ``pglab`` command starts by importing the command line: the libraries that take a
second to import (matplotlib for charts, optuna with SQLAlchemy for tuning) are imported only by
the commands that use them, so ``pglab --help`` or ``pglab ls`` do not wait for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("matplotlib", "optuna", "sqlalchemy")


def test_the_command_line_imports_no_heavy_library() -> None:
    code = "import sys, pglab.cli; print(' '.join(sorted(m for m in sys.modules if '.' not in m)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert "pglab" in loaded  # the check sees what was imported
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_a_chart_still_gets_matplotlib_when_it_draws() -> None:
    code = (
        "import sys; from pglab.report import charts; charts.load(); "
        "import matplotlib; print(matplotlib.get_backend(), 'matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["Agg", "True"]


def test_a_report_imports_optuna_only_for_a_tune_study(tmp_path) -> None:
    # optuna's import is 0.4 s of CPU of every `pglab report` otherwise (bench/report.py)
    tests = Path(__file__).resolve().parents[1]
    code = (
        f"import sys; sys.path.insert(0, {str(tests)!r}); from pathlib import Path; "
        "from helpers.synthetic_runs import fill; from pglab.store import open_store; "
        "from pglab.cli.report import write_report; home = Path(sys.argv[1]); "
        "store = open_store(str(home / 'r.sqlite')); "
        "fill(store, 'plain', variants=('base',), scripts=('tpcb-like',), clients=(1,), "
        "repeats=1, seconds=5); "
        "write_report(store, 'plain', home / 'r.html', home, str(home / 'r.sqlite')); "
        "print((home / 'r.html').exists(), 'optuna' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert out.stdout.split()[-2:] == ["True", "False"]
