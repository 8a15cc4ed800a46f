"""A maintenance operation as a phase (VACUUM, ANALYZE, CREATE INDEX on ``pgbench_accounts``):
prepared (a vacuum's dirtying, an old index dropped: not measured), timed on its own session,
watched from another one (its progress view once a second, its parallel workers, 20 times a
second), put back after (the index dropped, autovacuum on the table as it was).

Its result is a ``PhaseResult`` whose report's ``tps`` is the operation's MB/s: the phase's
headline figure, which the run's statistics take as they take a pgbench phase's TPS. Its
figures are the phase's ``operation`` table, its progress the ``progress.OPERATION`` table.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

from pglab.campaign.spec import PhaseSpec
from pglab.errors import CampaignError
from pglab.maintenance.figures import (
    INDEX,
    OPERATION_KIND,
    PROGRESS_COLUMNS,
    PROGRESS_SQL,
    SIZE_SQL,
    TABLE,
    WORKERS_SQL,
    dirty_statement,
    figures,
    progress_row,
    progress_text,
    session_settings,
    statement,
    vacuum_workers,
)
from pglab.records import PgbenchReport, PhaseResult

POLL_S = 0.05  # how often the watcher looks for parallel workers
PROGRESS_S = 1.0  # a progress row at most this often (and the first one seen)


class _Watcher:
    """Another session beside the operation's: its progress rows and the most parallel
    workers seen at once (``pg_stat_activity.leader_pid``)."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection],
        pid: int,
        operation: str,
        on_progress: Callable[[str], object] | None = None,
    ):
        self.conn = connect()
        self.pid = pid
        self.operation = operation
        self.on_progress = on_progress
        self.sql = PROGRESS_SQL[operation]
        self.rows: list[list[Any]] = []
        self.workers = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pglab-operation", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        last = 0.0
        while not self._stop.is_set():
            try:
                seen = self.conn.execute(WORKERS_SQL, (self.pid,)).fetchone()
                self.workers = max(self.workers, int(seen[0]) if seen else 0)
                now = time.time()
                if now - last >= PROGRESS_S:
                    row = self.conn.execute(self.sql, (self.pid,)).fetchone()
                    if row is not None:
                        self.rows.append(progress_row(now, row))
                        last = now
                        if self.on_progress is not None:
                            self.on_progress(progress_text(self.operation, self.rows[-1]))
            except psycopg.Error:
                return  # the run goes on without the rest of its progress
            self._stop.wait(POLL_S)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.conn.close()


class Operation:
    """One iteration of an operation phase on the server ``connect`` reaches (a session in the
    database of pgbench's tables): prepared when entered (settings, a vacuum's dirtying and
    CHECKPOINT, an old index dropped: before the phase's telemetry starts, so that none of it
    is counted), measured by ``run``, put back on exit."""

    def __init__(self, connect: Callable[[], psycopg.Connection], phase: PhaseSpec):
        assert phase.operation is not None
        self.connect, self.phase, self.op = connect, phase, phase.operation
        self.notices: list[str] = []
        self.plain = False
        self.mwm_kb = 0
        self.nbytes = 0

    def __enter__(self) -> Operation:
        self.conn = self.connect()
        try:
            self._prepare()
        except BaseException as exc:
            self.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def _prepare(self) -> None:
        conn, phase, op = self.conn, self.phase, self.op
        conn.add_notice_handler(lambda d: self.notices.append(d.message_primary or ""))
        # VACUUM VERBOSE's workers, in English (without the privilege: those seen beside it)
        with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
            conn.execute("SET lc_messages = 'C'")
        _check_parallel(conn, phase)
        for name, value in session_settings(
            phase, _int_setting(conn, "maintenance_work_mem")
        ).items():
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        self.mwm_kb = _int_setting(conn, "maintenance_work_mem")
        if op == "create_index":
            conn.execute(f"DROP INDEX IF EXISTS {INDEX}")
        self.plain = _plain_table(conn)
        if op == "vacuum" and self.plain:  # autovacuum must not take the dead tuples first
            conn.execute(f"ALTER TABLE {TABLE} SET (autovacuum_enabled = off)")
        if op == "vacuum" and phase.dirty > 0:
            conn.execute(dirty_statement(phase.dirty))
            try:
                conn.execute("CHECKPOINT")  # the vacuum then writes its own pages only
            except psycopg.errors.InsufficientPrivilege as exc:
                raise CampaignError(
                    f"phase {phase.name}: dirty needs a CHECKPOINT, which this role may not "
                    f"run: {exc}",
                    hint="GRANT pg_checkpoint TO the role (16+; a superuser before), or dirty = 0",
                ) from exc
        self.nbytes = int(conn.execute(SIZE_SQL).fetchone()[0])  # type: ignore[index]

    def __exit__(self, *exc: object) -> None:
        # put back what can be: an error here must not hide the one that ended the phase
        try:
            if not self.conn.closed and not self.conn.broken:
                if self.op == "create_index":
                    self.conn.execute(f"DROP INDEX IF EXISTS {INDEX}")
                if self.op == "vacuum" and self.plain:
                    self.conn.execute(f"ALTER TABLE {TABLE} RESET (autovacuum_enabled)")
        except psycopg.Error:
            if not any(exc):
                raise  # the phase went well: its table is not as it was, say so
        finally:
            self.conn.close()

    def run(
        self, iteration: int, on_progress: Callable[[str], object] | None = None
    ) -> PhaseResult:
        """The measured statement, watched; its figures and progress (``on_progress``: each
        progress row in words, from the watcher's thread)."""
        phase, op = self.phase, self.op
        sql = statement(phase)
        self.notices.clear()
        watcher = _Watcher(self.connect, self.conn.info.backend_pid, op, on_progress)
        watcher.start()
        started = time.time()
        t0 = time.monotonic()
        try:
            self.conn.execute(sql)
        finally:
            elapsed = time.monotonic() - t0
            watcher.stop()
        planned, launched = vacuum_workers(self.notices) if op == "vacuum" else (None, None)
        launched = max(launched or 0, watcher.workers)
        mwm = None if op == "analyze" else self.mwm_kb
        figs = figures(phase, elapsed, self.nbytes, planned, launched, mwm)
        return PhaseResult(
            name=phase.name,
            iteration=iteration,
            measured=phase.measured,
            started_at=started,
            elapsed_s=elapsed,
            argv=(sql,),
            report=PgbenchReport(tps=figs.mb_s, transactions=0, duration_s=elapsed),
            output="\n".join(self.notices),
            tables={
                OPERATION_KIND: figs.to_table(),
                f"progress.{op}": {"columns": PROGRESS_COLUMNS, "rows": watcher.rows},
            },
        )


def run_phase(
    connect: Callable[[], psycopg.Connection], phase: PhaseSpec, iteration: int
) -> PhaseResult:
    """One iteration of an operation phase, prepared, run and put back."""
    with Operation(connect, phase) as op:
        return op.run(iteration)


def _int_setting(conn: psycopg.Connection, name: str) -> int:
    row = conn.execute("SELECT setting::bigint FROM pg_settings WHERE name = %s", (name,))
    return int(row.fetchone()[0])  # type: ignore[index]


def _plain_table(conn: psycopg.Connection) -> bool:
    """Whether pgbench_accounts is a plain table (not partitioned: no reloptions there)."""
    row = conn.execute("SELECT relkind FROM pg_class WHERE oid = %s::regclass", (TABLE,))
    return row.fetchone()[0] == "r"  # type: ignore[index]


def _check_parallel(conn: psycopg.Connection, phase: PhaseSpec) -> None:
    """``parallel`` within what the server can launch (as preflight checked the settings pglab
    gives it; an existing server's are only known here)."""
    if phase.parallel == 0:
        return
    for name in ("max_worker_processes", "max_parallel_workers"):
        limit = _int_setting(conn, name)
        if phase.parallel > limit:
            raise CampaignError(
                f"phase {phase.name}: parallel = {phase.parallel} is more than {name} = "
                f"{limit} allows",
                hint=f"raise {name} in [server.settings], or ask for fewer workers",
            )
