"""Every ``pglab`` command starts by importing the command line: the libraries that take a
second to import (matplotlib for charts, optuna with SQLAlchemy for tuning) are imported only by
the commands that use them, so ``pglab --help`` or ``pglab ls`` do not wait for them."""

from __future__ import annotations

import subprocess
import sys

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
