"""The TPC-E-like kit's data and transactions on a real server: 1,000 customers (one load
unit) loaded by the kit's loader into a server the tests started (``outside_server``), checked
against the specification's ratios and the kit's consistency conditions; a row put wrong by
hand breaks the condition that is about it; the kit's own scripts run by pgbench, every
transaction type, concurrently, keep the data consistent, and every trade a Trade-Result
completes is one a Trade-Order placed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pglab import procs
from pglab.campaign.spec import ServerSpec
from pglab.lab import Lab
from pglab.postgres.sources import resolve
from pglab.workloads.kits import load as kit_load
from pglab.workloads.kits.work.kits import TPCE
from pglab.workloads.tpce import load as tpce_load
from pglab.workloads.tpce import rows as tpce_rows

pytestmark = pytest.mark.integration

DB = "pglab_tpce_kit"


@pytest.fixture(scope="module")
def tpce(outside_server: Any, lab: Lab) -> Iterator[Any]:
    """1,000 customers of the kit's data in a database of the tests' own server."""
    with outside_server.admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB}"')
        conn.execute(f'CREATE DATABASE "{DB}"')
    try:
        said: list[str] = []
        steps = tpce_load.load(lambda: outside_server.admin(DB), 1000, said.append)
        assert (
            "consistency" in steps
            and "loading tpce: 1 of 1 units of 1,000 customers" in " ".join(said)
        )
        yield outside_server
    finally:
        outside_server.drop_database(DB)


def violations(conn: psycopg.Connection) -> dict[int, int]:
    return {int(r[0]): int(r[2]) for r in kit_load.check(conn, "tpce")["rows"]}


def counts(conn: psycopg.Connection, *tables: str) -> dict[str, int]:
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_the_load_has_the_specifications_ratios(tpce: Any) -> None:
    with tpce.admin(DB) as conn:
        n = counts(conn, "customer", "customer_account", "broker", "company", "security",
                   "last_trade", "watch_list", "status_type", "trade_type", "exchange",
                   "sector", "industry", "charge", "commission_rate", "financial",
                   "company_competitor", "news_item")  # fmt: skip
        hs_per_account = conn.execute("SELECT count(*)::float / 5000 FROM holding_summary")
        (per_account,) = hs_per_account.fetchone()
        (fks,) = conn.execute("SELECT count(*) FROM pg_constraint WHERE contype = 'f'").fetchone()
    assert n == {"customer": 1000, "customer_account": 5000, "broker": 10, "company": 500,
                 "security": 685, "last_trade": 685, "watch_list": 1000, "status_type": 5,
                 "trade_type": 5, "exchange": 4, "sector": 12, "industry": 102, "charge": 15,
                 "commission_rate": 240, "financial": 10_000, "company_competitor": 1500,
                 "news_item": 1000}  # fmt: skip
    assert 8 <= per_account <= 10  # about 10 holdings per account, as the specification's
    assert fks >= 40


def test_the_generator_is_deterministic() -> None:
    a = list(tpce_rows.Unit(1, 2000).trades())
    b = list(tpce_rows.Unit(1, 2000).trades())
    assert a == b and a != list(tpce_rows.Unit(2, 2000).trades())


def test_consistency_holds_after_the_load_and_catches_wrong_rows(tpce: Any) -> None:
    with tpce.admin(DB) as conn:
        assert violations(conn) == dict.fromkeys(range(1, 11), 0)
        cases = {  # a change by hand -> the conditions it breaks (each undone after)
            "UPDATE holding SET h_qty = h_qty + 100 WHERE h_t_id = 1": {1},
            "UPDATE trade SET t_qty = t_qty + 100 WHERE t_id = 1": {2, 6},
            "UPDATE customer_account SET ca_bal = ca_bal + 1 WHERE ca_id = 7": {4},
            "UPDATE settlement SET se_amt = se_amt - 1 WHERE se_t_id = 2": {5, 6},
            "DELETE FROM tpce_submitted WHERE sq_t_id = (SELECT min(sq_t_id) "
            "FROM tpce_submitted)": {8},
            "UPDATE broker SET b_num_trades = b_num_trades + 1 WHERE b_id = 3": {10},
        }
        for sql, expected in cases.items():
            with conn.transaction():
                conn.execute(sql)
                found = {k for k, v in violations(conn).items() if v}
                raise psycopg.Rollback()
            assert found == expected, sql


def pgbench(server: Any, lab: Lab, scripts: list[Path], *args: str) -> str:
    """The kit's scripts run by pgbench on the test database; pgbench's output."""
    exe = resolve(ServerSpec(), lab).exe("pgbench")
    files = [a for s in scripts for a in ("-f", str(s))]
    argv = [exe, "-n", "-h", str(server.sock), "-p", str(server.port), "-U", "admin", *files,
            "-D", "customers=1000", *args, DB]  # fmt: skip
    return procs.run(argv, timeout=300, what="pgbench").stdout


def processed(out: str) -> int:
    return int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))


@pytest.mark.parametrize(
    ("mode", "protocol"), [("procedures", "simple"), ("client", "simple"), ("client", "prepared")]
)
def test_every_transaction_runs_and_keeps_the_data_consistent(
    tpce: Any, lab: Lab, mode: str, protocol: str
) -> None:
    """The whole mix at once, 4 clients, in each mode (the client mode's scripts also with
    pgbench's prepared statements, where a variable is a parameter, not text): no transaction
    fails, the trades Trade-Results completed are the broker's count, and every condition
    holds after. A fixed seed: each pgbench thread draws its scripts from its own seeded
    generator, so the counts are the same run after run (a random one left the rollback, 0.1%
    of the mix, out of 2,000 transactions once in CI: it does so about one time in seven)."""
    scripts = [s for s in TPCE.scripts(mode)]
    files = [Path(s.path) for s in scripts]
    assert all(f.parent.name == mode for f in files)
    weighted = [f"{f}@{s.weight}" for f, s in zip(files, scripts, strict=True)]
    with tpce.admin(DB) as conn:
        before = kit_load.counters(conn, "tpce")
    exe = resolve(ServerSpec(), lab).exe("pgbench")
    argv = [exe, "-n", "-h", str(tpce.sock), "-p", str(tpce.port), "-U", "admin",
            *(a for w in weighted for a in ("-f", w)), "-D", "customers=1000", "-M", protocol,
            "-c", "4", "-j", "2", "-t", "500", "--random-seed", "7", DB]  # fmt: skip
    out = procs.run(argv, timeout=300, what="pgbench").stdout
    assert processed(out) == 2000 and "failed: 0" in out.replace(
        "number of failed transactions", "failed"
    ), out
    with tpce.admin(DB) as conn:
        after = kit_load.counters(conn, "tpce")
        broken = {k: v for k, v in violations(conn).items() if v}
    assert not broken, broken
    assert after["trades"] > before["trades"]
    # each transaction type ran (pgbench's per-script counts)
    ran = dict(
        re.findall(r"SQL script \d+: (\S+)\n - weight: \d+ \([^)]*\)\n - (\d+) transactions", out)
    )
    assert all(int(v) > 0 for v in ran.values()) and len(ran) == 11, out


# what each mode leaves of a run, timestamps aside (they differ by when each statement ran):
# the trades, their requests, queue and history statuses, holdings and their history and
# summaries, settlements, cash transactions, balances, brokers' counts and the market's prices
STATE = {
    "trade": "t_id, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty, t_bid_price, t_ca_id, "
    "t_exec_name, t_trade_price, t_chrg, t_comm, t_tax, t_lifo",
    "trade_history": "th_t_id, th_st_id",
    "trade_request": "tr_t_id, tr_tt_id, tr_s_symb, tr_qty, tr_bid_price, tr_b_id",
    "tpce_submitted": "sq_t_id",
    "holding": "h_t_id, h_ca_id, h_s_symb, h_price, h_qty",
    "holding_history": "hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty",
    "holding_summary": "hs_ca_id, hs_s_symb, hs_qty",
    "settlement": "se_t_id, se_cash_type, se_cash_due_date, se_amt",
    "cash_transaction": "ct_t_id, ct_amt, ct_name",
    "customer_account": "ca_id, ca_bal",
    "broker": "b_id, b_num_trades, b_comm_total",
    "last_trade": "lt_s_symb, lt_price, lt_vol",
    "tpce_idle": "1",
}


def state(conn: psycopg.Connection) -> dict[str, tuple[int, str]]:
    """Each table of ``STATE``: its rows and a digest of them in order."""
    out = {}
    for table, columns in STATE.items():
        sql = (f"SELECT count(*), md5(coalesce(string_agg(r::text, '|' ORDER BY r::text), '')) "
               f"FROM (SELECT {columns} FROM {table}) AS r")  # fmt: skip
        n, digest = conn.execute(sql).fetchone()
        out[table] = (int(n), str(digest))
    return out


# the writers weigh most here: the loaded data's 250 trades in the market's queue are completed
# first, then the run's own orders, sells of held shares among them (LIFO and FIFO)
EQUAL_MIX = {"trade_order": 400, "trade_order_rollback": 10, "trade_result": 400,
             "market_feed": 40, "trade_update": 50}  # fmt: skip


def test_client_mode_does_what_procedures_do(tpce: Any, lab: Lab) -> None:
    """The two modes on two copies of the same data, one client, the same seed (so the same
    draws, script after script), every script, the writers most: every table a transaction
    writes ends the same in both, row for row (timestamps aside), and every condition holds
    in both. (Trade-Result's client statement selling holdings FIFO where they were to be
    sold LIFO fails it.)"""
    copies = {mode: f"{DB}_{mode}" for mode in ("procedures", "client")}
    with tpce.admin() as conn:
        for name in copies.values():
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{DB}" STRATEGY = FILE_COPY')
    try:
        exe = resolve(ServerSpec(), lab).exe("pgbench")
        ends = {}
        for mode, name in copies.items():
            weighted = [f"{s.path}@{EQUAL_MIX.get(Path(s.path).stem, 20)}"
                        for s in TPCE.scripts(mode)]  # fmt: skip
            argv = [exe, "-n", "-h", str(tpce.sock), "-p", str(tpce.port), "-U", "admin",
                    *(a for w in weighted for a in ("-f", w)), "-D", "customers=1000",
                    "-c", "1", "-t", "1500", "--random-seed", "5", name]  # fmt: skip
            out = procs.run(argv, timeout=300, what="pgbench").stdout
            assert processed(out) == 1500, out
            with tpce.admin(name) as conn:
                assert not {k: v for k, v in violations(conn).items() if v}, mode
                ends[mode] = state(conn)
        assert ends["client"]["trade"][0] > 100_000  # the loaded trades and the run's
        assert ends["client"] == ends["procedures"]
        with tpce.admin(copies["client"]) as conn:  # shares sold: LIFO and FIFO both ran
            sold = conn.execute(
                "SELECT DISTINCT t_lifo FROM trade JOIN trade_type ON tt_id = t_tt_id "
                "JOIN holding_history ON hh_t_id = t_id "
                "WHERE t_st_id = 'CMPT' AND tt_is_sell AND hh_after_qty > 0"
            ).fetchall()
        assert len(sold) == 2, sold  # holdings partly sold, in either order
    finally:
        for name in copies.values():
            tpce.drop_database(name)
