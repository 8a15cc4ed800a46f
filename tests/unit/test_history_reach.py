"""What `pglab history` says of a series without a change point (issue 52): over 3 executions
it said "no change point: one level throughout" where the permutation test could not have found
any change, and `--fail-above` passed; now it says how many executions a change of the
threshold needs at the series' noise, and `--fail-above` exits 3 (undecided). On synthetic
stores (``helpers.synthetic_runs``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from helpers.synthetic_runs import fill
from rich.console import Console

from pglab.cli import history
from pglab.cli.common import Where
from pglab.store import open_store

POINT = "base script=select-only clients=1"


def _store(path: Path, executions: int) -> Where:
    with open_store(str(path)) as s:
        for n in range(1, executions + 1):
            fill(s, f"nightly@{n}", variants=("base",), scripts=("select-only",), clients=(1,),
                 repeats=3, seconds=5, seed=n)  # fmt: skip
    return Where(store=str(path))


@pytest.fixture
def said(monkeypatch):
    console = Console(width=200, file=io.StringIO(), record=True, highlight=False,
                      color_system=None)  # fmt: skip
    monkeypatch.setattr(history, "console", console)
    return console


def test_three_executions_are_too_few_and_fail_above_is_undecided(tmp_path, said, capsys):
    where = _store(tmp_path / "r.sqlite", 3)
    assert history.run(where, "nightly") == 0  # no threshold asked: only said
    text = said.export_text()
    assert "one level throughout" not in text, text
    line = next(ln for ln in text.splitlines() if ln.startswith(f"  {POINT}: "))
    assert line.startswith(f"  {POINT}: no change point found, but too few executions to find "
                           "a change of 10% at this noise ("), line  # fmt: skip
    assert "needed; 3 here, noise " in line and "% between executions)" in line, line
    assert history.run(where, "nightly", fail_above=5) == history.UNDECIDED == 3
    text = said.export_text()
    assert "a change of 5% at this noise" in text
    assert "undecided: 1 point(s) without enough executions to find a change of 5% (exit 3)" in text
    assert history.run(where, "nightly", fail_above=5, as_json=True) == 3
    (point,) = json.loads(capsys.readouterr().out)["points"]
    reach = point["reach"]
    assert reach["executions"] == 3 and reach["effect_pct"] == 5 and reach["enough"] is False
    assert reach["needed"] is None or reach["needed"] >= 9
    assert point["changes"] == [] and "series" in point  # the keys it had, kept


def test_a_threshold_far_above_the_noise_passes_with_enough_executions(tmp_path, said):
    """Twelve quiet executions (fill's noise: 2% a run, 3 runs each) can find a 50% change:
    one level, exit 0."""
    where = _store(tmp_path / "r.sqlite", 12)
    assert history.run(where, "nightly", fail_above=50) == 0
    assert f"  {POINT}: no change point: one level throughout" in said.export_text()


def test_the_help_says_the_floor_and_the_exit_status() -> None:
    from pglab.analysis.history import MIN_EXECUTIONS

    text = " ".join(history.HELP.split())
    assert f"(fewer than {MIN_EXECUTIONS} at any noise)" in text
    assert "3 with --fail-above PCT when no point regressed" in text
