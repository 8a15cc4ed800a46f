"""The report rendered by a real browser: headless Chromium (Debian's ``chromium`` package, which
``.ci/run`` installs) loads the page from disk with the network off, every chart decodes, the
console shows no error, and a screenshot is kept in ``artifacts/``."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pglab import report
from pglab.store import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from synthetic_runs import fill  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]  # fmt: skip

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="apt-get install chromium")


def browse(page: Path, tmp: Path, *extra: str) -> tuple[str, str]:
    """Chromium's output (stdout, stderr) for ``page`` with ``extra`` flags."""
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'chromium'}", *extra, page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return done.stdout, done.stderr


def console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if "CONSOLE" in line and re.search(r"error|uncaught", line, re.I)]  # fmt: skip


def body_state(dom: str) -> dict[str, str]:
    body = re.search(r"<body([^>]*)>", dom)
    assert body, dom[:500]
    return dict(re.findall(r'data-([\w-]+)="([^"]*)"', body.group(1)))


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    with open_store(str(tmp / "r.sqlite")) as store:
        fill(store, "browser <b>test</b>", variants=("base", "<script>alert(1)</script>"),
             repeats=3, seconds=30, failed=1)  # fmt: skip
        return report.write(store, "browser <b>test</b>", tmp / "report.html", tmp).html


def test_every_chart_draws_and_the_console_is_clean(page: Path, tmp_path: Path) -> None:
    dom, stderr = browse(page, tmp_path, "--dump-dom")
    state = body_state(dom)
    assert int(state["charts-total"]) == 3 + 20  # campaign charts + one per point
    assert state["charts-drawn"] == state["charts-total"], state
    assert state["errors"] == ""
    assert console_errors(stderr) == []
    assert "<script>alert(1)</script>" not in dom.split("<script>\n(function")[0]


def test_screenshot_is_saved_as_an_artifact(page: Path, tmp_path: Path) -> None:
    shot = REPO / "artifacts" / "report.png"
    shot.parent.mkdir(exist_ok=True)
    shot.unlink(missing_ok=True)
    browse(page, tmp_path, "--window-size=1400,4000", f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000  # a drawn page, not a blank one


def test_a_broken_chart_and_a_script_error_are_caught(page: Path, tmp_path: Path) -> None:
    """The check can fail: a chart that does not decode and a script error are reported."""
    broken = tmp_path / "broken.html"
    png = 'src="data:image/png;base64,'
    text = page.read_text().replace(png + "iVBOR", png + "XX", 1)
    text = text.replace("</body>", "<script>undefinedFunction();</script></body>")
    broken.write_text(text)
    dom, stderr = browse(broken, tmp_path, "--dump-dom")
    state = body_state(dom)
    assert int(state["charts-drawn"]) == int(state["charts-total"]) - 1
    assert "chart not drawn" in state["errors"]
    assert "undefinedFunction" in state["errors"] or console_errors(stderr)


def test_a_zoomable_chart_draws_on_click(page: Path, tmp_path: Path) -> None:
    """plotly.js (inlined) draws a point's per-second TPS and latency when its button is
    clicked: every trace is there and nothing complains."""
    clicked = tmp_path / "clicked.html"
    click = (
        '<script>window.addEventListener("load", function () {'
        ' document.querySelector("button.zoom").click();'
        " document.body.dataset.traces = String("
        '  document.querySelectorAll("#plot-1 .scatterlayer .trace").length);'
        ' document.body.dataset.buttons = String(document.querySelectorAll("button.zoom").length);'
        "});</script></body>"
    )
    clicked.write_text(page.read_text().replace("</body>", click))
    dom, stderr = browse(clicked, tmp_path, "--virtual-time-budget=5000", "--dump-dom")
    state = body_state(dom)
    assert state["errors"] == "", state
    assert console_errors(stderr) == []
    # 3 repeats: the representative's TPS, the 2 others, and p50/p95/p99/max latency
    assert state["traces"] == "7", state
    assert state["buttons"] == "19"  # the clicked one is gone, the other points' remain
