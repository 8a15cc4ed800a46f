"""The power run: the chosen queries once each, in order, on one session, each timed; a query
stopped by ``statement_timeout`` is recorded as a timeout (its time the limit), not a failure
of the run. Its headline is the geometric mean of the query times; the QphH-like power figure
is TPC-H's Power@Size without the refresh functions: 3600 × SF / geometric mean.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import psycopg

from pglab.records import TableJson
from pglab.workloads.tpch.work.queries import query

TABLE = "tpch.queries"  # a phase's table: a row per query


@dataclass(frozen=True, slots=True)
class QueryTime:
    number: int
    seconds: float
    rows: int | None  # None when it timed out
    timed_out: bool = False


def power_run(
    conn: psycopg.Connection,
    queries: Sequence[int],
    seed: int,
    scale: float,
    timeout_s: float | None = None,
    on_status: Callable[[str], None] = lambda msg: None,
    stopped: Callable[[], bool] = lambda: False,
) -> list[QueryTime]:
    """Each query once, in the order given, on ``conn`` (autocommit); a timeout is recorded.
    ``stopped``: the run was ended from outside (its query cancelled): no timeout, no more."""
    limit_ms = max(1, round(timeout_s * 1000)) if timeout_s else 0
    conn.execute(f"SET statement_timeout = {limit_ms}".encode())
    out: list[QueryTime] = []
    for i, number in enumerate(queries, 1):
        if stopped():
            break
        sql = query(number, seed, scale).encode()
        t0 = time.perf_counter()
        try:
            rows = len(conn.execute(sql).fetchall())
            out.append(QueryTime(number, time.perf_counter() - t0, rows))
        except psycopg.errors.QueryCanceled:
            if stopped():
                break
            out.append(QueryTime(number, float(timeout_s or 0.0), None, timed_out=True))
        except BaseException:  # Ctrl-C, or the run ended: the query ends with it
            cancelled(conn)
            raise
        said = "timed out" if out[-1].timed_out else f"{out[-1].seconds:.2f} s"
        on_status(f"tpch power run: Q{number} {said} ({i} of {len(queries)})")
    conn.execute(b"RESET statement_timeout")
    return out


def cancelled(conn: psycopg.Connection) -> None:
    """Ask the server to end ``conn``'s query (an existing server would run it to its end
    after the client left)."""
    with contextlib.suppress(psycopg.Error, OSError):  # gone: so is its query
        conn.cancel_safe(timeout=5.0)


def geomean(times: Sequence[QueryTime]) -> float:
    """The geometric mean of the query times (a timed-out one at its limit: a lower bound)."""
    secs = [max(t.seconds, 1e-6) for t in times]
    return math.exp(sum(math.log(s) for s in secs) / len(secs))


def power_figure(times: Sequence[QueryTime], scale: float) -> float:
    """QphH-like power: 3600 × SF / the geometric mean of the query times (TPC-H's
    Power@Size without its two refresh functions)."""
    return 3600 * scale / geomean(times)


def figures(times: Sequence[QueryTime], scale: float) -> dict[str, float]:
    """A run's figures: each query's seconds (``q01_s``...), the geometric mean, the power
    figure and the count of queries that timed out."""
    out = {f"q{t.number:02d}_s": t.seconds for t in times}
    out["geomean_s"] = geomean(times)
    out["power"] = power_figure(times, scale)
    out["timeouts"] = float(sum(t.timed_out for t in times))
    return out


def as_table(times: Sequence[QueryTime]) -> TableJson:
    """A row per query, as a phase's table."""
    return {
        "columns": ["query", "seconds", "rows", "timed_out"],
        "rows": [[t.number, t.seconds, t.rows, t.timed_out] for t in times],
    }
