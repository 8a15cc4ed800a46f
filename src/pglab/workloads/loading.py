"""What the kinds' data loaders share (``workloads/KIND/load.py``): a session to load through,
rows by COPY, units of a dataset loaded on several connections at once with their progress and
an ETA, and a loaded dataset's last steps (its keys and indexes, VACUUM ANALYZE), timed.

The loaders are reached through the registry (``interface.Workload.dataset``: a
``postgres.dataset.DatasetKind``), never imported by the servers' package: ``postgres/dataset``
makes a template and ``postgres/bench_db`` pglab's database on an existing server, and each
asks the kind to load its rows there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import psycopg

Connect = Callable[[], psycopg.Connection]
T = TypeVar("T")


def copy_rows(conn: psycopg.Connection, table: str, rows: Iterable[tuple[object, ...]]) -> int:
    """``rows`` into ``table`` by COPY; how many."""
    n = 0
    with conn.cursor() as cur, cur.copy(f"COPY {table} FROM STDIN".encode()) as copy:
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


def on_connections(
    items: Sequence[T],
    jobs: int,
    load_one: Callable[[T], None],
    told: Callable[[T], None],
    prefix: str,
) -> None:
    """``load_one`` of every item on ``jobs`` threads (each item its own connections and
    transactions), ``told`` after each one done; the first failure stops the others from
    starting another item, and is raised."""
    stop = threading.Event()

    def one(item: T) -> None:
        if stop.is_set():
            return
        try:
            load_one(item)
        except BaseException:
            stop.set()  # the others do not start another item
            raise
        told(item)

    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix=prefix) as pool:
        for future in [pool.submit(one, item) for item in items]:
            future.result()


class Progress:
    """What has been loaded so far, told as it grows (thread-safe)."""

    def __init__(self, said: Callable[[float, float], str], on_status: Callable[[str], None]):
        self.said, self.on_status = said, on_status
        self.lock, self.done, self.t0 = threading.Lock(), 0.0, time.monotonic()

    def add(self, amount: float) -> None:
        with self.lock:
            self.done += amount
            said = self.said(self.done, time.monotonic() - self.t0)
        self.on_status(said)


def said_load(done: int, total: int, what: str, seconds: float) -> str:
    """``3 of 10 warehouses (30%), ETA 0:12`` as told while loading."""
    return f"{done:,} of {total:,} {what} ({100 * done / total:.0f}%)" + eta(done, total, seconds)


def eta(done: float, total: float, seconds: float) -> str:
    """``, ETA 0:12`` at the rate so far (nothing before the first unit is done)."""
    if not done or seconds <= 0:
        return ""
    left = (total - done) * seconds / done
    return f", ETA {int(left) // 60}:{int(left) % 60:02d}"


def keys_and_vacuum(
    connect: Connect, name: str, keys_sql: str, on_status: Callable[[str], None]
) -> dict[str, float]:
    """A loaded kit's last steps, timed: its keys and indexes, then VACUUM ANALYZE."""
    t0 = time.monotonic()
    on_status(f"{name} dataset: keys and indexes")
    with connect() as conn:
        conn.execute(keys_sql.encode())
    return {"primary keys": time.monotonic() - t0, "vacuum": timed_vacuum(connect)}


def timed_vacuum(connect: Connect) -> float:
    """VACUUM ANALYZE of the loaded tables; its seconds."""
    t0 = time.monotonic()
    with connect() as conn:
        conn.execute("VACUUM ANALYZE")
    return time.monotonic() - t0
