"""The TPC-C-like kit against the clauses it claims, on a real server: one warehouse loaded by
the kit's loader into a server the tests started (``outside_server``), the kit's own scripts
run by pgbench with arguments fixed by the test where a case needs them.

- A New-Order with the same item on two lines updates that stock row per line (clause
  2.4.2.2), in both modes: before the fix the client mode's ``UPDATE ... FROM`` changed it once.
- Concurrent Deliveries on one warehouse skip no district that still has undelivered orders
  (clause 2.7.4.2), in both modes: before the fix a district whose oldest order another
  Delivery had taken was skipped.
- The consistency conditions (clause 3.3.2.1-12, and the stock against the order lines) hold
  after both, and the stock conditions catch a stock row put wrong by hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pglab import procs
from pglab.campaign.spec import DatasetSpec, ServerSpec
from pglab.lab import Lab
from pglab.postgres.sources import resolve
from pglab.workloads.kits import load as kit_load
from pglab.workloads.kits.work.kits import INCLUDE, TPCC

pytestmark = pytest.mark.integration

DB = "pglab_tpcc_faithful"
MODES = ("procedures", "client")


@pytest.fixture(scope="module")
def tpcc(outside_server: Any, lab: Lab) -> Iterator[Any]:
    """One warehouse of the kit's data in a database of the tests' own server."""
    with outside_server.admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB}"')
        conn.execute(f'CREATE DATABASE "{DB}"')
    try:
        kit_load.load(lambda: outside_server.admin(DB), DatasetSpec(kit="tpcc", scale=1))
        yield outside_server
    finally:
        outside_server.drop_database(DB)


def pgbench(server: Any, lab: Lab, script: Path, *args: str) -> str:
    """The kit's script run by pgbench on the test database (as the superuser, over the
    server's socket); pgbench's output."""
    exe = resolve(ServerSpec(), lab).exe("pgbench")
    argv = [exe, "-n", "-h", str(server.sock), "-p", str(server.port), "-U", "admin",
            "-f", str(script), "-D", "warehouses=1", *args, DB]  # fmt: skip
    return procs.run(argv, timeout=300, what="pgbench").stdout


def fixed_new_order(mode: str, lines: list[tuple[int, int]], tmp: Path) -> Path:
    """The mode's New-Order script with its random arguments replaced by ``lines`` (item,
    quantity) of warehouse 1, district 3, customer 42; the unused line slots get item 1."""
    sets = ["\\set w_id 1", "\\set d_id 3", "\\set c_id 42", f"\\set ol_cnt {len(lines)}"]
    for n in range(1, 16):
        item, qty = lines[n - 1] if n <= len(lines) else (1, 1)
        sets += [f"\\set i{n} {item}", f"\\set s{n} 1", f"\\set q{n} {qty}"]
    text = (TPCC.directory() / mode / "new_order.sql").read_text()
    text = INCLUDE.sub(lambda m: "\n".join(sets) + "\n", text)
    path = tmp / f"new_order-{mode}.sql"
    path.write_text(text)
    return path


def stock(conn: psycopg.Connection, item: int) -> tuple[int, int, int, int]:
    row = conn.execute(
        "SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock "
        "WHERE s_w_id = 1 AND s_i_id = %s",
        (item,),
    ).fetchone()
    assert row is not None
    return row[0], row[1], row[2], row[3]


def per_line(quantity: int, ordered: list[int]) -> int:
    """S_QUANTITY after the lines as clause 2.4.2.2 takes them, one at a time."""
    for q in ordered:
        quantity = quantity - q if quantity - q >= 10 else quantity - q + 91
    return quantity


def violations(conn: psycopg.Connection) -> dict[int, int]:
    return {int(r[0]): int(r[2]) for r in kit_load.check(conn, "tpcc")["rows"]}


@pytest.mark.parametrize("mode", MODES)
def test_a_repeated_item_updates_its_stock_per_line(tpcc: Any, lab: Lab, tmp_path: Path,
                                                    mode: str) -> None:  # fmt: skip
    item = 77 if mode == "procedures" else 78  # one item per mode: each starts from the load
    lines = [(item, 9), (501, 1), (item, 8), (502, 2), (item, 7)]  # three lines of one item
    with tpcc.admin(DB) as conn:
        quantity, ytd, orders, remote = stock(conn, item)
        (o_id,) = conn.execute(
            "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3"
        ).fetchone()
    pgbench(tpcc, lab, fixed_new_order(mode, lines, tmp_path), "-t", "1")
    with tpcc.admin(DB) as conn:
        after = stock(conn, item)
        written = conn.execute(
            "SELECT count(*), sum(ol_quantity) FROM order_line "
            "WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = %s AND ol_i_id = %s",
            (o_id, item),
        ).fetchone()
        broken = {k: v for k, v in violations(conn).items() if v}
    assert written == (3, 24)  # the order's three lines of the item
    # per line: the quantity taken line by line, the year's total and the count by three
    assert after == (per_line(quantity, [9, 8, 7]), ytd + 24, orders + 3, remote), mode
    assert not broken, broken


def test_the_stock_conditions_catch_a_wrong_stock_row(tpcc: Any) -> None:
    """Conditions 13-15 count the stock rows that disagree with the order lines written since
    the load (the client mode's defect left 81 such rows in a 30 s run)."""
    with tpcc.admin(DB) as conn:
        with conn.transaction():  # undone at the end (psycopg.Rollback)
            conn.execute("UPDATE stock SET s_ytd = s_ytd + 1, s_order_cnt = s_order_cnt + 1 "
                         "WHERE s_w_id = 1 AND s_i_id IN (901, 902)")  # fmt: skip
            found = violations(conn)
            conn.execute("UPDATE stock SET s_remote_cnt = s_remote_cnt + 1 "
                         "WHERE s_w_id = 1 AND s_i_id = 903")  # fmt: skip
            remote = violations(conn)
            raise psycopg.Rollback()
        assert not any(violations(conn).values())
    assert {k: found[k] for k in (13, 14, 15)} == {13: 2, 14: 2, 15: 0}
    assert remote[15] == 1
    assert all(v == 0 for k, v in found.items() if k < 13), found


@pytest.mark.parametrize("mode", MODES)
def test_concurrent_deliveries_skip_no_district_with_orders(tpcc: Any, lab: Lab,
                                                            mode: str) -> None:  # fmt: skip
    """Four clients deliver on the one warehouse at once: each Delivery delivers ten orders,
    one per district (there are hundreds undelivered in each), and none is recorded skipped."""
    script = TPCC.directory() / mode / "delivery.sql"
    with tpcc.admin(DB) as conn:
        (undelivered,) = conn.execute("SELECT count(*) FROM new_order").fetchone()
        (skips,) = conn.execute("SELECT count(*) FROM delivery_skip").fetchone()
    out = pgbench(tpcc, lab, script, "-c", "4", "-j", "2", "-t", "40")
    done = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))
    assert done == 160, out
    with tpcc.admin(DB) as conn:
        (left,) = conn.execute("SELECT count(*) FROM new_order").fetchone()
        (skips_after,) = conn.execute("SELECT count(*) FROM delivery_skip").fetchone()
        broken = {k: v for k, v in violations(conn).items() if v}
    assert (undelivered - left, skips_after - skips) == (10 * done, 0), mode
    assert not broken, broken
