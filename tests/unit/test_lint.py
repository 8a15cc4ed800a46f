"""The code style CI holds the code to, run as tests so that the README's one test command checks
it too: ruff's lint rules and its formatting (pyproject.toml [tool.ruff]) over src, tests,
bench and docs/hooks (the documentation's generators), and mypy over src and bench at the
strictness of pyproject.toml [tool.mypy]."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUFF = Path(sys.executable).with_name("ruff")
MYPY = Path(sys.executable).with_name("mypy")


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "src", "tests", "bench", "docs/hooks"],
        ["format", "--check", "src", "tests", "bench", "docs/hooks"],
    ],
)
def test_ruff(argv: list[str]) -> None:
    done = subprocess.run([str(RUFF), *argv], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy() -> None:
    # src and bench, strictly (pyproject.toml [tool.mypy]: files, strict). A bench is run by
    # hand, rarely: type-checking it against pglab (which ships py.typed) is what catches an API
    # it still calls the old way (Executor(store=None) died in bench/kits.py)
    done = subprocess.run([str(MYPY)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "243 source files" in done.stdout or "source files" in done.stdout, done.stdout
