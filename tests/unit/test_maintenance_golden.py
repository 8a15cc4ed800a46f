"""What a person sees of a maintenance campaign (golden files under tests/data/golden/,
rewritten with PGLAB_UPDATE_GOLDEN=1): `pglab show` compares the points of a `parallel` axis
with the point at its first value (Δ% vs parallel=0), and `ls` and `compare` say MB/s, not tps
(`ls` of every campaign, pgbench's and operations' both, says each value's unit); the report's
point chart draws the progress phases where a pgbench run has its TPS and latency."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from helpers.synthetic_operations import fill_operations
from helpers.synthetic_runs import fill
from rich.console import Console

from pglab.cli import compare, ls, show
from pglab.cli.common import Where
from pglab.store import open_store

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden"
NAME = "index-workers"


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("golden-maint") / "r.sqlite"
    with open_store(str(path)) as store:
        fill_operations(store, NAME)
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

    from pglab.report import browser, charts, model, progress_chart

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
    # the numbers the page draws from: the progress phases, no TPS or latency said missing
    data = browser.point_data(rep.points[0])
    assert data is not None and [p["name"] for p in data["progress"]] == [
        "create_index: building index: scanning table",
        "create_index: building index: loading tuples in tree",
    ]  # fmt: skip
    assert data["progress"][0]["pct"][1] == [0.0, 25.0, 50.0, 75.0]
    assert data["progress"][1]["rate"] is None  # counted in tuples: no MB/s
    assert not any(m.startswith(("TPS", "Latency")) for m in data["missing"])
    assert "progress" not in (browser.point_data(pgbench.points[0]) or {})
    drawn = charts.point_chart(pgbench.points[0], 1)  # a pgbench run's chart: its TPS as ever
    assert drawn is not None and not any("TPS" in m for m in drawn.missing)
