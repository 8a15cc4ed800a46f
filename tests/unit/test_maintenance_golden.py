"""What a person sees of a maintenance campaign (golden files under tests/data/golden/,
rewritten with PGLAB_UPDATE_GOLDEN=1): `pglab show` compares the points of a `parallel` axis
with the point at its first value (Δ% vs parallel=0), and `ls` and `compare` say MB/s, not tps
(`ls` of every campaign, pgbench's and operations' both, says each value's unit); the report's
point chart draws the progress phases where a pgbench run has its TPS and latency."""

from __future__ import annotations

import io
import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from synthetic_runs import fill  # noqa: E402

from pglab.campaign.spec import PhaseSpec  # noqa: E402
from pglab.cli import compare, ls, show  # noqa: E402
from pglab.cli.common import Where  # noqa: E402
from pglab.maintenance.figures import (  # noqa: E402
    OPERATION_KIND,
    PROGRESS_COLUMNS,
    figures,
    progress_row,
)
from pglab.records import PgbenchReport, PhaseResult, RunResult  # noqa: E402
from pglab.store import open_store  # noqa: E402

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden"
NAME = "index-workers"
T0 = 1_790_000_000.0


def _operation_run(parallel: int, repeat: int, mb_s: float, t0: float) -> RunResult:
    label, key = f"base parallel={parallel}", f"p{parallel}"
    phase = PhaseSpec("index", (), operation="create_index", parallel=parallel)
    nbytes = 650_000_000
    elapsed = nbytes / 1e6 / mb_s
    figs = figures(phase, elapsed, nbytes, None, parallel, 65536, 1_000_000, 5_000_000)
    rows: list[list[Any]] = []
    for i in range(5):  # scanning the table at a steady pace, then loading the tree
        row = (
            ("building index: scanning table", 4000 * i, 16000, "blocks")
            if i < 4
            else ("building index: loading tuples in tree", 500_000, 1_000_000, "tuples")
        )
        rows.append(progress_row(t0 + 0.5 * i, row, rows))
    progress = {"columns": PROGRESS_COLUMNS, "rows": rows}
    result = PhaseResult("index", 1, True, t0, elapsed, ("CREATE INDEX ...",),
                         PgbenchReport(tps=mb_s, transactions=0, duration_s=elapsed),
                         tables={OPERATION_KIND: figs.to_table(),
                                 "progress.create_index": progress})  # fmt: skip
    metrics = {"tps": mb_s, "mb_s": mb_s, "phase.index.tps": mb_s, "phase.index.mb_s": mb_s,
               "phase.index.elapsed_s": elapsed, "phase.index.wal_bytes": 1e6,
               "phase.index.tuples_s": figs.tuples_s or 0.0,
               "phase.index.workers_launched": float(parallel)}  # fmt: skip
    spec = {"variant": "base", "axes": [["parallel", parallel]], "campaign": NAME,
            "repeat": repeat, "point_key": key, "phases": [], "derived": []}  # fmt: skip
    return RunResult(campaign=NAME, run_key=f"{key}/{repeat}", point_key=key, repeat=repeat,
                     variant="base", label=label, spec=spec, status="ok", started_at=t0,
                     finished_at=t0 + elapsed + 1, phases=(result,), metrics=metrics,
                     fingerprint={"server_version": "18.6"})  # fmt: skip


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("golden-maint") / "r.sqlite"
    rng = random.Random(4)
    with open_store(str(path)) as store:
        doc = {"name": NAME, "repeats": 4, "workload": {"operation": "create_index"},
               "matrix": {"parallel": [0, 1]}}  # fmt: skip
        store.ensure_campaign(NAME, doc, None)
        t = T0
        for rep in range(1, 5):
            for parallel in (0, 1):
                mb_s = (210.0 if parallel == 0 else 330.0) * rng.gauss(1, 0.02)
                store.save_run(_operation_run(parallel, rep, mb_s, t))
                t += 10
        fill(store, name="tpcb", variants=("base",), scripts=("tpcb-like",), clients=(1,),
             repeats=1, seconds=3)  # fmt: skip
    return path


def test_maintenance_campaign_as_a_person_sees_it(store_path: Path, monkeypatch) -> None:
    console = Console(width=100, file=io.StringIO(), record=True, highlight=False,
                      color_system=None)  # fmt: skip
    for module in (show, ls, compare):
        monkeypatch.setattr(module, "console", console)
    where = Where(store=str(store_path))
    with open_store(str(store_path)) as store:
        show.print_points(store, NAME)
    assert ls.run(where, NAME) == 0
    assert ls.run(where, None) == 0  # every campaign: pgbench's tps beside operations' MB/s
    assert compare.run(where, f"{NAME}:parallel=0", f"{NAME}:parallel=1") == 0
    assert compare.run(where, "1", "2") == 0
    text = console.export_text()
    shown, rest = text.split("runs of index-workers")
    listed = rest.split("compared with")[0]
    # the parallel axis is compared with its first value: about +57%, significant
    assert "Δ% vs parallel=0" in shown and "baseline" in shown and "+5" in shown
    assert "median MB/s" in shown and "tps" not in shown
    header = next(line for line in listed.splitlines() if "status" in line)
    assert "MB/s" in header and "tps" not in header
    assert "figure" in listed and " tps" in listed  # both kinds: each value with its unit
    assert "median MB/s A" in text and "log MB/s" in text and "median tps" not in text
    assert "phase.index.wal_bytes" in text and "phase.index.tuples_s" in text
    golden = GOLDEN / "maintenance_100.txt"
    if os.environ.get("PGLAB_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text(), f"differs from {golden}: PGLAB_UPDATE_GOLDEN=1 rewrites it"


def test_the_report_draws_an_operation_runs_progress_phases(store_path: Path) -> None:
    from matplotlib.figure import Figure

    from pglab.report import charts, model, progress_chart

    with open_store(str(store_path)) as store:
        rep = model.gather(store, NAME)
        pgbench = model.gather(store, "tpcb")
    run = rep.points[0].representative
    assert progress_chart.is_operation_run(run)
    assert not progress_chart.is_operation_run(pgbench.points[0].representative)
    ax_progress, ax_rate = Figure().subplots(1, 2)
    # every row with a share done is drawn; the rate from the scan's second row on (blocks)
    assert progress_chart.panel_progress(ax_progress, run, run.phases[0].started_at) == 5
    assert progress_chart.panel_rate(ax_rate, run, run.phases[0].started_at) == 3
    assert [t.get_text() for t in ax_progress.texts][:2] == [
        " building index: scanning table", " building index: loading tuples in tree"
    ]  # fmt: skip
    # the point's chart has no empty panel for the TPS and latency an operation does not have
    chart = charts.point_chart(rep.points[0], 1)
    assert chart is not None and not any("TPS" in m or "atency" in m for m in chart.missing)
    drawn = charts.point_chart(pgbench.points[0], 1)  # a pgbench run's chart: its TPS as ever
    assert drawn is not None and not any("TPS" in m for m in drawn.missing)
