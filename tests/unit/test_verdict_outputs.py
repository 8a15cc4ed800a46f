"""The blocked analysis and the "=" verdict as a person and a program read them: `pglab show`'s
legend and --json, `pglab export --by point`, on a synthetic interleaved campaign."""

from __future__ import annotations

import csv
import io
import json

import pytest
from helpers.synthetic_runs import fill

from pglab import cli
from pglab.analysis import point_table, points
from pglab.store import open_store


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("verdicts") / "r.sqlite")
    with open_store(path) as store:
        fill(store, name="sweep", variants=("base", "same", "faster"), scripts=("select-only",),
             clients=(1, 4), repeats=4, seconds=5, effect=1.0, seed=3)  # fmt: skip
    return path


def test_show_names_the_tests_and_json_carries_them(store_path, capsys) -> None:
    assert cli.main(["show", "sweep", "--store", store_path]) == 0
    text = capsys.readouterr().out
    legend = next(line for line in text.splitlines() if line.startswith("Δ%: "))
    assert "blocked (within-round ratios" in legend and "= within ±10%" in legend
    assert cli.main(["show", "sweep", "--json", "--store", store_path]) == 0
    doc = json.loads(capsys.readouterr().out)
    compared = [p["comparison"] for p in doc["points"] if p["comparison"]]
    assert len(compared) == 4  # two variants × two client counts
    assert {c["method"] for c in compared} <= {"blocked", "paired"}
    assert all(c["equivalence_pct"] == 10 for c in compared)
    assert {c["verdict"] for c in compared} <= set("+-=~?")


def test_export_by_point_is_show_s_table(store_path, capsys) -> None:
    assert cli.main(["export", "sweep", "--by", "point", "--store", store_path]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert list(rows[0]) == list(point_table.POINT_COLUMNS)
    with open_store(store_path) as store:
        shown = points.campaign_rows(store.list_runs("sweep"), store.get_campaign("sweep"))
    assert [r["point"] for r in rows] == [pt.point for pt in shown]
    for r, pt in zip(rows, shown, strict=True):
        if pt.comparison is None:
            assert r["verdict"] == "" and r["baseline"] == "True"
        else:
            assert r["verdict"] == pt.comparison.verdict and r["method"] == pt.comparison.method
            assert float(r["delta_pct"]) == pytest.approx(pt.comparison.delta_pct)


def test_export_by_point_of_a_run_is_refused(store_path, capsys) -> None:
    assert cli.main(["export", "1", "--by", "point", "--store", store_path]) != 0
    assert "--by point is for a campaign" in capsys.readouterr().err


def test_a_campaign_s_equivalence_margin_is_used(tmp_path) -> None:
    path = str(tmp_path / "r.sqlite")
    with open_store(path) as store:
        fill(store, name="tight", variants=("a", "b"), scripts=("select-only",), clients=(1,),
             repeats=6, seconds=5, effect=1.0, seed=5)  # fmt: skip
        camp = store.get_campaign("tight")
        camp["spec"]["analysis"] = {"equivalence": 0.5}
        rows = points.campaign_rows(store.list_runs("tight"), camp)
    (c,) = [pt.comparison for pt in rows if pt.comparison]
    assert c.equivalence_pct == 0.5 and c.verdict != "="  # synthetic noise is ~2%


def test_the_report_shows_equal_verdicts_and_names_the_test(store_path, tmp_path, capsys) -> None:
    out = tmp_path / "sweep.html"
    assert cli.main(["report", "sweep", "--store", store_path, "-o", str(out)]) == 0
    page = out.read_text()
    legend = page[page.index('<p class="legend">') :].split("</p>")[0]
    assert "4 blocked (within-round ratios" in legend
    assert '<span class="v-equal">=</span> shown to differ by less than ±10%' in legend
    summary = page[page.index('<table id="summary">') :].split("</table>")[0]
    cells = summary.count('class="v-equal"')
    with open_store(store_path) as store:
        rows = points.campaign_rows(store.list_runs("sweep"), store.get_campaign("sweep"))
    assert cells == sum(1 for pt in rows if pt.comparison and pt.comparison.verdict == "=") > 0
