"""``kit = "tpce"``: pglab's TPC-E-like kit loaded (1,000 customers, its smallest scale) and run
in both modes (procedures, client) on PostgreSQL 18 (embedded) and Debian's 15 (there with
pgbench's prepared statements): every transaction type executed, the mix within a
point of the specification's, 1% of Trade-Orders rolled back, tpsE-like from the trades the
brokers counted, the consistency conditions holding after the phase, and what ``pglab show``
says of it (tpsE-like, each type's figures)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.asgi import call
from helpers.campaign_runs import on_18_and_15

from pglab.analysis import scripts
from pglab.cli import main
from pglab.lab import Lab
from pglab.serve import make_app
from pglab.store import open_store
from pglab.workloads.kits.load import CONSISTENCY_TABLE, COUNTERS_TABLE
from pglab.workloads.kits.work.kits import TPCE, script_stem

pytestmark = pytest.mark.integration

# one thread and a fixed seed: pgbench picks the same scripts run after run, so the mix
# measured is the same each time (8,000 transactions put 19% within ±0.44 points, 1 SD)
WORKLOAD = """
[dataset]
scale = 1000
[workload]
kit = "tpce"
clients = 4
threads = 1
transactions = 2000
random_seed = 11
"""
TRANSACTIONS = 8000
MIX = {stem: weight / 100 for stem, weight in TPCE.mix} if isinstance(TPCE.mix, tuple) else {}


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


@pytest.fixture(scope="module")
def made(lab: Lab, tmp_path_factory) -> dict[str, Any]:
    """One campaign: the kit in both modes on PostgreSQL 18 and 15 (a dataset loaded for each;
    15 on pgbench's prepared protocol, where the client mode's variables are parameters)."""
    modes = '[matrix]\nmode = ["procedures", "client"]\n'
    pg15 = 'protocol = "prepared"\n'
    return on_18_and_15(tmp_path_factory.mktemp("tpce"), "tpce", WORKLOAD + modes, lab, pg15)


def check_tpce_run(run: Any) -> None:
    assert run is not None and run.ok, run and run.error
    assert run.metrics["inconsistent"] == 0
    (phase,) = run.phases
    tables = run.series[str(phase.idx)]
    rows = tables[CONSISTENCY_TABLE]["rows"]
    assert [r[0] for r in rows] == list(range(1, 11)) and all(r[2] == 0 for r in rows), rows
    counts = {script_stem(s.script): s.transactions or 0 for s in scripts.phase_scripts(phase)}
    assert sum(counts.values()) == phase.transactions == TRANSACTIONS and not phase.failed
    assert set(counts) == set(MIX) and all(counts.values()), counts  # every type ran
    for name, pct in MIX.items():
        assert abs(100 * counts[name] / TRANSACTIONS - pct) <= 1.0, (name, counts)
    # 1 in 100 Trade-Orders rolls back: ~8 of ~800 here
    assert 0.2 <= run.metrics["rollback_pct"] <= 3.0
    # tpsE-like from the trades completed (the brokers' counts), over pgbench's measured time;
    # every Trade-Result that found a trade completed one
    counted = {r[0]: r[2] - r[1] for r in tables[COUNTERS_TABLE]["rows"]}
    assert counted["trades"] + counted["results_idle"] == counts["trade_result"]
    assert counted["trades"] > 0.9 * counts["trade_result"]
    minutes = phase.transactions / phase.tps / 60
    assert run.metrics["tpse"] == pytest.approx(counted["trades"] / minutes / 60)
    # the trades ordered: each committed or rolled back Trade-Order took an id
    assert counted["trade_ids"] == counts["trade_order"] + counts["trade_order_rollback"]
    assert run.metrics["tpse_pgbench"] >= run.metrics["tpse"] * (1 - 1e-6) > 0  # pgbench rounds


def test_tpce_runs_in_both_modes_on_18_and_15(made: dict[str, Any]) -> None:
    runs = made["runs"]
    assert sorted((r.variant, r.label.split()[-1]) for r in runs) == [
        ("pg15", "mode=client"), ("pg15", "mode=procedures"),
        ("pg18", "mode=client"), ("pg18", "mode=procedures"),
    ]  # fmt: skip
    for run in runs:
        check_tpce_run(run)
        argv = run.phases[0].argv
        assert "-D" in argv and argv[argv.index("-D") + 1] == "customers=1000" and "-n" in argv
        assert ("-Mprepared" in argv or "prepared" in argv) == (run.variant == "pg15"), argv
        mode = run.label.split("=")[-1]
        assert any(f"/{mode}/trade_result.sql" in a for a in argv), argv
        versions = run.fingerprint["server_version"]
        assert versions.startswith("15" if run.variant == "pg15" else "18")


def test_show_says_tpse_and_each_types_figures(made: dict[str, Any], lab: Lab, capsys) -> None:
    store = made["store"]
    assert cli("show", "tpce", lab=lab, store=store) == 0
    out = capsys.readouterr().out
    assert "tpsE" in out, out  # the points' headline column: "median tpsE" (figure_of)
    run = made["runs"][0]
    assert cli("show", str(run.id), lab=lab, store=store) == 0
    out = capsys.readouterr().out
    assert f"tpse = {run.metrics['tpse']:,.1f}" in out
    assert all(f"{stem}.sql" in out for stem in MIX) and "p95 ms" in out
    assert "consistency: 10 of 10 conditions hold" in out
    assert "trades completed (the sum of B_NUM_TRADES: tpsE's count)" in out


@pytest.mark.usefixtures("password")
def test_tpce_on_an_existing_server(outside_server, lab: Lab, tmp_path: Path) -> None:
    """The kit loaded into pglab's database on a server the tests started, as its role over
    TCP, and run there in both modes (one after the other on the same data: a server pglab
    does not own is not copied): the same checks as on a server pglab makes."""
    path = tmp_path / "existing.toml"
    path.write_text(f'name = "tpce-existing"\n[server]\ndsn = "{outside_server.dsn()}"\n'
                    f'database = "pglab_tpce"\n{WORKLOAD}'
                    '[matrix]\nmode = ["procedures", "client"]\n')  # fmt: skip
    store = tmp_path / "r.sqlite"
    try:
        assert cli("run", str(path), lab=lab, store=store) == 0
        with open_store(str(store)) as s:
            runs = [s.get_run(row.id) for row in s.list_runs("tpce-existing")]
        assert sorted(r.label.split()[-1] for r in runs) == ["mode=client", "mode=procedures"]
        for run in runs:
            check_tpce_run(run)
        with outside_server.admin("pglab_tpce") as conn:  # the kit's tables, in its database
            (n,) = conn.execute("SELECT count(*) FROM customer").fetchone()
        assert n == 1000
    finally:
        outside_server.drop_database("pglab_tpce")


@pytest.fixture
def password(monkeypatch):
    from helpers.existing_server import BENCH_PASSWORD

    monkeypatch.setenv("PGPASSWORD", BENCH_PASSWORD)


def test_report_and_serve_say_tpse_as_show_does(
    made: dict[str, Any], lab: Lab, tmp_path: Path, capsys
) -> None:
    """The kit's headline is tpsE-like in every view: show --json's points, the report's
    points table and serve's ``/points.json`` name the figure and give the same medians."""
    store = made["store"]
    assert cli("show", "tpce", "--json", lab=lab, store=store) == 0
    shown = json.loads(capsys.readouterr().out)
    page = tmp_path / "tpce.html"
    assert cli("report", "tpce", "-o", str(page), lab=lab, store=store) == 0
    html = page.read_text()
    summary = html[html.index("<h2>Summary</h2>") : html.index("<h2>Warnings</h2>")]
    assert "<th>tpsE</th>" in summary, "the report's points table names the kit's figure"
    assert "tpsE is the median over its repeats" in summary and "TPS" not in summary
    app = make_app(str(store), tmp_path / "serve-lab")
    code, _, body = call(app, "/points.json/tpce")
    assert code == 200
    served = json.loads(body)
    assert served["figure"] == "tpsE"  # the same answer, key for key (show's own factors aside)
    assert served["points"] == [
        {k: v for k, v in p.items() if k != "factors"} for p in shown["points"]
    ]
    runs = {(r.variant, r.label.split("=")[-1]): r for r in made["runs"]}
    assert len(shown["points"]) == len(runs) == 4
    for point in shown["points"]:
        run = runs[point["variant"], point["factors"]["axis.mode"]]  # one run: its tpsE-like
        assert point["figure"] == "tpsE"
        assert point["tps_median"] == pytest.approx(run.metrics["tpse"])
        assert f"median {run.metrics['tpse']:,.0f} tpsE" in html  # the point's section
