"""One question, one answer (issue 52), on campaigns made by real runs: for every comparison of
a campaign, ``pglab show --json``, ``pglab compare --json``, the report's points table and
``pglab serve``'s JSON give the same Δ%, CI and verdict (the same answer object, key for key,
where the view prints JSON; the same digits where it prints a table); and a TPC-H-like query's
answer is the same in ``pglab show``'s query table, ``compare --json`` and serve's.

Three campaigns in one store, as cheap as they can be (scale 1 and 0.01, 2 s runs, 3 rounds):
pgbench variants (synchronous_commit off against the defaults), the same question as a matrix
axis (``[matrix.settings]``), and TPC-H-like variants (work_mem 64kB against 64MB, 4 queries)."""

from __future__ import annotations

import html
import json
import re
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
}


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


@pytest.fixture(scope="module")
def store(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("one-answer")
    path = tmp / "r.sqlite"
    for name, text in CAMPAIGNS.items():
        (tmp / f"{name}.toml").write_text(f'name = "{name}"\n{text}')
        assert cli("run", str(tmp / f"{name}.toml"), lab=lab, store=path) == 0
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
