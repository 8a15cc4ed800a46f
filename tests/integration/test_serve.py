"""``pglab serve`` as a person uses it: a real uvicorn server (the command, in another process)
over a store made by one small real campaign on the embedded PostgreSQL 18, its pages loaded in
headless Chromium (Debian's, as the report's tests): every page loads, the campaign's charts
draw, a point's chart draws, the compare picker's form compares, a campaign running in another
process shows live with counters that move; the security rules; 404s; a store that cannot be
opened. One campaign and one server for the module."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from conftest import pglab_in_background, pglab_run_in_background, wait_for
from helpers.synthetic_runs import fill_executions
from test_report_browser import CHROMIUM, REPO, body_state, chart_drawn, console_errors

from pglab.cli import main
from pglab.lab import Lab
from pglab.store import open_store

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(CHROMIUM is None, reason="apt-get install chromium"),
]

NAME = "<script>alert(1)</script> serve"
CAMPAIGN = f"""
name = {json.dumps(NAME)}
repeats = 2
[dataset]
scale = 1
[workload]
script = "select-only"
duration = 2
latency_log = "off"
[variants.base]
[variants."<b>bold</b>"]
settings = {{ work_mem = "8MB" }}
"""
SECRET = "s3cret-dsn-pw"  # a password in a stored campaign's dsn: shown nowhere


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
    """Status, body and headers of a GET (redirects not followed)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=60) as r:
            return r.status, r.read().decode(errors="replace"), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


def serving(argv: list[str], err: Path) -> Iterator[str]:
    """``pglab serve`` started with ``argv``, its base URL once it answers."""
    port = free_port()
    with pglab_in_background([sys.executable, "-m", "pglab", "serve", "--port", str(port),
                              *argv], err) as proc:  # fmt: skip
        base = f"http://127.0.0.1:{port}/"

        def up() -> bool:
            try:
                return get(base + "static/plotly.js")[0] in (200, 401)
            except OSError:
                return False

        wait_for(up, proc, err, "pglab serve")
        yield base
        proc.send_signal(signal.SIGINT)  # Ctrl-C: it stops, and says so
        assert proc.wait(timeout=30) == 0, err.read_text()


@pytest.fixture(scope="module")
def store(tmp_path_factory, lab: Lab) -> Path:
    """The store of one small real campaign (2 variants × 2 repeats, 2 s each), the
    executions of a synthetic one (a history), and a campaign whose stored spec holds a dsn
    with its password (as an old pglab kept it)."""
    tmp = tmp_path_factory.mktemp("serve")
    path = tmp / "r.sqlite"
    (tmp / "c.toml").write_text(CAMPAIGN)
    assert main(["run", str(tmp / "c.toml"), "--lab-dir", str(lab.home), "--store",
                 str(path)]) == 0  # fmt: skip
    fill_executions(path, "nightly")  # a history: 8 synthetic executions, a change at the 5th
    with open_store(path) as s:
        s.ensure_campaign("with a dsn", {"server": {"dsn": f"postgresql://u:{SECRET}@h/db"}},
                          None)  # fmt: skip
    return path


@pytest.fixture(scope="module")
def server(store: Path, lab: Lab, tmp_path_factory) -> Iterator[str]:
    err = tmp_path_factory.mktemp("serve-err") / "serve.err"
    yield from serving(["--store", str(store), "--lab-dir", str(lab.home)], err)


def run_ids(store: Path) -> list[int]:
    with open_store(store) as s:
        return [r.id for r in s.list_runs(NAME)]


def test_the_campaigns_page_lists_and_filters(server: str, tmp_path: Path) -> None:
    code, page, headers = get(server + "campaigns")
    assert code == 200 and "&lt;script&gt;alert(1)&lt;/script&gt; serve" in page
    assert "<script>alert" not in page and headers["referrer-policy"] == "no-referrer"
    assert "default-src 'self'" in headers["content-security-policy"]
    assert get(server + "campaigns?q=serve")[1].count('href="/campaigns/') == 1
    assert "No campaign matches" in get(server + "campaigns?q=nothing-like-it")[1]
    assert "No campaign matches" in get(server + "campaigns?version=9.6")[1]
    kept = get(server + "campaigns?version=18&since=2000-01-01")[1]
    assert "alert(1)&lt;/script&gt; serve" in kept and "with a dsn" not in kept  # no runs
    code, page, _ = get(server + "campaigns?since=yesterday")
    assert code == 400 and "since=&#39;yesterday&#39; is not a date" in page
    dom, stderr = browse_url(server + "campaigns", tmp_path)
    assert "alert(1)" in dom and console_errors(stderr) == []


def browse_url(url: str, tmp: Path, *extra: str) -> tuple[str, str]:
    """Chromium's DOM of ``url`` (and its stderr) once it has loaded and run its scripts for
    20 s of virtual time, or (``--timeout``, for a page that navigates away) of real time."""
    budget = (
        [] if any(e.startswith("--timeout") for e in extra) else ["--virtual-time-budget=20000"]
    )
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", f"--user-data-dir={tmp / 'chromium'}",
         *budget, *extra, "--dump-dom", url],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    return done.stdout, done.stderr


def test_screenshots_are_saved_as_artifacts(server: str, store: Path, tmp_path: Path) -> None:
    """The campaigns page, a campaign's and a comparison, as a person sees them (in
    ``artifacts/``): drawn pages, not blank ones."""
    choices = [c for c in _options(get(server + "compare")[1]) if c.startswith(NAME + ":")]
    pages = {
        "serve-campaigns.png": "campaigns",
        "serve-campaign.png": "campaigns/" + quote(NAME, safe=""),
        "serve-compare.png": "compare?" + urlencode({"a": choices[0], "b": choices[1]}),
    }
    for name, path in pages.items():
        shot = REPO / "artifacts" / name
        shot.parent.mkdir(exist_ok=True)
        shot.unlink(missing_ok=True)
        subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                        f"--user-data-dir={tmp_path / 'chromium'}", "--window-size=1400,1400",
                        "--virtual-time-budget=10000", f"--screenshot={shot}", server + path],
                       capture_output=True, timeout=120, check=True)  # fmt: skip
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert shot.stat().st_size > 30_000, name


def test_a_campaign_s_page_draws_its_charts_and_points(server: str, tmp_path: Path) -> None:
    url = server + "campaigns/" + quote(NAME, safe="") + "#point-2"
    dom, stderr = browse_url(url, tmp_path, "--window-size=1400,1200")
    state = body_state(dom)
    assert state["charts-total"] == "3" and state["charts-drawn"] == "3", state
    assert state["points-total"] == "2" and state["errors"] == "", state
    assert chart_drawn(dom, 2), "the point scrolled to has its chart drawn"
    assert console_errors(stderr) == []
    # the outline came first; the summary's cells, the warnings and the points' bodies after
    assert state["parts-loaded"] == "1" and int(state["points-loaded"]) >= 1, state
    assert "data-cell=" not in dom and 'id="lazy-sections"' not in dom
    assert "<h2>Warnings</h2>" in dom and 'id="pdata-2"' in dom
    assert "<script>alert(1)</script>" not in dom.split('<script type="application/json"')[0]
    assert "Δ% vs base" in dom and "&lt;b&gt;bold&lt;/b&gt;" in dom
    for n in range(3):  # the charts, as the page asked for them
        code, _, headers = get(server + f"charts/{n}/" + quote(NAME, safe=""))
        assert code == 200 and headers["content-type"] == "image/png"


def test_a_run_s_page_draws_its_series(server: str, store: Path, tmp_path: Path) -> None:
    run = run_ids(store)[0]
    dom, stderr = browse_url(server + f"runs/{run}#point-1", tmp_path, "--window-size=1400,1200")
    state = body_state(dom)
    assert state["points-total"] == "1" and state["errors"] == "", state
    assert chart_drawn(dom, 1) and console_errors(stderr) == []
    assert f"run {run} of the campaign" in dom


def test_a_history_draws_its_series_and_change_point(server: str, tmp_path: Path) -> None:
    dom, stderr = browse_url(server + "history/nightly", tmp_path, "--window-size=1400,1200")
    state = body_state(dom)
    assert state["points"] == "2" and state["drawn"] == "2", state  # base, and other (4 of 8)
    chart = dom[dom.index('id="hchart-1"') : dom.index('id="hdata-1"')]
    assert "main-svg" in chart and console_errors(stderr) == []
    assert '<b class="warn">changed</b> +' in dom


def test_the_compare_picker_compares_in_the_browser(server: str, tmp_path: Path) -> None:
    """The picker's form as the page has it, its inputs given two of its own choices and
    submitted by Chromium: the comparison of the two points, at a URL one can share."""
    _, page, _ = get(server + "compare")
    choices = [c for c in _options(page) if c.startswith(NAME + ":")]
    assert len(choices) == 2, choices
    form = page[page.index('<form class="filters"') : page.index("</form>") + 7]
    form = form.replace('action="/compare"', f'action="{server}compare"')
    test_page = tmp_path / "pick.html"
    test_page.write_text(f"<!DOCTYPE html><body>{form}<script>"
                         f"document.getElementById('pick-a').value = {js(choices[0])};"
                         f"document.getElementById('pick-b').value = {js(choices[1])};"
                         "document.getElementById('picker').submit();</script></body>")  # fmt: skip
    dom, stderr = browse_url(test_page.as_uri(), tmp_path, "--timeout=15000")
    assert 'id="comparison"' in dom, dom[:3000]
    assert "compared with" in dom and "Δ%" in dom and 'class="verdict' in dom
    shared = server + "compare?" + urlencode({"a": choices[0], "b": choices[1]})
    code, again, _ = get(shared)
    assert code == 200 and 'id="comparison"' in again
    code, bad, _ = get(server + "compare?" + urlencode({"a": "no such thing", "b": "1"}))
    assert code == 400 and "names no run, campaign or point" in bad


def js(text: str) -> str:
    """``text`` as a JavaScript string inside a <script> element (a "</script>" in it kept)."""
    return json.dumps(text).replace("</", "<\\/")


def _options(page: str) -> list[str]:
    import html
    import re

    return [html.unescape(v) for v in re.findall(r'<option value="([^"]*)">', page)]


def test_unknown_ids_give_a_404_page(server: str) -> None:
    for path, said in (
        ("campaigns/no-such-campaign", "no campaign named"),
        ("runs/999999", "no run with id 999999"),
        ("charts/7/x", "no chart 7"),
        ("nowhere", "nothing at /nowhere"),
    ):
        code, page, _ = get(server + path)
        assert code == 404 and said in page and "Traceback" not in page, (path, page)


def test_no_stored_password_is_shown(server: str, store: Path) -> None:
    pages = [get(server + p)[1] for p in ("campaigns", "campaigns/with%20a%20dsn", "compare",
                                         "fleet", "live")]  # fmt: skip
    assert "postgresql://u:***@h/db" in pages[1]
    assert not any(SECRET in p for p in pages)


def test_the_fleet_page_of_a_sqlite_store_says_why_it_is_empty(server: str) -> None:
    code, page, _ = get(server + "fleet")
    assert code == 200 and "the fleet&#39;s queue lives in a PostgreSQL store" in page


def test_a_running_campaign_shows_live(server: str, lab: Lab, tmp_path: Path) -> None:
    """A campaign run by another pglab in the same lab: /live.json's counters move while it
    runs, and the page shows it, drawn by its script."""
    camp = tmp_path / "live.toml"
    camp.write_text(
        'name = "live <i>one</i>"\nrepeats = 3\n[dataset]\nscale = 1\n'
        '[workload]\nscript = "select-only"\nduration = 4\nlatency_log = "off"\n'
    )
    err = tmp_path / "run.err"
    with pglab_run_in_background(camp, lab.home, tmp_path / "live.sqlite", err) as proc:

        def running() -> list[dict]:
            return json.loads(get(server + "live.json")[1])["running"]

        wait_for(lambda: any(s["tps"] for s in running()), proc, err, "the live campaign")
        first = running()[0]
        assert first["campaign"] == "live <i>one</i>" and first["run_total"] == 3
        dom, stderr = browse_url(server + "live", tmp_path, "--virtual-time-budget=3000")
        state = body_state(dom)
        assert state["running"] == "1" and int(state["updates"]) >= 1, state
        assert "live &lt;i&gt;one&lt;/i&gt;" in dom and console_errors(stderr) == []
        deadline = time.monotonic() + 60
        moved = None
        while time.monotonic() < deadline and moved is None:
            now = running()
            if now and (now[0]["run_index"], now[0]["ok"]) != (first["run_index"], first["ok"]):
                moved = now[0]
            time.sleep(0.5)
        assert moved is not None, "the counters never moved"
        assert proc.wait(timeout=120) == 0, err.read_text()
    assert running() == []


def test_a_token_is_asked_for_and_kept(store: Path, lab: Lab, tmp_path: Path) -> None:
    token = "t0ken-" + "x" * 20
    for base in serving(["--store", str(store), "--lab-dir", str(lab.home), "--token", token],
                        tmp_path / "serve.err"):  # fmt: skip
        for path in ("campaigns", "static/plotly.js", "live.json", "nowhere"):
            assert get(base + path)[0] == 401
        assert get(base + "campaigns?token=wrong")[0] == 401
        code, _, headers = get(base + "campaigns?q=serve&token=" + token)
        assert code == 303 and headers["location"] == "/campaigns?q=serve"
        assert "pglab_token=" in headers["set-cookie"] and "HttpOnly" in headers["set-cookie"]
        cookie = headers["set-cookie"].split(";")[0]
        assert get(base + "campaigns", {"Cookie": cookie})[0] == 200
        assert get(base + "campaigns", {"Authorization": f"Bearer {token}"})[0] == 200


def test_bad_starts_are_refused_with_one_clear_error(store: Path, tmp_path: Path) -> None:
    def start(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pglab", "serve", "--port",
                               str(free_port()), *argv], capture_output=True, text=True,
                              timeout=60)  # fmt: skip

    done = start("--host", "0.0.0.0", "--store", str(store))
    assert done.returncode == 2 and "refusing to listen on 0.0.0.0 without a token" in done.stderr
    done = start("--store", str(tmp_path / "none.sqlite"))
    assert done.returncode == 2 and "no results store at" in done.stderr
    assert not (tmp_path / "none.sqlite").exists()  # nothing created
    (tmp_path / "junk.sqlite").write_text("not a database")
    done = start("--store", str(tmp_path / "junk.sqlite"))
    assert done.returncode == 2 and "error:" in done.stderr and "Traceback" not in done.stderr
    done = start("--token", "short", "--store", str(store))
    assert done.returncode == 2 and "shorter than 16 characters" in done.stderr


def test_the_fleet_page_shows_jobs_where_they_run_and_heartbeats(
    pg_store: str, lab: Lab, tmp_path: Path
) -> None:
    """A campaign submitted to a PostgreSQL store's queue (one job: 2 runs of 2 s): queued on
    the page; a worker takes it: running, on that worker, whose heartbeat the page shows;
    then succeeded."""
    from test_fleet import campaign, submit

    assert submit(campaign(tmp_path, "fleet-page", clients=(1,), repeats=1), pg_store) == 0
    root = Path(tempfile.mkdtemp(prefix="pglab-serve-worker-", dir="/tmp"))  # the server
    root.chmod(0o755)  # account reaches it, as a worker's lab must be
    argv = [sys.executable, "-m", "pglab", "worker", "--store", pg_store, "--lab-dir", str(root),
            "--name", "worker <one>"]  # fmt: skip
    for base in serving(["--store", pg_store, "--lab-dir", str(lab.home)], tmp_path / "s.err"):
        page = get(base + "fleet")[1]
        assert page.count(">queued<") == 1 and "No worker is known" in page, page
        with pglab_in_background(argv, tmp_path / "worker.err") as worker:

            def shows(text: str, url: str = base + "fleet") -> bool:
                return text in get(url)[1]

            wait_for(lambda: shows(">running<"), worker, tmp_path / "worker.err", "the job")
            page = get(base + "fleet")[1]
            assert page.count("worker &lt;one&gt;") == 2 and " s ago" in page, page
            wait_for(lambda: shows(">succeeded<"), worker, tmp_path / "worker.err", "its end")
            worker.terminate()
            worker.wait(timeout=60)
    shutil.rmtree(root, ignore_errors=True)
