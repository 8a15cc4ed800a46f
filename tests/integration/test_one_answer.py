"""One question, one answer (issue 52), on campaigns made by real runs: for every comparison of
a campaign, ``pglab show --json``, ``pglab compare --json``, the report's points table and
``pglab serve``'s JSON give the same Δ%, CI and verdict (the same answer object, key for key,
where the view prints JSON; the same digits where it prints a table); a TPC-H-like query's
answer is the same in ``pglab show``'s query table, ``compare --json`` and serve's; a TPC-C-like
point is judged on its NOPM in each; a CPU profile differential is the same in ``compare``,
``compare --json`` and serve's compare page; and a history's change point (or, without one,
what it could have found) the same in ``pglab history``, ``--json``, ``--html`` and serve.

Campaigns in one store, as cheap as they can be (scale 1 and 0.01, 1 warehouse, 1–2 s runs, 3
rounds): pgbench variants (synchronous_commit off against the defaults; profiled where perf
is), the same question as a matrix axis (``[matrix.settings]``, its reference "off" named by
``[analysis] reference``), TPC-H-like variants (work_mem 64kB against 64MB, 4 queries),
TPC-C-like variants, and 8 executions of a rate-limited campaign whose rate drops at the
fifth."""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from test_serve import get, serving

from pglab.analysis import points
from pglab.cli import main
from pglab.lab import Lab
from pglab.store import open_store

pytestmark = pytest.mark.integration

PGBENCH = """
repeats = 3
[dataset]
scale = 1
[workload]
script = "tpcb-like"
duration = 2
"""
CAMPAIGNS = {
    "one-variants": PGBENCH
    + """
[variants.default]
[variants.async]
settings = { synchronous_commit = "off" }
""",
    "one-axis": PGBENCH
    + """
[matrix.settings]
synchronous_commit = ["on", "off"]
[analysis]
reference = { synchronous_commit = "off" }
""",
    "one-tpch": """
repeats = 3
[dataset]
scale = 0.01
[workload]
kit = "tpch"
queries = [1, 3, 6, 10]
[variants.small]
settings = { work_mem = "64kB" }
[variants.big]
settings = { work_mem = "64MB" }
""",
    "one-tpcc": """
repeats = 3
[dataset]
scale = 1
[workload]
kit = "tpcc"
clients = 2
duration = 2
[variants.default]
[variants.async]
settings = { synchronous_commit = "off" }
""",
}
PERF = shutil.which("perf") is not None
# the pgbench variants profiled where perf is (CI has it): their differential in every view
PROFILED = "\n[profile]\nfrequency = 499\n" if PERF else ""
NIGHTLY = """name = "one-nightly"
repeats = 1
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 2
duration = 1
rate = {rate}
"""


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


@pytest.fixture(scope="module")
def store(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("one-answer")
    path = tmp / "r.sqlite"
    for name, text in CAMPAIGNS.items():
        more = PROFILED if name == "one-variants" else ""
        (tmp / f"{name}.toml").write_text(f'name = "{name}"\n{text}{more}')
        assert cli("run", str(tmp / f"{name}.toml"), lab=lab, store=path) == 0
    nightly = tmp / "nightly.toml"
    for i in range(1, 9):
        nightly.write_text(NIGHTLY.format(rate=400 if i < 5 else 250))
        assert cli("run", str(nightly), "--execution", f"e{i}", lab=lab, store=path) == 0
    return path


@pytest.fixture(scope="module")
def served(store: Path, lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    err = tmp_path_factory.mktemp("one-answer-serve") / "serve.err"
    yield from serving(["--store", str(store), "--lab-dir", str(lab.home)], err)


def printed(capsys: pytest.CaptureFixture[str], *args: str, lab: Lab, store: Path) -> str:
    capsys.readouterr()
    assert cli(*args, lab=lab, store=store) == 0
    return capsys.readouterr().out


def compared(store: Path, name: str) -> list[tuple[str, str]]:
    """The campaign's comparisons: (the reference point's label, the other's)."""
    with open_store(str(store)) as s:
        runs, camp = s.list_runs(name), s.get_campaign(name)
    return [(a, b) for a, b, _ in points.compared_labels(runs, camp)]


def served_json(base: str, path: str) -> Any:
    status, body, _ = get(base + path)
    assert status == 200, body
    return json.loads(body)


def summary_rows(page: str) -> list[str]:
    """The report's points table, a row of HTML per point, in the table's order."""
    table = page.split('<table id="summary">', 1)[1].split("</table>", 1)[0]
    return table.split("<tbody>", 1)[1].split("<tr")[1:]


VERDICT = {"+": "+", "-": "−", "=": "=", "~": "~", "?": "?"}  # as the report writes them


@pytest.mark.parametrize("name", list(CAMPAIGNS))
def test_every_view_gives_the_same_answer(
    name: str, store: Path, served: str, lab: Lab, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    pairs = compared(store, name)
    assert pairs, f"campaign {name} compares nothing"
    shown = json.loads(printed(capsys, "show", name, "--json", lab=lab, store=store))["points"]
    by_label = {p["point"]: p for p in shown}
    out = tmp_path / f"{name}.html"
    assert cli("report", name, "-o", str(out), lab=lab, store=store) == 0
    rows = summary_rows(out.read_text())
    assert len(rows) == len(shown)
    served_points = served_json(served, f"points.json/{quote(name)}")["points"]
    assert [p["comparison"] for p in served_points] == [p["comparison"] for p in shown]
    for a, b in pairs:
        said = by_label[b]["comparison"]
        assert said is not None and said["why"], (name, b)
        assert "pair by round" in said["why"]  # runs of one interleaved campaign
        assert by_label[b]["figure"] == ("NOPM" if name == "one-tpcc" else by_label[a]["figure"])
        argv = (f"{name}:{a}", f"{name}:{b}")
        doc = json.loads(printed(capsys, "compare", *argv, "--json", lab=lab, store=store))
        assert doc["pairs"][0]["comparison"] == said  # the same answer, key for key
        assert served_json(served, "compare.json?" + urlencode({"a": argv[0], "b": argv[1]})) == doc
        row = rows[[p["point"] for p in shown].index(b)]  # the report's row of B
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        assert f"{said['delta_pct']:+.1f}" in cells, (row, said)
        if said["ci_low"] is not None:
            assert f"{said['ci_low']:+.1f} … {said['ci_high']:+.1f}" in cells, row
        assert VERDICT[said["verdict"]] in cells, row


def test_a_query_gets_one_answer(
    store: Path, served: str, lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bug the issue names: show paired Q10 by round, compare gave it Welch's test."""
    ((a, b),) = compared(store, "one-tpch")
    argv = (f"one-tpch:{a}", f"one-tpch:{b}")
    doc = json.loads(printed(capsys, "compare", *argv, "--json", lab=lab, store=store))
    assert served_json(served, "compare.json?" + urlencode({"a": argv[0], "b": argv[1]})) == doc
    assert sorted(q["query"] for q in doc["queries"]) == [1, 3, 6, 10]
    text = printed(capsys, "show", "one-tpch", "--wide", lab=lab, store=store)
    for q in doc["queries"]:
        c = q["comparison"]
        assert "pair by round" in c["why"] and c["method"] != "welch", c
        ci = f" [{c['ci_low']:+.1f}, {c['ci_high']:+.1f}]" if c["ci_low"] is not None else ""
        line = next(x for x in text.splitlines() if x.startswith(f"│ Q{q['query']} "))
        assert f"{c['delta_pct']:+.1f}%{ci} {c['verdict']}" in line, (line, c)


def test_a_tpcc_point_is_judged_on_nopm_in_every_view(
    store: Path, served: str, lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bug the issue names: show and the report judged TPC-C-like points on TPS, compare
    on NOPM. Each answer is the NOPM's: its Δ% is that of the points' median NOPM."""
    ((a, b),) = compared(store, "one-tpcc")
    shown = json.loads(printed(capsys, "show", "one-tpcc", "--json", lab=lab, store=store))
    by_label = {p["point"]: p for p in shown["points"]}
    assert {p["figure"] for p in shown["points"]} == {"NOPM"}
    with open_store(str(store)) as s:
        runs = s.list_runs("one-tpcc")
    nopm = {label: [r.metrics["nopm"] for r in runs if r.label == label and r.ok]
            for label in (a, b)}  # fmt: skip
    assert by_label[a]["tps_median"] == pytest.approx(sorted(nopm[a])[1])  # 3 runs' median
    doc = json.loads(printed(capsys, "compare", f"one-tpcc:{a}", f"one-tpcc:{b}", "--json",
                             lab=lab, store=store))  # fmt: skip
    assert doc["pairs"][0]["comparison"] == by_label[b]["comparison"]
    out = tmp_path / "tpcc.html"
    assert cli("report", "one-tpcc", "-o", str(out), lab=lab, store=store) == 0
    head = out.read_text().split('<table id="summary">', 1)[1].split("</thead>", 1)[0]
    assert "NOPM" in head and "median tps" not in head, head


@pytest.mark.skipif(not PERF, reason="no perf (linux-perf): the profiled campaign is not run")
def test_a_profile_differential_gets_one_answer(
    store: Path, served: str, lab: Lab, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pglab compare`` (its table), ``--json`` and serve's compare page give a profile
    differential's rows the same numbers, the backend first, none below the sample floors."""
    ((a, b),) = compared(store, "one-variants")
    argv = (f"one-variants:{a}", f"one-variants:{b}")
    doc = json.loads(printed(capsys, "compare", *argv, "--json", lab=lab, store=store))
    ((pair,),) = [doc["profile"]]
    kept = [c for c in pair["changes"] if not c["below_floor"]]
    floors = [(c["function"], c["samples_a"], c["samples_b"], c["kind_a"], c["kind_b"])
              for c in pair["changes"][:5]]  # fmt: skip
    assert kept and kept[0]["process"] == "backend", floors
    text = printed(capsys, "compare", *argv, lab=lab, store=store)
    rows = [line.split() for line in text.split("CPU profile differential", 1)[1].splitlines()]
    shown = [r for r in rows if len(r) in (7, 8) and r[5].startswith("[")]
    assert shown, text

    def cells(c: dict[str, Any]) -> tuple[str, ...]:  # as compare prints them, and serve
        ci = f"[{c['low']:.1f}, {c['high']:.1f}]" if c["low"] is not None else "–"
        return (c["function"], f"{c['base_pct']:.1f}", f"{c['other_pct']:.1f}",
                f"{c['delta']:+.1f}", ci)  # fmt: skip

    mine = {(c["process"], c["function"]): cells(c) for c in kept}
    for r in shown:  # every row compare prints is a kept change of --json, the same digits
        said = (*r[1:5], " ".join(r[5:7]))
        assert said == mine[r[0], r[1]], (r, mine.get((r[0], r[1])))
    status, page, _ = get(served + "compare?" + urlencode({"a": argv[0], "b": argv[1]}))
    assert status == 200
    table = html.unescape(page.split('<table class="profile">', 1)[1].split("</table>", 1)[0])
    got = [tuple(re.sub(r"<[^>]+>", "", x) for x in re.findall(r"<td[^>]*>(.*?)</td>", row))
           for row in table.split("<tr>")[2:]]  # fmt: skip
    assert [g[1:] for g in got] == [mine[c["process"], c["function"]] for c in kept], got[:3]


def test_a_history_s_answer_is_the_same_in_every_view(
    store: Path, served: str, lab: Lab, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """8 executions, 400 then 250 TPS from the fifth: the change point (or, if the noise hid
    it, what the series could have found) in history's table, its JSON, its page and serve's."""
    doc = json.loads(printed(capsys, "history", "one-nightly", "--json", lab=lab, store=store))
    (point,) = doc["points"]
    page = tmp_path / "history.html"
    text = printed(capsys, "history", "one-nightly", "--html", str(page), lab=lab, store=store)
    status, body, _ = get(served + "history/one-nightly")
    assert status == 200
    views = {"table": " ".join(text.split()), "page": html.unescape(page.read_text()),
             "serve": html.unescape(body)}  # fmt: skip
    if point["changes"]:
        (change,) = point["changes"]
        assert change["execution"] == "one-nightly@e5"
        lo, hi = change["ci"]
        said = f"{change['delta_pct']:+.1f}% [{lo:+.1f}, {hi:+.1f}] (p {change['p_value']:.3f})"
        assert -50 < lo < hi < -15, said  # 250 against 400: −37.5%
    else:  # what it could have found, in words
        said = point["reach"]["text"]
    for where, shown in views.items():
        assert said in shown, (where, said)
