"""Shared buffers: what the buffer cache holds, at a slower rate, and who fills it at the end.

Needs the ``pg_buffercache`` extension (contrib, in the embedded PostgreSQL and Debian's
packages); it is created in the database under test when the phase starts (a working copy, so
the dataset template is untouched). 16+ reads ``pg_buffercache_summary()``, 15 computes the same
figures from the ``pg_buffercache`` view; 16+ also keeps ``pg_buffercache_usage_counts()``
(``pg.usage_counts``). At the end of the phase: the top relations of the
current database in shared buffers (``pg.top_relations``).
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from pglab.postgres.versioned_sql import sql_for
from pglab.telemetry.base import SamplerOff, Table
from pglab.telemetry.pg_stats import sql

SUMMARY_COLUMNS = [
    "buffers_used",
    "buffers_unused",
    "buffers_dirty",
    "buffers_pinned",
    "usagecount_avg",
]


class BuffersSampler:
    name = "buffers"

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection],
        server_version_num: int,
        interval: float = 5.0,
    ):
        self.interval = interval
        self._connect = connect
        self._conn: psycopg.Connection | None = None
        summary_sql = sql_for("pglab.telemetry", "buffercache", server_version_num)
        assert summary_sql is not None, "buffercache_15.sql serves every supported version"
        self._summary_sql = summary_sql
        self.summary = Table(["t", *SUMMARY_COLUMNS])
        # buffers per usage count (how hot the cache is), one row per (t, usage_count); None
        # before 16, which lacks pg_buffercache_usage_counts()
        self._usage_sql = sql_for("pglab.telemetry", "buffercache_usage", server_version_num)
        self.usage_counts = Table(["t", "usage_count", "buffers", "dirty", "pinned"])
        self.own_xacts = 0

    def start(self, t: float) -> None:
        try:
            self._conn = self._connect()
            self._conn.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
        except psycopg.Error as exc:
            self._close()
            raise SamplerOff(f"pg_buffercache is not available: {exc}".strip()) from exc
        self.own_xacts += 2  # the session's start (a transaction too) and CREATE EXTENSION
        self.sample(t)

    def sample(self, t: float) -> None:
        assert self._conn is not None
        try:
            row = self._conn.execute(self._summary_sql).fetchone()
        except psycopg.Error as exc:
            raise SamplerOff(f"pg_buffercache: {exc}") from exc
        assert row is not None  # aggregates without GROUP BY, or a summary function: one row
        self.own_xacts += 1
        self.summary.add(t, *(float(v) if v is not None else None for v in row))
        if self._usage_sql is not None:
            try:
                rows = self._conn.execute(self._usage_sql).fetchall()
            except psycopg.Error as exc:
                raise SamplerOff(f"pg_buffercache_usage_counts: {exc}") from exc
            self.own_xacts += 1
            for usage_count, buffers, dirty, pinned in rows:
                self.usage_counts.add(t, usage_count, buffers, dirty, pinned)

    def finish(self, t: float) -> dict[str, Table]:
        out: dict[str, Table] = {}
        try:
            if self._conn is not None:
                self.sample(t)
                top = Table(["t", "relation", "buffers", "dirty", "pct"])
                for rel, buffers, dirty, pct in self._conn.execute(sql("top_relations")):
                    top.add(t, rel, buffers, dirty, pct)
                self.own_xacts += 1
                out["pg.top_relations"] = top
        finally:
            self._close()
        if self.summary.rows:
            out["pg.buffercache"] = self.summary
        if self.usage_counts.rows:
            out["pg.usage_counts"] = self.usage_counts
        return out

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
