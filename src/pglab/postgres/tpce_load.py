"""The TPC-E-like kit's dataset: its tables made (``campaign/kits/tpce/schema.sql`` and the
transactions' functions), the fixed tables copied, then one load unit of 1,000 customers per
call on several connections at once, each unit's rows (``tpce_rows``, deterministic per seed,
unit and scale) streamed into ``COPY ... FROM STDIN`` table by table, with progress and an
ETA; then the keys, foreign keys and indexes (``keys.sql``), VACUUM ANALYZE, and the kit's
consistency conditions checked on what was loaded (a broken one fails the load: the generator
is wrong, and no run should measure it).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

import psycopg

from pglab.campaign.kits import TPCE
from pglab.errors import CommandError
from pglab.postgres import kit_load, tpce_fixed, tpce_rows

Connect = kit_load.Connect


def copy_rows(conn: psycopg.Connection, table: str, rows: Iterable[tuple[object, ...]]) -> int:
    """``rows`` into ``table`` by COPY; how many."""
    n = 0
    with conn.cursor() as cur, cur.copy(f"COPY {table} FROM STDIN".encode()) as copy:
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


def load(
    connect: Connect,
    scale: int,
    on_status: Callable[[str], None] = lambda msg: None,
    jobs: int | None = None,
) -> dict[str, float]:
    """Make and load the kit's tables at ``scale`` customers; the seconds of each step."""
    steps: dict[str, float] = {}
    units = tpce_rows.units(scale)
    t0 = time.monotonic()
    try:
        with connect() as conn:
            for name in TPCE.setup:
                conn.execute(TPCE.sql(name).encode())
            for table, rows in tpce_fixed.fixed_tables().items():
                copy_rows(conn, table, rows)
        steps["tables"] = time.monotonic() - t0
        t0 = time.monotonic()
        _load_units(connect, scale, jobs or min(os.cpu_count() or 1, units), on_status)
        with connect() as conn:  # how many securities each exchange lists
            conn.execute(
                b"UPDATE exchange SET ex_num_symb = (SELECT count(*) FROM security "
                b"WHERE s_ex_id = ex_id)"
            )
        steps["rows"] = time.monotonic() - t0
        steps |= kit_load.keys_and_vacuum(connect, "tpce", TPCE.sql("keys"), on_status)
        t0 = time.monotonic()
        on_status("tpce dataset: consistency")
        with connect() as conn:
            broken = kit_load.broken(kit_load.check(conn, "tpce"))
        steps["consistency"] = time.monotonic() - t0
    except psycopg.Error as exc:
        raise CommandError(f"loading the tpce dataset failed: {str(exc).strip()}") from exc
    if broken:
        raise CommandError(f"the loaded tpce dataset is not consistent: {'; '.join(broken)}")
    return steps


def _load_units(connect: Connect, scale: int, jobs: int, on_status: Callable[[str], None]) -> None:
    """Load units 1..N, each in its own transaction, on ``jobs`` connections."""
    units = tpce_rows.units(scale)
    lock, done, t0 = threading.Lock(), [0], time.monotonic()
    stop = threading.Event()

    def one(number: int) -> None:
        if stop.is_set():
            return
        try:
            with connect() as conn:
                for table, rows in tpce_rows.Unit(number, scale).tables():
                    copy_rows(conn, table, rows)
        except BaseException:
            stop.set()  # the others do not start another unit
            raise
        with lock:
            done[0] += 1
            said = kit_load.said_load(done[0], units, TPCE.unit_what, time.monotonic() - t0)
        on_status(f"loading tpce: {said}")

    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="pglab-tpce") as pool:
        for future in [pool.submit(one, n) for n in range(1, units + 1)]:
            future.result()
