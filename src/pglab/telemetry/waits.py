"""Wait events: what the server's processes are doing, sampled many times a second.

Each sample reads ``pg_stat_activity`` once and counts the processes by (wait_event_type,
wait_event); a process that is active and waits on nothing is counted as ``CPU / running``. Left
out: idle client sessions (``ClientRead`` between pgbench's transactions is the load generator's
time, not the server's), background processes idling in their main loop (type ``Activity``),
and pglab's own sessions (``application_name`` starting with ``pglab``). Samples are kept as
counts per (second, type, event) with the number of samples taken in that second, so
``count / samples`` is the average number of processes in that wait (average active sessions)
and its share of all counted waits is the "% of samples" of the seed-004 lock picture.

Where the server computes query ids (``compute_query_id = on``, or ``auto`` with
pg_stat_statements loaded), each wait is also counted by the statement its process ran
(``pg_stat_activity.query_id``), over the whole phase: the table ``waits.statements``, a row per
(wait, query id) with its count and the text of one of its statements (``STATEMENT_CHARS`` at
most), so that a wait can be said of a statement class, as seed 004 drew its lock waits per
operation. Without query ids the table is absent.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable

import psycopg

from pglab.telemetry.base import SamplerOff, Table

STATEMENT_CHARS = 200  # of a statement's text kept in waits.statements
# query_id: PostgreSQL 14 on (pglab runs 15 to 18); NULL where the server computes none
SQL = f"""
SELECT coalesce(wait_event_type, 'CPU'), coalesce(wait_event, 'running'), query_id,
       min(left(query, {STATEMENT_CHARS})), count(*)
FROM pg_stat_activity
WHERE pid <> pg_backend_pid()
  AND coalesce(application_name, '') NOT LIKE 'pglab%'
  AND coalesce(wait_event_type, '') <> 'Activity'
  AND NOT (backend_type = 'client backend' AND state IS DISTINCT FROM 'active')
GROUP BY 1, 2, 3
"""

COLUMNS = ["t", "samples", "wait_event_type", "wait_event", "count"]
STATEMENTS = "waits.statements"  # a row per (wait, query id) over the phase
STATEMENT_COLUMNS = ["wait_event_type", "wait_event", "query_id", "count", "query"]


class WaitsSampler:
    """``pg_stat_activity`` at ``hz`` samples a second (10 by default)."""

    name = "waits"

    def __init__(self, connect: Callable[[], psycopg.Connection], hz: float = 10.0):
        if hz <= 0:
            raise ValueError("hz must be > 0")
        self.interval = 1.0 / hz
        self._connect = connect
        self._conn: psycopg.Connection | None = None
        self._counts: Counter[tuple[int, str, str]] = Counter()
        self._samples: Counter[int] = Counter()
        self._by_query: Counter[tuple[str, str, int]] = Counter()  # over the phase
        self._texts: dict[int, str] = {}  # a statement of each query id
        self._lock = threading.Lock()  # recent() reads the counts while sample() adds to them
        self.own_xacts = 0

    def start(self, t: float) -> None:
        try:
            self._conn = self._connect()
        except psycopg.Error as exc:
            raise SamplerOff(f"cannot connect: {exc}") from exc
        self.own_xacts += 1  # a session's start is a transaction too

    def sample(self, t: float) -> None:
        assert self._conn is not None
        try:
            rows = self._conn.execute(SQL).fetchall()
        except psycopg.Error as exc:
            raise SamplerOff(f"pg_stat_activity: {exc}") from exc
        self.own_xacts += 1
        second = math.floor(t)
        with self._lock:
            self._samples[second] += 1
            for wtype, event, query_id, text, n in rows:
                self._counts[(second, wtype, event)] += n
                if query_id is not None:
                    self._by_query[(wtype, event, query_id)] += n
                    self._texts.setdefault(query_id, text or "")

    def recent(self, since: float) -> Table:
        """The rows of the seconds from ``since`` on, as ``finish`` gives them (for a live view,
        from another thread while the sampling goes on)."""
        table = Table(list(COLUMNS))
        with self._lock:
            for (second, wtype, event), n in sorted(self._counts.items()):
                if second >= since:
                    table.add(float(second), self._samples[second], wtype, event, n)
        return table

    def finish(self, t: float) -> dict[str, Table]:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        table = self.recent(-math.inf)
        out = {"waits": table} if self._samples else {}
        if self._by_query:
            statements = out[STATEMENTS] = Table(list(STATEMENT_COLUMNS))
            for (wtype, event, query_id), n in self._by_query.most_common():
                statements.add(wtype, event, query_id, n, self._texts[query_id])
        return out


def top(table: Table | None, n: int = 5) -> list[tuple[str, float, float]]:
    """The ``n`` most frequent waits over the table: (``type:event``, % of counted waits,
    average processes in it). [] without a table."""
    if table is None or not table.rows:
        return []
    idx = {c: i for i, c in enumerate(table.columns)}
    samples = {r[idx["t"]]: r[idx["samples"]] for r in table.rows}
    total_samples = sum(samples.values())
    counts: Counter[str] = Counter()
    for r in table.rows:
        counts[f"{r[idx['wait_event_type']]}:{r[idx['wait_event']]}"] += r[idx["count"]]
    everything = sum(counts.values())
    return [(name, 100.0 * c / everything, c / total_samples) for name, c in counts.most_common(n)]
