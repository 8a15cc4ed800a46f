"""The report rendered by a real browser: headless Chromium (Debian's ``chromium`` package, which
``.ci/run`` installs) loads the page from disk with the network off, every chart decodes, the
console shows no error, and a screenshot is kept in ``artifacts/``."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers.synthetic_runs import fill

from pglab import report
from pglab.store import open_store

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]  # fmt: skip

pytestmark = [
    pytest.mark.integration,  # a browser, not a server: slow all the same
    pytest.mark.skipif(CHROMIUM is None, reason="apt-get install chromium"),
]


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


def chart_drawn(dom: str, point: int) -> bool:
    """Whether the point's chart holds a plotly figure in the dumped page (its div, up to the
    point's data that follows it)."""
    start = dom.find(f'id="pchart-{point}"')
    end = dom.find(f'id="pdata-{point}"', start)
    return 0 <= start < end and "main-svg" in dom[start:end]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    with open_store(str(tmp / "r.sqlite")) as store:
        fill(store, "browser <b>test</b>", variants=("base", "<script>alert(1)</script>"),
             repeats=3, seconds=30, failed=1)  # fmt: skip
        return report.write(store, "browser <b>test</b>", tmp / "report.html", tmp).html


def with_script(page: Path, out: Path, on_load: str) -> Path:
    """``page`` with ``on_load`` (JavaScript) run when it has loaded."""
    script = f'<script>window.addEventListener("load", function () {{ {on_load} }});</script>'
    out.write_text(page.read_text().replace("</body>", script + "</body>"))
    return out


def test_every_chart_draws_and_the_console_is_clean(page: Path, tmp_path: Path) -> None:
    dom, stderr = browse(page, tmp_path, "--dump-dom")
    state = body_state(dom)
    assert state["charts-total"] == "3" and state["points-total"] == "20"
    assert state["charts-drawn"] == state["charts-total"], state
    assert state["points-drawn"] == "0"  # none is drawn before it is scrolled to
    assert state["errors"] == ""
    assert console_errors(stderr) == []
    assert "<script>alert(1)</script>" not in dom.split("<script>\n(function")[0]
    # every point's chart drawn at once (pglabDrawAll), six panels each, nothing complains
    drawn = with_script(page, tmp_path / "all.html", (
        "window.pglabDrawAll(); document.body.dataset.panels = String("
        "document.querySelectorAll('#pchart-1 .cartesianlayer .subplot').length);"
        "document.body.dataset.traces = String("
        "document.querySelectorAll('#pchart-1 .scatterlayer .trace').length);"
    ))  # fmt: skip
    dom, stderr = browse(drawn, tmp_path, "--virtual-time-budget=20000", "--dump-dom")
    state = body_state(dom)
    assert state["points-drawn"] == "20" and state["errors"] == "", state
    assert console_errors(stderr) == []
    assert int(state["panels"]) >= 6
    # 3 repeats: TPS and the 2 others; p50/p95/p99/max; 8 wait layers; 3 buffer writers and
    # WAL; 4 CPU layers and pgbench's; read, write and dirty memory
    assert state["traces"] == str(3 + 4 + 8 + 4 + 5 + 3), state


def test_screenshot_is_saved_as_an_artifact(page: Path, tmp_path: Path) -> None:
    shot = REPO / "artifacts" / "report.png"
    shot.parent.mkdir(exist_ok=True)
    shot.unlink(missing_ok=True)
    browse(page, tmp_path, "--window-size=1400,4000", f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000  # a drawn page, not a blank one


def test_a_point_s_chart_as_a_reader_sees_it(page: Path, tmp_path: Path) -> None:
    """The first point scrolled to, as a reader opens it: its chart is drawn there (a
    screenshot kept in ``artifacts/report-point.png``) with its six panels' titles and a
    legend naming the other repeats; what was not drawn is not drawn."""
    shot = REPO / "artifacts" / "report-point.png"
    shot.unlink(missing_ok=True)
    top = with_script(page, tmp_path / "point.html", (
        "var m = document.querySelector('main'), p = document.getElementById('point-1');"
        "while (m.firstElementChild !== p) { m.removeChild(m.firstElementChild); }"
        "window.pglabDraw(1);"  # now, not when the observer next looks: the screenshot waits not
    ))  # fmt: skip
    browse(top, tmp_path, "--window-size=1400,1000", "--virtual-time-budget=20000",
           f"--screenshot={shot}")  # fmt: skip
    assert shot.stat().st_size > 100_000  # six panels of lines, not an empty frame
    dom, _ = browse(top, tmp_path, "--window-size=1400,1000", "--virtual-time-budget=20000",
                    "--dump-dom")  # fmt: skip
    chart = dom[dom.index('id="pchart-1"') : dom.index('id="pdata-1"')]
    for title in ("TPS per second", "Latency percentiles", "Wait events", "Buffers written",
                  "CPU %", "Disk MB/s"):  # fmt: skip
        assert title in chart, title
    assert "the other 2 repeat(s)" in chart and "CPU:running" in chart
    # axis labels as a reader reads them: no 4.77e-17 where a right-hand axis meets 0
    ticks = re.findall(r'class="[xy]\d*tick"><text[^>]*>([^<]*)</text>', chart)
    assert ticks and not [t for t in ticks if re.search(r"\de[-−+]?\d", t)], ticks
    assert re.search(r'id="pchart-8" data-point="8"></div>', dom)  # closed: not drawn


def test_a_broken_chart_and_a_script_error_are_caught(page: Path, tmp_path: Path) -> None:
    """The check can fail: a chart that does not decode and a script error are reported."""
    broken = tmp_path / "broken.html"
    png = 'src="data:image/png;base64,'
    text = page.read_text().replace(png + "iVBOR", png + "XX", 1)
    text = text.replace('<script type="application/json" id="pdata-2">{',
                        '<script type="application/json" id="pdata-2">{{', 1)  # fmt: skip
    text = text.replace("</body>", "<script>undefinedFunction();</script><script>"
                        "window.addEventListener('load', function () { window.pglabDrawAll(); });"
                        "</script></body>")  # fmt: skip
    broken.write_text(text)
    dom, stderr = browse(broken, tmp_path, "--virtual-time-budget=20000", "--dump-dom")
    state = body_state(dom)
    assert int(state["charts-drawn"]) == int(state["charts-total"]) - 1
    assert "chart not drawn" in state["errors"]
    assert "undefinedFunction" in state["errors"] or console_errors(stderr)
    assert "point chart 2:" in state["errors"] and state["points-drawn"] == "19", state


def test_a_closed_point_draws_when_opened_and_scrolled_to(page: Path, tmp_path: Path) -> None:
    """Point 8 (closed when the page loads: the first 6 are open) is opened and scrolled to by
    the reader: its chart is drawn then, with plotly.js run from the page on that first need,
    and no other chart with it."""
    opened = with_script(page, tmp_path / "opened.html", (
        "var d = document.getElementById('point-8'); d.open = true;"
        "requestAnimationFrame(function () { d.scrollIntoView(); });"
        "var waited = 0; (function look() {"  # until drawn, or 9 s of the page's time
        " var drawn = document.querySelectorAll('#pchart-8 .main-svg').length > 0;"
        " document.body.dataset.drawn8 = String(drawn);"
        " if (!drawn && (waited += 250) < 9000) { setTimeout(look, 250); } })();"
    ))  # fmt: skip
    # headless Chromium's virtual time now and then ends the page before the IntersectionObserver
    # has called back at all (no point drawn, not even started: about one run in four on this
    # machine, also with the wait above), or on a loaded machine after the wait above has given
    # up (CI once: two points drawn, the wait's last look before point 8's); the chart is looked
    # for in the page as dumped at the end, and another browser run must draw it
    for _ in range(3):
        dom, stderr = browse(opened, tmp_path, "--virtual-time-budget=12000", "--dump-dom")
        state = body_state(dom)
        if chart_drawn(dom, 8):
            break
    assert chart_drawn(dom, 8) and state["errors"] == "", state
    assert state["points-drawn"] in ("1", "2")  # point 8, and maybe 9 just below it (closed: no)
    assert console_errors(stderr) == []
