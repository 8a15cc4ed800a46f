"""PostgreSQL's cumulative statistics as per-second deltas, with snapshots around the phase.

Views and their SQL per version (files in ``telemetry/sql``, chosen by ``server_version_num``,
never by trying and catching): ``pg_stat_database`` (the current database) → ``pg.database``;
``pg_stat_bgwriter`` → ``pg.bgwriter``; checkpoint counters → ``pg.checkpointer`` with 17's
names on every version (15 and 16 read them from ``pg_stat_bgwriter``); ``pg_stat_wal`` →
``pg.wal`` (18 moved WAL I/O timing to ``pg_stat_io``); ``pg_stat_io`` (16+) → ``pg.io``, one
row per (backend_type, object, context) that did something in that second.

All views are read by one statement per sample, in autocommit, so each sample sees fresh
statistics and costs exactly one transaction (counted in ``own_xacts``, so that a consumer can
take pglab's own transactions out of ``xact_commit``). Backends flush their statistics about
once a second, so a per-second delta can lag the work by up to a second; the "before" and
"after" snapshots (``pg.snapshots``, taken before pgbench starts and after it exits) bound the
phase exactly: the closing one waits until pgbench's and the other samplers' sessions have ended
(backends flush their statistics as they exit) and flushes its own session's first, so that
after − before is pgbench's work plus exactly ``own_xacts`` transactions of pglab's.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

import psycopg

from pglab.jsonish import JsonObject
from pglab.postgres.versioned_sql import sql_for
from pglab.telemetry.base import SamplerOff, Table

IO_KEYS = ("backend_type", "object", "context")
SETTLE_TIMEOUT_S = 5.0
# pgbench's sessions and pglab's other ones (anybody else's are not waited for)
OTHER_CLIENTS_SQL = (
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() "
    "AND (application_name = 'pgbench' OR application_name LIKE 'pglab%')"
)


def sql(name: str) -> str:
    return resources.files("pglab.telemetry").joinpath(f"sql/{name}.sql").read_text()


# a view's rows as json_agg hands them over (raw JSON: numbers, pg_stat_io's text keys, null),
# one sample of every view by kind, and pg_stat_io's rows after minus before (text keys, counts)
ViewRows = list[JsonObject]
Sample = dict[str, ViewRows]
IoDelta = dict[str, float | str | None]

KINDS = {
    "pg.database": "database",
    "pg.bgwriter": "bgwriter",
    "pg.checkpointer": "checkpointer",
    "pg.wal": "wal",
    "pg.io": "io",
}


def queries(version_num: int) -> dict[str, str]:
    """kind -> its SQL for this server version (``pg.io`` from 16 on: ``pg_stat_io``)."""
    found = {kind: sql_for("pglab.telemetry", name, version_num) for kind, name in KINDS.items()}
    return {kind: text for kind, text in found.items() if text is not None}


def one_statement(parts: dict[str, str]) -> str:
    """Every query as a JSON array in one row: one statement, one transaction."""
    cols = ",\n".join(
        f"(SELECT coalesce(json_agg(q), '[]') FROM ({_strip(text)}) q) AS \"{kind}\""
        for kind, text in parts.items()
    )
    return f"SELECT {cols}"


def _strip(text: str) -> str:
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return "\n".join(lines).strip().rstrip(";")


def delta_row(before: JsonObject, after: JsonObject, keys: list[str]) -> list[Any]:
    return [_sub(after.get(k), before.get(k)) for k in keys]


def _sub(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    return a - b


class PgStatsSampler:
    name = "pg_stats"

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection],
        server_version_num: int,
        interval: float = 1.0,
    ):
        self.interval = interval
        self._connect = connect
        self._conn: psycopg.Connection | None = None
        self.parts = queries(server_version_num)
        self._statement = one_statement(self.parts)
        self.own_xacts = 0
        self.tables: dict[str, Table] = {}
        self.snapshots = Table(["t", "which", "view", "data_json"])
        self._last: Sample = {}

    def _read(self) -> Sample:
        assert self._conn is not None
        try:
            row = self._conn.execute(self._statement).fetchone()
        except psycopg.Error as exc:
            raise SamplerOff(f"statistics views: {exc}") from exc
        assert row is not None  # a SELECT without FROM returns one row
        self.own_xacts += 1
        return {kind: list(value) for kind, value in zip(self.parts, row, strict=True)}

    def _snapshot(self, t: float, which: str) -> Sample:
        data = self._read()
        for kind, rows in data.items():
            self.snapshots.add(t, which, kind, json.dumps(rows))
        return data

    def start(self, t: float) -> None:
        try:
            self._conn = self._connect()
        except Exception as exc:
            raise SamplerOff(f"cannot connect: {exc}") from exc
        self._last = self._snapshot(t, "before")

    def sample(self, t: float) -> None:
        now = self._read()
        self._add_deltas(t, self._last, now)
        self._last = now

    def _add_deltas(self, t: float, before: Sample, after: Sample) -> None:
        for kind, rows in after.items():
            if kind == "pg.io":
                self._add_io(t, before.get(kind, []), rows)
                continue
            if not rows or not before.get(kind):
                continue
            keys = list(rows[0])
            table = self.tables.setdefault(kind, Table(["t", *keys]))
            table.add(t, *delta_row(before[kind][0], rows[0], keys))

    def _add_io(self, t: float, before: ViewRows, after: ViewRows) -> None:
        if not after:
            return
        prev = {tuple(r[k] for k in IO_KEYS): r for r in before}
        counters = [k for k in after[0] if k not in IO_KEYS]
        table = self.tables.setdefault("pg.io", Table(["t", *IO_KEYS, *counters]))
        for r in after:
            key = tuple(r[k] for k in IO_KEYS)
            if key not in prev:
                continue
            d = delta_row(prev[key], r, counters)
            if any(v for v in d):
                table.add(t, *key, *d)

    def _settle(self) -> None:
        """Make the closing snapshot exact: wait (a few seconds at most) until pgbench's and
        the other samplers' sessions have ended (a backend flushes its statistics as it exits),
        then flush this session's own pending statistics."""
        assert self._conn is not None
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            row = self._conn.execute(OTHER_CLIENTS_SQL).fetchone()
            assert row is not None  # count(*) without GROUP BY returns one row
            (others,) = row
            self.own_xacts += 1
            if not others or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        time.sleep(0.05)  # a backend leaves pg_stat_activity just before it flushes
        self._conn.execute("SELECT pg_stat_force_next_flush()")  # done before the reply
        self.own_xacts += 1

    def finish(self, t: float) -> dict[str, Table]:
        try:
            if self._conn is not None:
                with contextlib.suppress(psycopg.Error):
                    self._settle()
                after = self._snapshot(t, "after")
                self.own_xacts -= 1  # a snapshot does not see its own transaction
                self._add_deltas(t, self._last, after)  # the tail after the last sample
        finally:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        out = dict(self.tables)
        if "pg.io" in self.parts and "pg.io" not in out:
            out["pg.io"] = Table(["t", *IO_KEYS])  # 16+: present, nothing happened
        out["pg.snapshots"] = self.snapshots
        return out


def _phase_snapshots(tables: Mapping[str, Table], view: str) -> tuple[ViewRows, ViewRows] | None:
    """A view's rows before and after the phase, from ``pg.snapshots``; None without both."""
    snaps = tables.get("pg.snapshots")
    if snaps is None:
        return None
    by = {(r[1], r[2]): json.loads(r[3]) for r in snaps.rows}
    before, after = by.get(("before", view)), by.get(("after", view))
    if not before or not after:
        return None
    return before, after


def phase_delta(tables: Mapping[str, Table], view: str) -> dict[str, float]:
    """After minus before for a one-row view (its columns are counters and times, never null),
    from ``pg.snapshots`` ({} without both);
    ``pg.io`` has a row per backend type, object and context: :func:`io_phase_delta`."""
    if view == "pg.io":
        raise ValueError("pg.io has many rows: io_phase_delta")
    snaps = _phase_snapshots(tables, view)
    if snaps is None:
        return {}
    before, after = snaps
    return {k: _sub(after[0][k], before[0][k]) for k in after[0]}


def io_phase_delta(tables: Mapping[str, Table]) -> list[IoDelta]:
    """After minus before for ``pg.io``, a row per (backend_type, object, context) present in
    both snapshots ([] without both)."""
    snaps = _phase_snapshots(tables, "pg.io")
    if snaps is None:
        return []
    before, after = snaps
    prev = {tuple(r[k] for k in IO_KEYS): r for r in before}
    out: list[IoDelta] = []
    for r in after:
        p = prev.get(tuple(r[k] for k in IO_KEYS))
        if p:
            out.append(
                {
                    **{k: r[k] for k in IO_KEYS},
                    **{k: _sub(r[k], p[k]) for k in r if k not in IO_KEYS},
                }
            )
    return out


def summarize(tables: Mapping[str, Table], seconds: float) -> dict[str, float]:
    """Phase figures from the snapshots: read hit ratio, WAL MB/s, who wrote buffers, checkpoints,
    commits. Keys are absent when their data is."""
    out: dict[str, float] = {}
    db = phase_delta(tables, "pg.database")
    if db:
        out["xact_commit"] = float(db["xact_commit"])
        reads = db["blks_read"] + db["blks_hit"]
        if reads:
            out["read_hit_ratio"] = db["blks_hit"] / reads
    wal = phase_delta(tables, "pg.wal")
    if wal and seconds > 0:
        out["wal_mb_s"] = float(wal["wal_bytes"]) / 2**20 / seconds
    ckpt = phase_delta(tables, "pg.checkpointer")
    if ckpt:
        out["checkpoints_timed"] = float(ckpt["num_timed"])
        out["checkpoints_requested"] = float(ckpt["num_requested"])
        out["buffers_checkpointer"] = float(ckpt["buffers_written"])
    bgw = phase_delta(tables, "pg.bgwriter")
    if bgw:
        out["buffers_bgwriter"] = float(bgw["buffers_clean"])
        if "buffers_backend" in bgw:  # 15: its own counter
            out["buffers_backends"] = float(bgw["buffers_backend"])
    io = io_phase_delta(tables)
    if io:  # 16+: writes of relation blocks by client backends
        out["buffers_backends"] = float(
            sum(
                float(r["writes"] or 0)
                for r in io
                if r["backend_type"] == "client backend" and r["object"] == "relation"
            )
        )
    return out
