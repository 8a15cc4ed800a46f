"""The throughput run: S query streams at once, each on its own session, each running the
queries once in its own order (a permutation drawn from the seed and the stream's number) with
its own substitution parameters (seed + stream). Its figure is TPC-H's Throughput@Size without
the refresh stream: S × queries × 3600 / the run's seconds × SF (queries per hour, QthH-like).
A query stopped by ``statement_timeout`` is recorded as a timeout, as in the power run.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg

from pglab.records import TableJson
from pglab.workloads.tpch import power

TABLE = "tpch.streams"  # a phase's table: a row per stream and query


def order_of(queries: Sequence[int], seed: int, stream: int) -> list[int]:
    """Stream ``stream``'s order of the queries (stream 0 runs them as given)."""
    out = list(queries)
    if stream:
        random.Random(f"tpch-order-{seed}-{stream}").shuffle(out)
    return out


def throughput_run(
    session: Callable[[], psycopg.Connection],
    queries: Sequence[int],
    seed: int,
    scale: float,
    streams: int,
    timeout_s: float | None = None,
    on_status: Callable[[str], None] = lambda msg: None,
) -> tuple[list[list[power.QueryTime]], float]:
    """Each stream's query times (in the stream's order), and the run's wall seconds."""
    lock, done = threading.Lock(), [0]
    total = streams * len(queries)

    def told(msg: str) -> None:
        with lock:
            done[0] += 1
            on_status(f"tpch throughput run: {done[0]} of {total} queries ({msg})")

    opened: list[psycopg.Connection] = []
    stop = threading.Event()

    def one(stream: int) -> list[power.QueryTime]:
        with session() as conn:
            conn.autocommit = True
            with lock:
                opened.append(conn)
            if stop.is_set():
                return []
            order = order_of(queries, seed, stream)
            return power.power_run(
                conn,
                order,
                seed + stream,
                scale,
                timeout_s,
                lambda m: told(f"stream {stream}"),
                stop.is_set,
            )

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=streams, thread_name_prefix="pglab-tpch") as pool:
        futures = [pool.submit(one, s) for s in range(streams)]
        try:
            found = [f.result() for f in futures]
        except BaseException:  # Ctrl-C or a stream's error: every stream's query ends now
            stop.set()
            with lock:
                for conn in opened:
                    power.cancelled(conn)
            raise
    return found, time.perf_counter() - t0


def throughput_figure(streams: int, queries: int, seconds: float, scale: float) -> float:
    """QthH-like: S × queries × 3600 / the run's seconds × SF."""
    return streams * queries * 3600 / seconds * scale if seconds > 0 else 0.0


def as_table(found: Sequence[Sequence[power.QueryTime]], seed: int) -> TableJson:
    """A row per stream and query, in each stream's order."""
    return {
        "columns": ["stream", "query", "seconds", "rows", "timed_out", "seed"],
        "rows": [
            [s, t.number, t.seconds, t.rows, t.timed_out, seed + s]
            for s, times in enumerate(found)
            for t in times
        ],
    }


def per_query(rows: Sequence[Sequence[Any]]) -> list[power.QueryTime]:
    """The table's rows as one time per query: its mean over the streams (timed out when it
    timed out in any), in query order."""
    by: dict[int, list[Sequence[Any]]] = {}
    for row in rows:
        by.setdefault(int(row[1]), []).append(row)
    return [
        power.QueryTime(
            n, sum(float(r[2]) for r in rs) / len(rs), None, any(bool(r[4]) for r in rs)
        )
        for n, rs in sorted(by.items())
    ]
