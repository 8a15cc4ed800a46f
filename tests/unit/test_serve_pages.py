"""``pglab serve`` without a browser: its security rules, the campaigns' filters, and the
application called as uvicorn calls it (ASGI) over a store of synthetic runs: what each page
says, escapes and hides. The real server in Chromium: tests/integration/test_serve.py."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from helpers.asgi import call
from helpers.synthetic_runs import fill, fill_executions
from markupsafe import escape

from pglab import report
from pglab.analysis import compare, evidence
from pglab.cli import main
from pglab.errors import LabError
from pglab.serve import check_bind, make_app, read_token, rendering
from pglab.serve.security import is_loopback
from pglab.serve.views import Filters
from pglab.store import open_store

NAME = "<script>alert(1)</script> web"
SECRET = "pw-never-shown"
TOKEN = "a-token-of-24-characters"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("serve") / "r.sqlite"
    with open_store(path) as s:
        fill(s, NAME, variants=("base", "<b>b</b>"), scripts=("tpcb-like",), clients=(1, 4),
             repeats=3, seconds=20, failed=1)  # fmt: skip
        s.ensure_campaign("dsn kept", {"server": {"dsn": f"postgresql://u:{SECRET}@h/db"}}, None)
    return path


@pytest.fixture(scope="module")
def app(store: Path, tmp_path_factory) -> Any:
    return make_app(str(store), tmp_path_factory.mktemp("lab"))


def test_loopback_only_without_a_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", TOKEN)
    with pytest.raises(LabError, match="refusing to listen on 0.0.0.0 without a token"):
        check_bind("0.0.0.0", None)


def test_the_token_is_read_and_checked(tmp_path: Path) -> None:
    assert read_token(None, None) is None
    assert read_token(TOKEN, None) == TOKEN
    (tmp_path / "t").write_text(f"{TOKEN}\nignored\n")
    assert read_token(None, tmp_path / "t") == TOKEN
    with pytest.raises(LabError, match="missing or empty"):
        read_token(None, tmp_path / "none")
    with pytest.raises(LabError, match="shorter than 16"):
        read_token("short", None)


def test_filters_keep_what_they_say() -> None:
    camp = {"name": "WAL sweep 18", "versions": ["18.1"], "hosts": ["lab1"],
            "last_run_at": 1_790_000_000.0}  # 2026-09-21  # fmt: skip
    assert Filters.of({"q": "sweep wal"}).keeps(camp)
    assert not Filters.of({"q": "vacuum"}).keeps(camp)
    assert Filters.of({"version": "18"}).keeps(camp) and not Filters(version="16").keeps(camp)
    assert Filters(host="lab1").keeps(camp) and not Filters(host="lab2").keeps(camp)
    assert Filters(since=date(2026, 9, 1), until=date(2026, 9, 30)).keeps(camp)
    assert not Filters(since=date(2026, 10, 1)).keeps(camp)
    assert not Filters(since=date(2026, 1, 1)).keeps({**camp, "last_run_at": None})
    with pytest.raises(LabError, match="since='last week' is not a date"):
        Filters.of({"since": "last week"})


def test_pages_escape_what_users_wrote(app: Any) -> None:
    code, headers, page = call(app, "/campaigns")
    assert code == 200 and "&lt;script&gt;alert(1)&lt;/script&gt; web" in page
    assert "<script>alert" not in page
    assert headers["x-content-type-options"] == "nosniff"
    code, _, page = call(app, "/campaigns/%3Cscript%3Ealert(1)%3C%2Fscript%3E%20web")
    assert code == 200 and "<script>alert" not in page and "&lt;b&gt;b&lt;/b&gt;" in page
    assert '<script src="/static/plotly.js"></script>' in page  # not inlined
    assert re.search(r'<img src="/charts/0/%3Cscript%3Ealert%281%29%3C%2Fscript%3E%20web"', page)
    assert 'href="/runs/1"' in page


def test_without_a_token_only_loopback_names_are_answered(app: Any) -> None:
    """A web page elsewhere that points a name of its own at 127.0.0.1 (DNS rebinding) gets
    nothing: the Host header must be a loopback name."""
    for name in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765"):
        assert call(app, "/campaigns", {"Host": name})[0] == 200, name
    code, _, said = call(app, "/campaigns", {"Host": "evil.example:8765"})
    assert code == 400 and "Invalid host header" in said


def test_a_stored_dsn_password_is_never_shown(app: Any) -> None:
    code, _, page = call(app, "/campaigns/dsn%20kept")
    assert code == 200 and "postgresql://u:***@h/db" in page and SECRET not in page
    assert SECRET not in call(app, "/compare")[2]


def test_unknown_things_are_404_pages(app: Any) -> None:
    for path, said in (("/campaigns/nope", "no campaign named &#39;nope&#39;"),
                       ("/runs/4242", "no run with id 4242"), ("/charts/9/x", "no chart 9"),
                       ("/elsewhere", "nothing at /elsewhere")):  # fmt: skip
        code, _, page = call(app, path)
        assert code == 404 and said in page and "Traceback" not in page, (path, page[-500:])


def test_the_compare_page_uses_compare_s_figures(app: Any, store: Path) -> None:
    a = "%3Cscript%3Ealert(1)%3C%2Fscript%3E%20web%3Abase%20clients%3D4"
    b = "%3Cscript%3Ealert(1)%3C%2Fscript%3E%20web%3A%3Cb%3Eb%3C%2Fb%3E%20clients%3D4"
    code, _, page = call(app, f"/compare?a={a}&b={b}")
    assert code == 200 and 'id="comparison"' in page, page[-2000:]
    row = re.search(r"<tbody>\s*<tr>(.*?)</tr>", page[page.index('id="comparison"') :], re.S)
    assert row and re.search(r"\+\d+\.\d%", row.group(1)) and 'class="verdict' in row.group(1)
    assert (
        '<option value="&lt;script&gt;alert(1)&lt;/script&gt; web:base script=tpcb-like clients=1">'
        in page
    )
    assert re.search(r'<ul class="notices" id="reasons">(<li>[=~?] .*</li>)?</ul>', page)
    # why it changed: what compare's evidence found, its top items in words
    with open_store(str(store)) as opened:
        ta, tb = (compare.resolve(opened, unquote(x)) for x in (a, b))
        pairs = compare.compare_targets(opened, ta, tb)["pairs"]  # type: ignore[typeddict-item]
        why = evidence.compare_targets(opened, ta, tb, pairs)
    assert ("Why it changed: " in page) == bool(why)
    for _, items in why:
        assert all(str(escape(item.text)) in page for item in items[: evidence.TOP])
    code, _, page = call(app, "/compare?a=1")
    assert code == 400 and "pick both A (the baseline) and B" in page


def test_the_fleet_of_a_sqlite_store_is_none(app: Any) -> None:
    code, _, page = call(app, "/fleet")
    assert code == 200 and "the fleet&#39;s queue lives in a PostgreSQL store" in page


def test_with_a_token_every_request_needs_it(store: Path, tmp_path: Path) -> None:
    app = make_app(str(store), tmp_path, TOKEN)
    assert call(app, "/campaigns")[0] == 401
    assert call(app, "/static/plotly.js")[0] == 401
    assert call(app, "/campaigns", {"Authorization": "Bearer wrong-token-wrong-token"})[0] == 401
    assert call(app, "/campaigns", {"Authorization": f"Bearer {TOKEN}"})[0] == 200
    code, headers, _ = call(app, f"/campaigns?q=web&token={TOKEN}")
    assert code == 303 and headers["location"] == "/campaigns?q=web"
    assert "httponly" in headers["set-cookie"].lower()
    assert call(app, "/campaigns", {"Cookie": f"pglab_token={TOKEN}"})[0] == 200


def test_the_report_alone_still_inlines_everything(store: Path, tmp_path: Path) -> None:
    """The shared template: the report written to a file is the self-contained page it was."""
    with open_store(store) as s:
        page = report.write(s, NAME, tmp_path / "r.html", tmp_path).html.read_text()
    assert '<script type="text/plain" id="plotly-js">' in page and "/static/" not in page
    assert 'src="data:image/png;base64,' in page and "<nav" not in page


def test_the_history_page_shows_each_point_s_series_and_its_change(
    store: Path, tmp_path: Path
) -> None:
    fill_executions(store, "nightly <i>")
    app = make_app(str(store), tmp_path)
    code, _, page = call(app, "/history/nightly%20%3Ci%3E")
    assert code == 200 and "history of nightly &lt;i&gt;" in page, page[-1500:]
    base = page[page.index("<h2>base script=select-only clients=1</h2>") :].split("</table>")[0]
    assert base.count("<tr><td><a href=") == 8
    assert re.search(r'<b class="warn">changed</b> \+\d\d\.\d%', base), base
    other = page[page.index("<h2>other script=select-only clients=1</h2>") :]
    assert "<p>no change point found, but too few executions to find a change of 10% at this " \
        "noise (" in other and "; 4 here, noise " in other, other[-800:]  # fmt: skip
    assert '<script src="/static/plotly.js"></script>' in page
    code, _, page = call(app, "/history/nightly%20%3Ci%3E?figure=tsp")
    assert code == 400 and "figure &#39;tsp&#39;: not one of" in page and "did you mean" in page
    assert call(app, "/history/never-ran")[0] == 404
    assert 'href="/history/nightly%20%3Ci%3E"' in call(app, "/campaigns")[2]


def _whole_page(page: str, parts: dict[str, Any], bodies: dict[int, str]) -> str:
    """The outline's page with what its script fetches put in place, as the browser does."""
    page = re.sub(r' data-cell="(\w+-\d+)">…</td>',
                  lambda m: f">{escape(parts['cells'][m.group(1)])}</td>", page)  # fmt: skip
    page = re.sub(r'<div id="lazy-sections" data-src="[^"]*">.*?</div>\n', parts["sections"], page)
    page = re.sub(r'<div class="pbody" data-src="/points/(\d+)/[^"]*">.*?</div>\n',
                  lambda m: bodies[int(m.group(1))], page)  # fmt: skip
    page = page.replace(' data-lazy="1"', "")
    lazy_js = re.compile(r"<script>\n// pglab serve: a campaign's page comes .*?</script>\n", re.S)
    return lazy_js.sub("", page)


def test_the_outline_and_what_it_fetches_make_the_whole_page(store: Path, tmp_path: Path) -> None:
    """A campaign's page comes without any run's series (its outline); its summary's cells,
    its warnings and each point's body, fetched when the page asks, make it the page the whole
    report draws, byte for byte; a point's body is the same read alone or from the whole."""
    app = make_app(str(store), tmp_path)
    url = "%3Cscript%3Ealert(1)%3C%2Fscript%3E%20web"
    code, _, outline = call(app, f"/campaigns/{url}")
    assert code == 200 and outline.count('data-cell="') == 5 * 4 and 'id="lazy-sections"' in outline
    assert 'data-src="/points/2/' in outline and 'id="pdata-' not in outline
    alone = {n: call(app, f"/points/{n}/{url}")[2] for n in (1, 2)}  # before the whole is read
    code, headers, text = call(app, f"/parts/{url}")
    assert code == 200 and headers["content-type"] == "application/json"
    parts = json.loads(text)
    assert "<h2>Warnings</h2>" in parts["sections"] and "failed" in parts["sections"]
    bodies = {n: call(app, f"/points/{n}/{url}")[2] for n in range(1, 5)}
    assert alone == {n: bodies[n] for n in (1, 2)} and 'id="pdata-2"' in bodies[2]
    with open_store(store, read_only=True) as s:
        rep = report.gather(s, NAME, home=tmp_path)
    whole = report.render(rep, [], {}, served=rendering.served("/", NAME),
                          env=rendering.environment())  # fmt: skip
    made = re.compile(r"report made [0-9: -]+")
    assert made.sub("", _whole_page(outline, parts, bodies)) == made.sub("", whole)
    assert call(app, f"/points/9/{url}")[0] == 404


def test_a_name_is_a_campaign_s_and_a_number_a_run_s(store: Path, tmp_path: Path) -> None:
    """A campaign named with digits is found by its name, never taken for a run (nor a
    campaign's id for a name); in the report too, where --run picks the run."""
    with open_store(store) as s:
        fill(s, "1", variants=("a",), scripts=("tpcb-like",), clients=(1,), repeats=1,
             seconds=5)  # fmt: skip
        camp_id = s.get_campaign("dsn kept")["id"]
    app = make_app(str(store), tmp_path)
    code, _, page = call(app, "/campaigns/1")
    assert code == 200 and "<h1>1</h1>" in page, page[-800:]
    code, _, page = call(app, "/runs/1")
    assert code == 200 and "run 1 of the campaign" in page and "<h1>&lt;script&gt;" in page
    assert '<img src="/runs/1/charts/0"' in page and call(app, "/runs/1/charts/0")[0] == 200
    code, _, page = call(app, f"/campaigns/{camp_id}")  # a campaign's id is not its name
    assert code == 404 and f"no campaign named &#39;{camp_id}&#39;" in page
    assert call(app, "/parts/1")[0] == 200 and call(app, "/charts/0/1")[0] == 200
    with open_store(store, read_only=True) as s:
        assert report.gather(s, "1").title == "1" and report.gather(s, "1").only_run is None
        assert report.gather(s, 1).only_run == 1
        with pytest.raises(LabError, match="no run with id 4242"):
            report.gather(s, "4242")
    argv = ["report", "1", "--store", str(store), "--lab-dir", str(tmp_path)]
    assert main([*argv, "-o", str(tmp_path / "c.html")]) == 0
    assert "<h1>1</h1>" in (tmp_path / "c.html").read_text()
    assert main([*argv, "--run", "-o", str(tmp_path / "r.html")]) == 0
    assert "run 1 of the campaign" in (tmp_path / "r.html").read_text()
    assert main(["report", "x", "--run", "--store", str(store)]) == 2
