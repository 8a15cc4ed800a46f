"""The TPC-H-like kit's dataset loaded into a real server at scale factor 0.01: tpchgen-cli's
rows in parallel COPY, the row counts recorded once for that scale (tests/data), keys and
statistics in place, progress told; and tpchgen-cli missing said before anything is made."""

from __future__ import annotations

import json
import time
from pathlib import Path

import psycopg
import pytest

from pglab.errors import LabError
from pglab.workloads.tpch import load as tpch_load
from pglab.workloads.tpch import plans, power, throughput
from pglab.workloads.tpch.work.queries import QUERIES, query

pytestmark = pytest.mark.integration
ROWS = json.loads((Path(__file__).parents[1] / "data" / "tpch_sf001_rows.json").read_text())
DB = "pglab_tpch_test"


@pytest.fixture(scope="module")
def loaded(outside_server):
    outside_server.drop_database(DB)
    with outside_server.admin() as conn:
        conn.autocommit = True
        conn.execute(f"CREATE DATABASE {DB}")
    said: list[str] = []
    steps = tpch_load.load(lambda: outside_server.admin(DB), 0.01, said.append, jobs=2)
    yield outside_server, steps, said
    outside_server.drop_database(DB)


def test_rows_keys_and_statistics(loaded) -> None:
    server, steps, said = loaded
    assert set(steps) == {"tables", "rows", "primary keys", "vacuum"}
    with server.admin(DB) as conn:
        for table, rows in ROWS["rows"].items():
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (rows,), table
        keys = conn.execute(
            "SELECT count(*) FILTER (WHERE contype = 'p'), count(*) FILTER (WHERE contype = 'f')"
            " FROM pg_constraint WHERE connamespace = 'public'::regnamespace"
        ).fetchone()
        assert keys == (8, 8)
        analyzed = conn.execute(
            "SELECT count(*) FROM pg_stat_user_tables WHERE last_analyze IS NOT NULL"
        ).fetchone()
        assert analyzed == (8,)
    assert said[-1] == "tpch dataset: keys and indexes"
    assert any(s.startswith("loading tpch: 100% of 0.1 M rows") for s in said)


def test_missing_generator_said_before_anything(outside_server, monkeypatch) -> None:
    monkeypatch.setattr(tpch_load.shutil, "which", lambda *a, **k: None)
    touched: list[int] = []

    def connect() -> psycopg.Connection:
        touched.append(1)
        raise AssertionError("connected before the check")

    with pytest.raises(LabError) as err:
        tpch_load.load(connect, 0.01)
    assert "tpchgen-cli" in err.value.message and "pip install" in (err.value.hint or "")
    assert not touched


def test_the_22_queries_return_the_recorded_rows(loaded) -> None:
    """Seed 1's statements at SF 0.01 return the row counts recorded for them (tpchgen-cli's
    data is deterministic, so is the seeded draw of the substitution parameters)."""
    server, _, _ = loaded
    with server.admin(DB) as conn:
        counts = {str(n): len(conn.execute(query(n, 1, 0.01).encode()).fetchall()) for n in QUERIES}
    assert counts == ROWS["queries_seed_1"]


def test_power_run_figures_timeouts_and_a_forced_plan_change(loaded) -> None:
    server, _, _ = loaded
    with server.admin(DB) as conn:
        times = power.power_run(conn, list(QUERIES), 1, 0.01, timeout_s=60)
        assert [t.number for t in times] == list(QUERIES) and not any(t.timed_out for t in times)
        assert {str(t.number): t.rows for t in times} == ROWS["queries_seed_1"]
        figs = power.figures(times, 0.01)
        assert figs["geomean_s"] > 0 and figs["timeouts"] == 0
        slow = power.power_run(conn, [9, 1], 1, 0.01, timeout_s=0.001)
        assert [t.timed_out for t in slow] == [True, True] and slow[0].rows is None
        before = plans.plans(conn, [3, 5, 9], 1, 0.01)
        conn.execute("SET enable_hashjoin = off")
        after = plans.plans(conn, [3, 5, 9], 1, 0.01)
    changes = [plans.shape_change(plans.parse(before[n]), plans.parse(after[n])) for n in (3, 5, 9)]
    assert any(c and "hash join" in c.split("→")[0] for c in changes), changes


def test_a_failed_stream_cancels_the_others_queries_on_the_server(loaded, monkeypatch) -> None:
    """Stream 0 fails after a second; stream 1's long query is cancelled on the server then
    (not run to its end after pglab left), and no stream goes on to another query."""
    server, _, _ = loaded
    failing = "SELECT 1 / (count(*) - count(*)) FROM (SELECT pg_sleep(1)) s"
    monkeypatch.setattr(power, "query", lambda n, seed, scale: failing if seed == 1
                        else "SELECT pg_sleep(60) /* pglab-cancel-test */")  # fmt: skip
    t0 = time.monotonic()
    with pytest.raises(psycopg.errors.DivisionByZero):
        throughput.throughput_run(lambda: server.admin(DB), [1, 2], 1, 0.01, streams=2)
    assert time.monotonic() - t0 < 20
    with server.admin(DB) as conn:
        sql = ("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pglab-cancel-test%' "
               "AND pid <> pg_backend_pid()")  # fmt: skip
        left = conn.execute(sql).fetchone()
    assert left == (0,)
