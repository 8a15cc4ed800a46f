"""``kit = "tpcc"``: pglab's TPC-C-like kit loaded (2 warehouses) and run in both modes on
PostgreSQL 18 (embedded) and Debian's 15 (on pgbench's prepared protocol), and on an existing
server: NOPM, the 45/43/4/4/4 mix measured from pgbench's per-script counts, 1% of New-Orders
rolled back, the consistency conditions holding after every phase, and what show and export say
of it."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from helpers.campaign_runs import on_18_and_15

from pglab.analysis import scripts
from pglab.cli import main
from pglab.lab import Lab
from pglab.store import open_store
from pglab.workloads.kits.load import CONSISTENCY_TABLE, COUNTERS_TABLE
from pglab.workloads.kits.work.kits import TPCC, script_stem

pytestmark = pytest.mark.integration

# one thread and a fixed seed: pgbench picks the same scripts run after run, so the mix
# measured is the same each time (and 6,000 transactions put 45% within ±0.64 points, 1 SD)
WORKLOAD = """
[dataset]
scale = 2
[workload]
kit = "tpcc"
clients = 4
threads = 1
transactions = 1500
random_seed = 7
[matrix]
mode = ["procedures", "client"]
"""
MIX = {"new_order": 45.0, "payment": 43.0, "order_status": 4.0, "delivery": 4.0,
       "stock_level": 4.0}  # fmt: skip


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


@pytest.fixture(scope="module")
def made(lab: Lab, tmp_path_factory) -> dict[str, Any]:
    """One campaign: both modes on PostgreSQL 18 and 15 (a dataset loaded for each)."""
    # 15 on pgbench's prepared protocol: the client scripts' parameters all get a type there
    # (Payment's concat_ws of :d_id failed on 15, "could not determine data type of parameter")
    pg15 = 'protocol = "prepared"\n'
    return on_18_and_15(tmp_path_factory.mktemp("kits"), "tpcc", WORKLOAD, lab, pg15)


def check_kit_run(run: Any) -> None:
    """NOPM, the mix, the rollbacks, Delivery's skips and the consistency of one run of the
    kit."""
    assert run is not None and run.ok, run and run.error
    assert run.metrics["nopm"] > 0 and run.metrics["tpm"] > run.metrics["nopm"]
    assert run.metrics["inconsistent"] == 0
    (phase,) = run.phases
    tables = run.series[str(phase.idx)]
    rows = tables[CONSISTENCY_TABLE]["rows"]  # clause 3.3.2's twelve, and the stock's three
    assert [r[0] for r in rows] == list(range(1, 16)) and all(r[2] == 0 for r in rows), rows
    # hundreds of undelivered orders in every district: Delivery never skips one
    assert run.metrics["delivery_skipped_pct"] == 0
    counts = {script_stem(s.script): s.transactions or 0 for s in scripts.phase_scripts(phase)}
    assert sum(counts.values()) == phase.transactions == 6000 and not phase.failed
    counts["new_order"] += counts.pop("new_order_rollback")  # a New-Order either way
    for name, pct in MIX.items():
        assert abs(100 * counts[name] / 6000 - pct) <= 1.0, (name, counts)
    # 1 in 100 New-Orders rolls back: ~27 of ~2,700 here
    assert 0.3 <= run.metrics["rollback_pct"] <= 2.0
    # NOPM from the orders written (the sum of D_NEXT_O_ID), over pgbench's measured time: one
    # thread, so pgbench's count of committed New-Orders is exact, and the two agree
    written = {r[0]: r[2] - r[1] for r in tables[COUNTERS_TABLE]["rows"]}
    assert written["orders"] == counts["new_order"] - counts_rolled_back(phase) > 0
    minutes = phase.transactions / phase.tps / 60
    assert run.metrics["nopm"] == pytest.approx(written["orders"] / minutes)
    nopm = 60 * next(s.tps for s in scripts.phase_scripts(phase) if s.script.endswith(
        "/new_order.sql"))  # fmt: skip
    assert run.metrics["nopm_pgbench"] == pytest.approx(nopm)
    assert run.metrics["nopm"] == pytest.approx(nopm, rel=1e-4)


def counts_rolled_back(phase: Any) -> int:
    return next(s.transactions or 0 for s in scripts.phase_scripts(phase)
                if script_stem(s.script) == "new_order_rollback")  # fmt: skip


def test_tpcc_runs_in_both_modes_on_18_and_15(made: dict[str, Any]) -> None:
    runs = made["runs"]
    assert sorted((r.variant, r.label.split()[-1]) for r in runs) == [
        ("pg15", "mode=client"), ("pg15", "mode=procedures"),
        ("pg18", "mode=client"), ("pg18", "mode=procedures"),
    ]  # fmt: skip
    for run in runs:
        check_kit_run(run)
        argv = run.phases[0].argv
        assert "-D" in argv and argv[argv.index("-D") + 1] == "warehouses=2" and "-n" in argv
        assert ("-Mprepared" in argv or "prepared" in argv) == (run.variant == "pg15"), argv
        versions = run.fingerprint["server_version"]
        assert versions.startswith("15" if run.variant == "pg15" else "18")
    client = next(r for r in runs if r.label.endswith("client") and r.variant == "pg18")
    assert any("client/new_order.sql" in a for a in client.phases[0].argv)


def test_show_and_export_say_nopm(made: dict[str, Any], lab: Lab, capsys) -> None:
    store = made["store"]
    run = made["runs"][0]
    assert cli("show", str(run.id), lab=lab, store=store) == 0
    out = capsys.readouterr().out
    assert f"nopm = {run.metrics['nopm']:,.1f}" in out and "new_order_rollback.sql" in out
    assert "p95 ms" in out  # each transaction type's own percentiles, from the log
    assert "consistency: 15 of 15 conditions hold" in out
    assert "orders written (the sum of D_NEXT_O_ID: NOPM's count)" in out
    rows = list(csv.DictReader(io.StringIO(_export(lab, store, "--by", "script", capsys=capsys))))
    new_order = [r for r in rows if r["script"].endswith("/new_order.sql")]
    assert new_order and all(float(r["latency_p95_ms"]) >= float(r["latency_p50_ms"]) > 0
                             for r in new_order)  # fmt: skip
    assert "inconsistent" not in out.split("warnings")[-1]  # no such warning
    assert cli("export", "tpcc", "--format", "csv", lab=lab, store=store) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 4 and all(float(r["nopm"]) > 0 for r in rows)
    # the kit and its mode, as the plan and show say it (not "@4455+@45+…")
    assert {r["script"] for r in rows} == {"tpcc (procedures)", "tpcc (client)"}
    assert {round(float(r["nopm"]), 3) for r in rows} == {
        round(r.metrics["nopm"], 3) for r in made["runs"]
    }
    page = made["store"].parent / "tpcc.html"
    assert cli("report", "tpcc", "-o", str(page), lab=lab, store=store) == 0
    html = page.read_text()  # the points table: a column per kit figure
    assert all(f"<th>{k}</th>" in html for k in ("nopm", "tpm", "rollback_pct", "inconsistent"))
    # each point's scripts by their names, not by the paths pglab wrote them to
    assert "<td>1 new_order.sql</td>" in html and "kit-scripts/" not in html.split("<table")[-1]


def _export(lab: Lab, store: Path, *args: str, capsys: Any) -> str:
    assert cli("export", "tpcc", "--format", "csv", *args, lab=lab, store=store) == 0
    return capsys.readouterr().out


@pytest.mark.usefixtures("password")
def test_tpcc_on_an_existing_server(outside_server, lab: Lab, tmp_path: Path) -> None:
    path = tmp_path / "existing.toml"
    path.write_text(f'name = "tpcc-existing"\n[server]\ndsn = "{outside_server.dsn()}"\n'
                    f'database = "pglab_tpcc"\n{WORKLOAD}')  # fmt: skip
    store = tmp_path / "r.sqlite"
    try:
        assert cli("run", str(path), lab=lab, store=store) == 0
        with open_store(str(store)) as s:
            runs = [s.get_run(row.id) for row in s.list_runs("tpcc-existing")]
        assert len(runs) == 2
        for run in runs:
            check_kit_run(run)
        with outside_server.admin("pglab_tpcc") as conn:  # the kit's tables, in its database
            (n,) = conn.execute("SELECT count(*) FROM warehouse").fetchone()
        assert n == 2 and TPCC.scale_what == "warehouses"
    finally:
        outside_server.drop_database("pglab_tpcc")


@pytest.fixture
def password(monkeypatch):
    from helpers.existing_server import BENCH_PASSWORD

    monkeypatch.setenv("PGPASSWORD", BENCH_PASSWORD)


def test_compare_judges_points_of_a_kit_on_nopm(made: dict[str, Any], lab: Lab, capsys) -> None:
    store = made["store"]
    code = cli("compare", "tpcc:pg18 mode=procedures", "tpcc:pg18 mode=client",
               lab=lab, store=store)  # fmt: skip
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0, out
    assert "median nopm A" in out and "significant (log NOPM" in out, out
    runs = {r.label: r for r in made["runs"] if r.variant == "pg18"}
    assert fmt_short(runs["pg18 mode=procedures"].metrics["nopm"]) in out


def fmt_short(value: float) -> str:
    from pglab.cli import fmt

    return fmt.short(value)
