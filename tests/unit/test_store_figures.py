"""Each run's figure stored as what it is (issue 52): a maintenance operation's MB/s, a
TPC-H-like power run's QphH, a replay's statements per active second are their kind's metrics
(``mb_s``, ``power``, ``replay.statements_active_s``), their phases' reports name them, and
neither the run's nor the phase's ``tps`` holds them. A store written before (schema version 5,
``tests/data/stores/before-figures.sqlite``: every such figure in ``tps``) is upgraded when
opened, with the same numbers; what that version printed of it where it already named the
figure is printed byte for byte, and where it said "tps" of a non-TPS figure it now names it."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from helpers.synthetic_operations import _operation_run

from pglab.campaign.spec import DerivedSpec, RunSpec
from pglab.records import PgbenchReport, PhaseResult
from pglab.run.metrics import run_metrics
from pglab.store import open_store, schema
from pglab.store.numbers import metrics_json

DATA = Path(__file__).resolve().parents[1] / "data"
STORE = DATA / "stores" / "before-figures.sqlite"
KINDS = {"index-workers": "mb_s", "tpch-wm": "power", "replay-sync": "replay.statements_active_s"}
SEPARATOR = "=== next command ==="
COMMANDS = {  # golden file (what the version before printed) or name -> the command
    "before_figures_show_tpch-wm.txt": ["show", "tpch-wm"],
    "before_figures_show_index-workers.txt": ["show", "index-workers"],
    "before_figures_compare_tpch-wm.txt": ["compare", "tpch-wm:small-wm", "tpch-wm:big-wm"],
    "run 7": ["show", "7"],  # a power run: its phases' table said "tps"
    "run 13": ["show", "13"],  # a replay's
    "replay-sync": ["show", "replay-sync"],  # its points' figure was "median tps"
}
SCRIPT = """
from pglab.cli import main
for argv in {commands!r}:
    assert main(argv) == 0, argv
    print({separator!r}, flush=True)
"""


def _old(path: Path) -> dict[int, tuple[float | None, dict[str, float], str]]:
    """Each run's ``tps``, metrics and campaign as the version before stored them."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT r.id, r.tps, r.metrics_json, c.name FROM runs r "
            "JOIN campaigns c ON c.id = r.campaign_id"
        ).fetchall()
    return {i: (tps, json.loads(m), name) for i, tps, m, name in rows}


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("figures") / "r.sqlite"
    shutil.copy(STORE, path)
    return path


def test_an_older_store_is_upgraded_with_each_figure_under_its_own_name(upgraded: Path) -> None:
    old = _old(STORE)
    assert {tps is not None for tps, _, _ in old.values()} == {True}  # all in tps, before
    with open_store(str(upgraded)) as store:
        assert store.schema_version == schema.latest_version() >= 6
        runs = {r.id: r for r in store.list_runs()}
        for run_id, (tps, metrics, campaign) in old.items():
            run = runs[run_id]
            if campaign == "tpcb":  # a TPS: nothing changed
                assert (run.tps, run.metrics) == (tps, metrics)
                continue
            figure = KINDS[campaign]
            assert run.tps is None and run.metrics[figure] == tps  # the same number, exactly
            assert "tps" not in run.metrics
            assert not [k for k in run.metrics if k.endswith(".tps")]
            assert {k: v for k, v in run.metrics.items() if k != figure} == {
                k: v
                for k, v in metrics.items()
                if k not in ("tps", figure) and not k.endswith(".tps")
            }
            (phase,) = store.get_run(run_id).phases
            assert phase.tps is None and phase.value == tps
        assert store.get_run(1).phases[0].figure == "MB/s"
        assert store.get_run(7).phases[0].figure == "QphH"
        assert store.get_run(13).phases[0].figure == "statements/active s"
        assert store.get_run(19).phases[0].figure == "tps"
        # their tidy rows are made again (none had been: the migration leaves none stale)
        assert store.runs_without_tidy("tpch-wm") == [7, 8, 9, 10, 11, 12]
    with open_store(str(upgraded)) as store:  # once: opening again changes nothing
        assert {r.id: (r.tps, r.metrics) for r in store.list_runs()} == {
            i: (r.tps, r.metrics) for i, r in runs.items()
        }


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What this version prints of a copy of the store, by golden file (or command) name."""
    where = tmp_path_factory.mktemp("figures-printed")
    store = where / "r.sqlite"
    shutil.copy(STORE, store)
    env = {**os.environ, "COLUMNS": "100", "PGLAB_STORE": str(store)}
    code = SCRIPT.format(commands=list(COMMANDS.values()), separator=SEPARATOR)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=where, capture_output=True, text=True,
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(zip(COMMANDS, done.stdout.split(SEPARATOR + "\n"), strict=False))


@pytest.mark.parametrize("golden", [k for k in COMMANDS if k.endswith(".txt")])
def test_what_named_its_figure_before_prints_the_same(golden: str, printed: dict[str, str]) -> None:
    assert printed[golden] == (DATA / "golden" / golden).read_text()


def test_what_said_tps_of_another_figure_names_it(printed: dict[str, str]) -> None:
    power, replay, points = printed["run 7"], printed["run 13"], printed["replay-sync"]
    assert "┃ QphH ┃" in power and " tps " not in power and "tps =" not in power
    assert "┃ statements/active s ┃" in replay and "tps" not in replay
    assert "replay.statements_active_s = 1,926.0" in replay
    assert "statement" in points  # the points' median column, wrapped at 100 columns
    assert "median tps" not in points and "tps" not in points and "basel" in points


def test_a_new_run_stores_its_figure_under_its_name(tmp_path: Path) -> None:
    run = _operation_run("ops", 0, 1, 210.0, 1_790_000_000.0)
    with open_store(str(tmp_path / "r.sqlite")) as store:
        run_id = store.save_run(run)
        raw = store._rows(
            "SELECT r.tps AS run_tps, p.tps AS phase_tps, p.report_json FROM runs r "
            "JOIN phases p ON p.run_id = r.id WHERE r.id = ?",
            (run_id,),
            shape=dict,
        )
        assert store.load_run(run_id) == run  # the report's figure read back
    assert raw[0]["run_tps"] is None and raw[0]["phase_tps"] is None
    assert json.loads(raw[0]["report_json"])["figure"] == "MB/s"


def _phase(name: str, value: float, figure: str = "tps", measured: bool = True) -> PhaseResult:
    report = PgbenchReport(tps=value, transactions=10, figure=figure)
    return PhaseResult(name, 1, measured, 0.0, 1.0, ("x",), report)


def test_a_run_s_tps_is_of_its_phases_that_are_a_tps() -> None:
    """``tps`` and ``phase.NAME.tps`` only of phases whose figure is one; a ``[[derived]]``
    ratio of two phases' figures whatever they are."""
    phases = [_phase("warm", 500.0), _phase("vacuum", 80.0, "MB/s")]
    metrics = metrics_json(run_metrics(_spec(), phases))
    assert metrics["tps"] == 500.0 and metrics["phase.warm.tps"] == 500.0
    assert "phase.vacuum.tps" not in metrics
    only = metrics_json(run_metrics(_spec(), [_phase("vacuum", 80.0, "MB/s")]))
    assert "tps" not in only and only["failed"] == 0
    ratio = run_metrics(_spec(DerivedSpec("r", "ratio", "warm", "vacuum")), phases)
    assert ratio.get("r") == pytest.approx(80.0 / 500.0)


def _spec(*derived: DerivedSpec) -> RunSpec:
    """A run spec with ``derived`` only: all that ``run_metrics`` reads of it here (the
    kinds' metrics find none of their tables in these phases)."""
    found = SimpleNamespace(derived=derived, dataset=SimpleNamespace(scale=1), phases=())
    return cast(RunSpec, found)
