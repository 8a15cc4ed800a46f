"""The report's typed views against what reads them: every key the page's script (``points.js``)
reads of a point's numbers is one the ``TypedDict``s declare (a key renamed on one side only
fails here, not as an empty panel in a browser), and a point's telemetry as the page shows it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.synthetic_runs import fill

from pglab import report
from pglab.report import browser, flames, progress_chart, queries_chart
from pglab.store import open_store
from pglab.telemetry import summary

JS = (Path(report.__file__).parent / "points.js").read_text()


def _keys(typed: type) -> set[str]:
    return set(typed.__required_keys__ | typed.__optional_keys__)  # type: ignore[attr-defined]


def _read(pattern: str) -> set[str]:
    return set(re.findall(pattern, JS))


def test_every_key_the_page_script_reads_is_declared() -> None:
    point = _read(r"\bd\.([a-z_]+)")
    assert point and point <= _keys(browser.PointData), point - _keys(browser.PointData)
    # what the page's caption says, not its script
    assert _keys(browser.PointData) - point == {"missing", "runs"}
    assert _read(r"\.waits\.([a-z_]+)") == _keys(browser.Waits)
    assert _read(r"\bt\.([a-z_]+)") <= _keys(flames.Flame)  # the icicle's nodes
    assert _read(r"\.flame_diff\.([a-z_]+)") <= _keys(flames.FlameDiff)
    assert _read(r"\bq\.([a-z_]+)") == _keys(queries_chart.QueryStream)
    assert _read(r"\bp\.([a-z_]+)") == _keys(progress_chart.ProgressLine)


@pytest.fixture(scope="module")
def gathered(tmp_path_factory: pytest.TempPathFactory) -> report.Report:
    tmp = tmp_path_factory.mktemp("views")
    with open_store(str(tmp / "r.sqlite")) as store:
        fill(store, "views", variants=("base",), scripts=("tpcb-like",), clients=(2,), repeats=1,
             seconds=3)  # fmt: skip
        return report.gather(store, "views", home=tmp)


def test_a_point_s_telemetry_is_its_summary_and_its_lines(gathered: report.Report) -> None:
    (pt,) = gathered.points
    assert pt.telemetry is not None and pt.representative is not None
    # the lines are what ``pglab show`` prints of the same figures and waits
    shown = summary.lines({"figures": pt.telemetry.figures, "top_waits": pt.telemetry.top_waits,
                           "notes": []})  # fmt: skip
    assert pt.telemetry.lines[: len(shown)] == shown and shown
    cells = report.summary_cells(pt)
    name, pct, _ = next(w for w in pt.telemetry.top_waits if w[0] != "CPU:running")
    assert cells["wait"] == f"{name} {pct:.0f}%"
    for cell, figure, scale in (("hit", "read_hit_ratio", 100), ("wal", "wal_mb_s", 1)):
        v = pt.telemetry.figures.get(figure)  # the synthetic runs have no statistics samples
        assert cells[cell] == ("–" if v is None else f"{v * scale:,.2f}")
    assert any(line.startswith("CPU user") for line in pt.telemetry.lines)
    # the environment is the first run's fingerprint without its settings
    assert "settings" not in gathered.environment
    assert gathered.environment["hostname"] == pt.representative.fingerprint["hostname"]
