"""Telemetry through real campaigns: what is stored with a run, on PostgreSQL 18 and 15."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab import report
from pglab.campaign import parse as campaign
from pglab.lab import Lab
from pglab.report import charts
from pglab.run import campaign_run
from pglab.run.executor import Executor
from pglab.store import open_store
from pglab.telemetry import pg_stats, summary, waits
from pglab.telemetry.base import Table
from pglab.telemetry.watch import OWN

pytestmark = pytest.mark.integration

PG15 = Path("/usr/lib/postgresql/15/bin")


@pytest.fixture(params=["pg18", "pg16", "pg15"])
def server(request) -> str:
    """The [server] table of a campaign: embedded 18, the pgserver wheel's 16, Debian's 15."""
    if request.param == "pg18":
        return ""
    if request.param == "pg16":
        return f'[server]\nbindir = "{request.getfixturevalue("pg16_bindir")}"\n'
    if not (PG15 / "pgbench").exists():
        pytest.skip("no PostgreSQL 15 installed (apt-get install postgresql-15)")
    return f'[server]\nbindir = "{PG15}"\n'


def run_campaign(tmp_path: Path, lab: Lab, doc: str, files: dict[str, str] | None = None):
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    path = tmp_path / "c.toml"
    path.write_text(doc)
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        return [store.get_run(i) for i in out.run_ids]


def table(run: dict, kind: str, phase: int = 0) -> Table | None:
    data = run.series.get(str(phase), {}).get(kind)
    return Table.from_json(data) if data else None


def test_every_sampler_stores_data_on_each_version(
    tmp_path: Path, lab: Lab, no_leftovers, server: str
) -> None:
    doc = f"""name = "watched"
{server}
[dataset]
scale = 1
[workload]
clients = 2
duration = 3
"""
    (run,) = run_campaign(tmp_path, lab, doc)
    assert run.status == "ok", run.error
    kinds = set(run.series["0"])
    notes = table(run, "telemetry.notes")
    expected = ["pg.database", "pg.bgwriter", "pg.checkpointer", "pg.wal", "waits", "os.cpu",
                "os.mem", "os.procs"]  # fmt: skip
    if "pgserver16" in server:
        # the pgserver wheel ships no contrib: the buffers sampler must say so and step aside,
        # leaving its tables absent (not zeros) and every other sampler working
        assert [r[0] for r in notes.rows] == ["buffers"], notes.rows
        assert "pg_buffercache is not available" in notes.rows[0][1]
        assert "pg.buffercache" not in kinds and "pg.top_relations" not in kinds
    else:
        assert notes is None, notes.rows  # no sampler switched itself off
        expected += ["pg.buffercache", "pg.top_relations"]
        if int(run.fingerprint["server_version"].split(".")[0]) >= 16:
            expected.append("pg.usage_counts")
        top = table(run, "pg.top_relations")
        assert "pgbench_accounts" in [r[top.columns.index("relation")] for r in top.rows]
    for kind in expected:
        assert kind in kinds, f"{kind} missing from {sorted(kinds)}"
    major = int(run.fingerprint["server_version"].split(".")[0])
    assert ("pg.io" in kinds) == (major >= 16), "pg_stat_io exists from PostgreSQL 16 on"
    # pgbench used CPU, and the server did
    procs = table(run, "os.procs")
    cols = procs.columns
    assert max(r[cols.index("pgbench_cpu_pct")] for r in procs.rows) > 1
    assert max(r[cols.index("postgres_cpu_pct")] for r in procs.rows) > 1


def test_contended_updates_show_lock_waits_and_select_only_does_not(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    doc = """name = "contention"
order = "sequential"
[server.settings]
compute_query_id = "on"
[dataset]
scale = 1
[workload]
clients = 8
duration = 3
[matrix]
script = ["one-row.sql", "select-only"]
"""
    hot = "UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;\n"
    runs = run_campaign(tmp_path, lab, doc, {"one-row.sql": hot})
    by_script = {r.spec["axes"][0][1]: r for r in runs}
    contended = waits.top(table(by_script["one-row.sql"], "waits"), n=5)
    reading = waits.top(table(by_script["select-only"], "waits"), n=5)
    assert any(name.startswith("Lock:") for name, _, _ in contended), contended
    assert not any(name.startswith("Lock:") for name, _, _ in reading), reading
    # with query ids computed, each wait by statement class: the lock waits are the UPDATE's
    by_query = table(by_script["one-row.sql"], waits.STATEMENTS)
    assert by_query.columns == waits.STATEMENT_COLUMNS
    locks = [r for r in by_query.rows if r[0] == "Lock"]
    assert locks and all(r[4] == hot.strip() for r in locks), by_query.rows
    assert len({r[2] for r in locks}) == 1 and all(r[3] > 0 for r in locks)


def test_checkpoints_during_a_phase_are_stored_as_events(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    doc = """name = "checkpoints"
[server.settings]
checkpoint_timeout = "30s"
checkpoint_completion_target = 0.1
[dataset]
scale = 1
[workload]
clients = 2
duration = 34
"""
    (run,) = run_campaign(tmp_path, lab, doc)
    assert run.status == "ok", run.error
    events = table(run, "checkpoints")
    assert events is not None, "a checkpoint_timeout of 30 s must checkpoint within 34 s"
    reasons = [r[events.columns.index("reason")] for r in events.rows]
    assert "time" in reasons, reasons
    # the report draws every panel of this real run: nothing is missing
    with open_store(str(tmp_path / "r.sqlite")) as store:
        written = report.write(store, "checkpoints", tmp_path / "report.html", tmp_path)
    (pt,) = written.report.points
    chart = charts.point_chart(pt, 1)
    assert chart is not None and chart.missing == ()
    assert pt.latency_ms[99.0] >= pt.latency_ms[50.0] > 0
    assert pt.telemetry is not None and pt.telemetry.figures["checkpoints"] >= 1


def test_commit_counts_agree_with_pgbench(tmp_path: Path, lab: Lab, no_leftovers, server) -> None:
    doc = f"""name = "counted"
{server}
[dataset]
scale = 1
[workload]
clients = 2
transactions = 300
vacuum = false
"""
    (run,) = run_campaign(tmp_path, lab, doc)
    tables = summary.tables_of(run.series["0"])
    per_second = tables["pg.database"]
    col = per_second.columns.index("xact_commit")
    whole = pg_stats.phase_delta(tables, "pg.database")["xact_commit"]
    assert sum(r[col] for r in per_second.rows) == whole
    own = sum(r[1] for r in tables[OWN].rows)
    pgbench_tx = run.phases[0].transactions
    assert pgbench_tx == 600
    # what is left after pglab's own: pgbench's 3 sessions (one per client, one to set up: a
    # session's start is a transaction) and its 2 or 3 setup queries (scale, partitions). The
    # closing snapshot waits for every session to end, so nothing is missing (a snapshot taken
    # while backends still held unflushed statistics came out short); an autovacuum worker
    # passing by may add a few
    rest = whole - own - pgbench_tx
    assert 3 + 2 <= rest <= 3 + 3 + 4, (whole, own, pgbench_tx)
