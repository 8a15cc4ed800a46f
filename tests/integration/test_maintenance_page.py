"""The report of a maintenance campaign in a real browser (headless Chromium, as
``test_report_browser.py``): each point's chart draws its progress phases (% done, and MB/s)
where a pgbench point has TPS and latency, with their titles, and nothing complains."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.synthetic_operations import fill_operations
from test_report_browser import CHROMIUM, body_state, browse, console_errors, with_script

from pglab import report
from pglab.store import open_store

pytestmark = [
    pytest.mark.integration,  # a browser, not a server: slow all the same
    pytest.mark.skipif(CHROMIUM is None, reason="apt-get install chromium"),
]


def test_a_maintenance_point_draws_its_progress_phases(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "r.sqlite")) as store:
        fill_operations(store, "index-workers")
        page = report.write(store, "index-workers", tmp_path / "report.html", tmp_path).html
    html = page.read_text()  # the campaign charts named by their figure
    assert "MB/s per point" in html and "TPS per point" not in html
    drawn = with_script(page, tmp_path / "all.html", (
        "window.pglabDrawAll(); document.body.dataset.traces = String("
        "document.querySelectorAll('#pchart-1 .scatterlayer .trace').length);"
    ))  # fmt: skip
    dom, stderr = browse(drawn, tmp_path, "--virtual-time-budget=20000", "--dump-dom")
    state = body_state(dom)
    assert state["points-drawn"] == "2" and state["errors"] == "", state
    assert console_errors(stderr) == []
    chart = dom[dom.index('id="pchart-1"') : dom.index('id="pdata-1"')]
    assert "Operations' progress phases" in chart and "Rate of each progress phase" in chart
    assert "TPS per second" not in chart and "Latency percentiles" not in chart
    assert "create_index: building index: scanning table" in chart
    # two progress phases (% done) and the scan's MB/s; no telemetry in these synthetic runs
    assert state["traces"] == "3", state
