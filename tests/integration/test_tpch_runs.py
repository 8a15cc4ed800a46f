"""``kit = "tpch"`` in a campaign on PostgreSQL 18 (embedded) at scale factor 0.01: the dataset
made once and reset by copy, the power run's per-query seconds, geometric mean and QphH-like
power stored as the run's figures, each query's plan stored, and what ``pglab show`` says of
two variants (default and ``enable_hashjoin = off``) × 2 repeats: each query's time and the
plan change named; a query stopped by ``query_timeout`` recorded as a timeout, the run ok;
the 22 queries on Debian's PostgreSQL 15 returning the rows recorded for SF 0.01."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from helpers.campaign_runs import run_alone

from pglab.cli import main
from pglab.lab import Lab
from pglab.store import open_store
from pglab.workloads.tpch import plans, power, throughput
from pglab.workloads.tpch.work.queries import QUERIES

pytestmark = pytest.mark.integration
ROWS = {1: 4, 3: 10}  # rows of Q1 (its four return flag × status groups) and of Q3 (LIMIT 10)

CAMPAIGN = """
name = "tpch"
repeats = 2
[dataset]
scale = 0.01
[workload]
kit = "tpch"
[variants.default]
[variants.nohash.server.settings]
enable_hashjoin = "off"
"""


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


@pytest.fixture(scope="module")
def made(lab: Lab, tmp_path_factory) -> dict[str, Any]:
    """Two variants × 2 repeats of the 22 queries (one dataset, copied per run)."""
    tmp = tmp_path_factory.mktemp("tpch")
    path = tmp / "tpch.toml"
    path.write_text(CAMPAIGN)
    store = tmp / "r.sqlite"
    assert cli("run", str(path), lab=lab, store=store) == 0
    with open_store(str(store)) as s:
        runs = [s.get_run(row.id) for row in s.list_runs("tpch")]
    return {"store": store, "runs": runs, "tmp": tmp}


def test_power_run_figures_and_plans(made: dict[str, Any]) -> None:
    runs = made["runs"]
    assert len(runs) == 4 and all(r is not None and r.ok for r in runs), [r.error for r in runs]
    for run in runs:
        m = run.metrics
        times = [m[f"q{n:02d}_s"] for n in QUERIES]
        assert all(t > 0 for t in times) and m["timeouts"] == 0
        assert m["geomean_s"] == pytest.approx(
            power.geomean([power.QueryTime(n, t, 0) for n, t in zip(QUERIES, times, strict=True)]),
            rel=1e-9,
        )
        # QphH stored as what it is (issue 52): its metric, the phase's figure; no tps
        assert m["power"] == pytest.approx(3600 * 0.01 / m["geomean_s"], rel=1e-9)
        assert run.tps is None and "tps" not in m
        (phase,) = run.phases
        assert phase.figure == "QphH" and phase.tps is None and phase.value == m["power"]
        tables = run.series[str(phase.idx)]
        rows = {r[0]: r for r in tables[power.TABLE]["rows"]}
        assert sorted(rows) == list(QUERIES)
        assert all(rows[n][2] == want for n, want in ROWS.items())
        stored = {r[0]: r[1] for r in tables[plans.TABLE]["rows"]}
        assert sorted(stored) == list(QUERIES)
        assert all("Plan" in p and "Actual Total Time" in p["Plan"] for p in stored.values())


def test_show_names_each_query_and_the_plan_change(made: dict[str, Any], lab: Lab,
                                                   capsys) -> None:  # fmt: skip
    capsys.readouterr()
    assert cli("show", "tpch", "--wide", lab=lab, store=made["store"]) == 0
    out = capsys.readouterr().out
    assert "median QphH" in out and "per query (median seconds; Δ% of its rate)" in out
    lines = {line.split()[1]: line for line in out.splitlines()
             if line.startswith("│ Q")}  # fmt: skip
    assert sorted(lines) == sorted(f"Q{n}" for n in QUERIES)
    # enable_hashjoin = off: at least one query's hash join became another join
    assert any("hash join" in line and "→" in line for line in lines.values()), out
    assert "nohash: hash, hash join →" in out or "nohash: hash join, hash →" in out, out


def test_a_query_over_its_timeout_is_recorded_not_failed(made: dict[str, Any], lab: Lab) -> None:
    run = run_alone(made["tmp"] / "timeout.toml",
                    'name = "tpch-timeout"\n[dataset]\nscale = 0.01\n[workload]\nkit = "tpch"\n'
                    "queries = [1, 6]\nquery_timeout = 0.001\n", "tpch-timeout", lab,
                    made["store"])  # fmt: skip
    assert run.metrics["timeouts"] == 2 and run.metrics["q01_s"] == 0.001
    rows = run.series[str(run.phases[0].idx)][power.TABLE]["rows"]
    assert [(r[0], r[2], r[3]) for r in rows] == [(1, None, True), (6, None, True)]


def test_compare_names_the_plan_change_next_to_the_time(made: dict[str, Any], lab: Lab,
                                                        capsys) -> None:  # fmt: skip
    capsys.readouterr()
    assert cli("compare", "tpch:default", "tpch:nohash", lab=lab, store=made["store"]) == 0
    out = capsys.readouterr().out
    assert "per query (Holm over " in out and "query verdicts: " in out
    said = [line for line in out.splitlines() if line.startswith("Q") and "→" in line]
    assert any("hash join" in line.split("→")[0] for line in said), out
    assert all(line.split(";")[1].strip()[0] in "+-–" for line in said), said


def test_the_evidence_names_the_hash_joins_that_left_the_plans(made: dict[str, Any], lab: Lab,
                                                             capsys) -> None:  # fmt: skip
    """Issue 53: a plan's nodes by type are among what moved (the plans are the same in every
    run of a variant: a difference without noise)."""
    capsys.readouterr()
    assert cli("compare", "tpch:default", "tpch:nohash", "--json", lab=lab,
               store=made["store"]) == 0  # fmt: skip
    (pair,) = json.loads(capsys.readouterr().out)["evidence"]
    shapes = [i for i in pair["items"] if i["key"].endswith(":shape")]  # a query's nodes
    gone = [i for i in shapes if any(k.endswith(":node:Hash Join") for k in i["alike"])]
    assert gone, [i["key"] for i in pair["items"]]
    for item in gone:  # every hash join of the query's plan gone with enable_hashjoin = off
        query = item["key"].split(":")[1]
        assert item["text"].startswith(f"{query}'s plan changed shape: "), item
        left = item["text"].split(": ", 1)[1].split(" → ")[0]
        assert "hash join" in left and item["relative"] == 1, item
    assert pair["items"][0]["key"].endswith(":shape")  # a plan that changed ranks first


def test_export_by_query_is_a_row_per_run_and_query(made: dict[str, Any], lab: Lab,
                                                     capsys) -> None:  # fmt: skip
    capsys.readouterr()
    assert cli("export", "tpch", "--by", "query", lab=lab, store=made["store"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 4 * 22 and {r["variant"] for r in rows} == {"default", "nohash"}
    q3 = [r for r in rows if r["query"] == "3"]
    assert len(q3) == 4 and all(r["rows"] == "10" and r["timed_out"] == "False" for r in q3)
    assert all(float(r["seconds"]) > 0 and r["seed"] == "1" and r["stream"] == "" for r in rows)


def test_export_by_run_has_the_kits_figures(made: dict[str, Any], lab: Lab, capsys) -> None:
    capsys.readouterr()
    assert cli("export", "tpch", lab=lab, store=made["store"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 4
    for r in rows:
        assert float(r["power"]) > 0 and r["tps"] == ""  # QphH is not a TPS (issue 52)
        assert float(r["geomean_s"]) > 0 and r["timeouts"] == "0.0" and float(r["q22_s"]) > 0


def test_the_report_draws_the_time_per_query(made: dict[str, Any], lab: Lab) -> None:
    page = made["tmp"] / "tpch.html"
    assert cli("report", "tpch", "-o", str(page), lab=lab, store=made["store"]) == 0
    html = page.read_text()
    assert "time per query per point" in html and "QphH" in html  # the headline, named
    section = html.split("<h2>Plans that changed shape</h2>")[1].split("<h2>")[0]
    assert "<td>nohash</td><td>default</td>" in section and "hash join →" in section
    from pglab.report import charts, model

    with open_store(str(made["store"])) as s:
        rep = model.gather(s, "tpch")
    chart = charts.campaign_chart(rep, 3)
    assert chart is not None and chart.png.startswith(b"\x89PNG")
    assert (
        chart.name == "tpch-queries"
        and (made["tmp"] / "tpch-charts" / "tpch-queries.png").is_file()
    )


def test_the_report_labels_a_run_of_queries_truthfully(made: dict[str, Any], lab: Lab) -> None:
    """In headless Chromium: a point's chart draws each query where it ran in the TPS panel's
    place and no latency panel; the tables say mean query time, the charts QphH."""
    from test_report_browser import CHROMIUM, body_state, browse, console_errors, with_script

    if CHROMIUM is None:
        pytest.skip("apt-get install chromium")
    page = made["tmp"] / "labels.html"
    assert cli("report", "tpch", "-o", str(page), lab=lab, store=made["store"]) == 0
    html = page.read_text()
    summary = html[html.index('<table id="summary">') :].split("</table>")[0]
    assert "<th>mean query time ms</th>" in summary and "p95 ms" not in summary
    assert "latency avg ms" not in html and "steady TPS" not in html
    assert "QphH per point" in html and "TPS per point" not in html
    drawn = with_script(page, made["tmp"] / "labels-all.html", (
        "window.pglabDrawAll(); document.body.dataset.bars = String("
        "document.querySelectorAll('#pchart-1 .barlayer .trace').length);"
    ))  # fmt: skip
    dom, stderr = browse(drawn, made["tmp"], "--virtual-time-budget=20000", "--dump-dom")
    state = body_state(dom)
    assert state["points-drawn"] == "2" and state["errors"] == "", state
    assert console_errors(stderr) == []
    chart = dom[dom.index('id="pchart-1"') : dom.index('id="pdata-1"')]
    assert "Each query: its seconds, drawn where it ran" in chart
    assert "TPS per second" not in chart and "Latency percentiles" not in chart
    assert "pgbench" not in chart  # no pgbench runs the queries: no share of its CPU drawn
    assert state["bars"] == "1", state  # the power run: one stream of 22 bars
    from pglab.report import charts, model  # the same panels as PNG (pglab report --png)

    with open_store(str(made["store"])) as s:
        pt = model.gather(s, "tpch").points[0]
    png = charts.point_chart(pt, 1)
    assert png is not None and png.png.startswith(b"\x89PNG")
    assert not [m for m in png.missing if m.startswith(("TPS", "Latency", "Each query"))]
    if os.environ.get("PGLAB_TPCH_PNG"):
        Path(os.environ["PGLAB_TPCH_PNG"]).write_bytes(png.png)


def test_a_throughput_run_of_two_streams(made: dict[str, Any], lab: Lab, capsys) -> None:
    path = made["tmp"] / "streams.toml"
    path.write_text('name = "tpch-streams"\n[dataset]\nscale = 0.01\n[workload]\nkit = "tpch"\n'
                    'mode = "throughput"\nclients = 2\nqueries = [1, 6, 14]\n')  # fmt: skip
    assert cli("run", str(path), lab=lab, store=made["store"]) == 0
    with open_store(str(made["store"])) as s:
        (row,) = s.list_runs("tpch-streams")
        run = s.get_run(row.id)
    assert run is not None and run.ok, run and run.error
    rows = run.series[str(run.phases[0].idx)][throughput.TABLE]["rows"]
    assert sorted((r[0], r[1]) for r in rows) == [(s, q) for s in (0, 1) for q in (1, 6, 14)]
    assert [r[1] for r in rows if r[0] == 0] == [1, 6, 14]  # stream 0: the order given
    elapsed = run.phases[0].elapsed_s
    assert run.metrics["throughput"] == pytest.approx(2 * 3 * 3600 / elapsed * 0.01, rel=0.02)
    assert run.tps is None and "power" not in run.metrics and "tps" not in run.metrics
    assert run.phases[0].figure == "QthH" and run.phases[0].value == run.metrics["throughput"]
    assert set(run.metrics) >= {"q01_s", "q06_s", "q14_s", "geomean_s"}
    capsys.readouterr()
    assert cli("show", "tpch-streams", "--wide", lab=lab, store=made["store"]) == 0
    assert "median QthH" in capsys.readouterr().out
    assert cli("export", "tpch-streams", "--by", "query", lab=lab, store=made["store"]) == 0
    said = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))  # a row per stream, query
    assert [(r["stream"], r["query"], r["seed"]) for r in said] == [
        (str(r[0]), str(r[1]), str(r[5])) for r in rows]  # fmt: skip
    assert {r["seed"] for r in said} == {"1", "2"} and all(float(r["seconds"]) > 0 for r in said)
    from pglab.report import queries_chart  # the report's point chart: a stream per colour

    drawn = queries_chart.series(run, run.phases[0].started_at)
    assert [d["name"] for d in drawn] == ["main stream 0", "main stream 1"]
    for d, stream in zip(drawn, (0, 1), strict=True):
        assert d["query"] == [r[1] for r in rows if r[0] == stream]
        ends = [a + b for a, b in zip(d["start"], d["seconds"], strict=True)]
        assert d["start"][0] == 0 and d["start"][1:] == pytest.approx(ends[:-1], abs=1e-3)


PG15 = Path("/usr/lib/postgresql/15/bin")  # Debian's postgresql-15 (in .ci/run's packages)
RECORDED = json.loads((Path(__file__).parents[1] / "data" / "tpch_sf001_rows.json").read_text())


def test_the_22_queries_on_postgresql_15(made: dict[str, Any], lab: Lab) -> None:
    """Debian's PostgreSQL 15, one power run at SF 0.01 (its own dataset): each query returns
    the rows recorded for that scale and seed, and its plan (with ANALYZE's times) is stored."""
    if not PG15.exists():
        pytest.skip("Debian's postgresql-15 is not installed")
    run = run_alone(made["tmp"] / "pg15.toml",
                    f'name = "tpch-pg15"\n[server]\nsource = "bindir"\nbindir = "{PG15}"\n'
                    '[dataset]\nscale = 0.01\n[workload]\nkit = "tpch"\n', "tpch-pg15", lab,
                    made["store"])  # fmt: skip
    assert run.fingerprint["server_version"].startswith("15")
    tables = run.series[str(run.phases[0].idx)]
    counts = {str(r[0]): r[2] for r in tables[power.TABLE]["rows"]}
    assert counts == RECORDED["queries_seed_1"]
    stored = {r[0]: r[1] for r in tables[plans.TABLE]["rows"]}
    assert sorted(stored) == list(QUERIES)
    assert all("Plan" in p and "Actual Total Time" in p["Plan"] for p in stored.values())


@pytest.fixture
def password(monkeypatch):
    from helpers.existing_server import BENCH_PASSWORD

    monkeypatch.setenv("PGPASSWORD", BENCH_PASSWORD)


@pytest.mark.usefixtures("password")
def test_tpch_on_an_existing_server(outside_server, lab: Lab, tmp_path: Path) -> None:
    """The dataset in a database of pglab's own on a server pglab did not start; two queries."""
    text = (f'name = "tpch-existing"\n[server]\ndsn = "{outside_server.dsn()}"\n'
            'database = "pglab_tpch_existing"\n[dataset]\nscale = 0.01\n[workload]\n'
            'kit = "tpch"\nqueries = [3, 1]\n')  # fmt: skip
    try:
        run = run_alone(tmp_path / "existing.toml", text, "tpch-existing", lab,
                        tmp_path / "r.sqlite")  # fmt: skip
        rows = run.series[str(run.phases[0].idx)][power.TABLE]["rows"]
        assert [(r[0], r[2]) for r in rows] == [(3, ROWS[3]), (1, ROWS[1])]
        with outside_server.admin("pglab_tpch_existing") as conn:
            (n,) = conn.execute("SELECT count(*) FROM nation").fetchone()
        assert n == 25
    finally:
        outside_server.drop_database("pglab_tpch_existing")
