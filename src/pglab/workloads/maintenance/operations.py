"""A maintenance operation as a phase (VACUUM, ANALYZE, CREATE INDEX... on ``pgbench_accounts``,
or a client program: pg_dump, pg_restore, pg_basebackup): prepared (a vacuum's dirtying, an old
index dropped, a restore's database: not measured), timed on its own session (or as a program
through ``procs``), watched from another one (its progress view once a second with rate and
ETA, its parallel workers 20 times a second), put back after (the index dropped, autovacuum on
the table as it was, the restored database and a base backup removed).

Its result is a ``PhaseResult`` whose report's ``tps`` is the operation's MB/s, its ``figure``
"MB/s": the phase's headline, stored as MB/s (the run's ``mb_s``), never as a TPS. Its
figures are the phase's ``operation`` table, its progress the ``progress.OPERATION`` table.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import psutil
import psycopg

from pglab import procs
from pglab.campaign.spec import PhaseSpec
from pglab.errors import CampaignError, CommandError
from pglab.records import PgbenchReport, PhaseResult
from pglab.workloads.maintenance import clients
from pglab.workloads.maintenance.figures import (
    INDEX,
    OPERATION_KIND,
    PROGRESS_COLUMNS,
    PROGRESS_SQL,
    SIZE_SQL,
    TABLE,
    TUPLE_OPERATIONS,
    TUPLES_SQL,
    WAL_BYTES_SQL,
    WAL_LSN_SQL,
    WORKERS_SQL,
    Prior,
    dirty_statement,
    figures,
    io_read_sql,
    progress_row,
    progress_text,
    session_settings,
    statement,
    vacuum_workers,
)
from pglab.workloads.maintenance.work import operation_work

POLL_S = 0.05  # how often the watcher looks for parallel workers
PROGRESS_S = 1.0  # a progress row at most this often (and the first one seen)
APPLICATION = "maintenance"  # the operation's session's application_name


Probe = Callable[[psycopg.Connection], "tuple[Any, ...] | None"]


class _Watcher:
    """Another session beside the operation's: its progress rows (``probe``: the progress
    view's (phase, done, total, unit) or None) and the most parallel workers (``count``) seen
    at once."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection],
        operation: str,
        probe: Probe,
        pids: Callable[[psycopg.Connection], list[int]],
        on_progress: Callable[[str], object] | None = None,
        block_size: int = 8192,
        prior: Prior | None = None,
    ):
        self.conn = connect()
        self.prior = prior
        self.operation = operation
        self.probe, self.pids = probe, pids
        self.on_progress = on_progress
        self.block_size = block_size
        self.rows: list[list[Any]] = []
        self.workers = 0
        self.cpu_of: Callable[[int], float | None] | None = None  # a local server's processes
        self.worker_cpu: dict[int, float] = {}  # pid -> the most CPU seconds seen
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pglab-operation", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        last = 0.0
        while not self._stop.is_set():
            try:
                pids = self.pids(self.conn)
                self.workers = max(self.workers, len(pids))
                if self.cpu_of is not None:
                    self._worker_cpu(self.cpu_of, pids)
                now = time.time()
                if now - last >= PROGRESS_S:
                    row = self.probe(self.conn)
                    if row is not None:
                        self.rows.append(progress_row(now, row, self.rows, self.prior))
                        last = now
                        if self.on_progress is not None:
                            self.on_progress(
                                progress_text(self.operation, self.rows[-1], self.block_size)
                            )
            except psycopg.Error:
                return  # the run goes on without the rest of its progress
            self._stop.wait(POLL_S)

    def _worker_cpu(self, cpu_of: Callable[[int], float | None], pids: list[int]) -> None:
        """Each worker's CPU seconds, the most seen: the last look is within POLL_S of its
        end (a worker's time after it is not counted)."""
        for pid in pids:
            used = cpu_of(pid)
            if used is not None:
                self.worker_cpu[pid] = max(self.worker_cpu.get(pid, 0.0), used)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.conn.close()


class Operation:
    """One iteration of an operation phase on the server ``connect`` reaches (a session in the
    database of pgbench's tables): prepared when entered (settings, a vacuum's dirtying and
    CHECKPOINT, an old index dropped, a restore's database made: before the phase's telemetry
    starts, so that none of it is counted), measured by ``run``, put back on exit. ``client``:
    how the client programs (dump, restore, basebackup) run."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection],
        phase: PhaseSpec,
        client: clients.Client | None = None,
        prior: Prior | None = None,
        local: bool = False,
    ):
        self.connect, self.phase, self.op = connect, phase, operation_work(phase).operation
        self.client = client
        self.prior = prior  # the same operation's progress in an earlier run: its ETA
        self.local = local  # the server's processes are this machine's: their CPU is read
        self.notices: list[str] = []
        self.plain = False
        self.mwm_kb = 0
        self.nbytes = 0
        self.tuples: int | None = None
        self.block_size = 8192
        self.into: Path | None = None  # a client program's directory

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
        # the workload's session, not one of pglab's own: its waits are sampled, and the
        # telemetry's closing snapshot does not wait for it to end (it flushes its statistics)
        conn.execute(f"SET application_name = '{APPLICATION}'")
        self.block_size = _int_setting(conn, "block_size")
        if op in clients.CLIENT_OPERATIONS:
            self._prepare_client()
            return
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
        if op == "vacuum" and operation_work(phase).dirty > 0:
            conn.execute(dirty_statement(operation_work(phase).dirty))
            try:
                conn.execute("CHECKPOINT")  # the vacuum then writes its own pages only
            except psycopg.errors.InsufficientPrivilege as exc:
                raise CampaignError(
                    f"phase {phase.name}: dirty needs a CHECKPOINT, which this role may not "
                    f"run: {exc}",
                    hint="GRANT pg_checkpoint TO the role (16+; a superuser before), or dirty = 0",
                ) from exc
        self.nbytes = int(conn.execute(SIZE_SQL).fetchone()[0])  # type: ignore[index]
        if op in TUPLE_OPERATIONS:
            self.tuples = int(conn.execute(TUPLES_SQL).fetchone()[0])  # type: ignore[index]

    def _prepare_client(self) -> None:
        conn, phase, op, client = self.conn, self.phase, self.op, self.client
        assert client is not None
        self.nbytes = int(conn.execute(clients.DATABASE_SIZE_SQL).fetchone()[0])  # type: ignore[index]
        dump = client.workdir / clients.DUMP_DIR
        if op == "dump":
            shutil.rmtree(dump, ignore_errors=True)  # a dump before it in the run
            client.workdir.mkdir(parents=True, exist_ok=True)
            self.into = dump
        elif op == "restore":
            if not (dump / "toc.dat").is_file():
                raise CampaignError(
                    f"phase {phase.name}: restore found no dump of this run in {dump}",
                    hint='give the run a phase with operation = "dump" before the restore',
                )
            self.into = dump
            conn.execute(f"DROP DATABASE IF EXISTS {clients.RESTORE_DATABASE}")
            conn.execute(f"CREATE DATABASE {clients.RESTORE_DATABASE} TEMPLATE template0")
        else:
            if operation_work(phase).target is None:
                client.workdir.mkdir(parents=True, exist_ok=True)
            self.into = clients.backup_dir(phase, client.workdir)
            if not self.into.parent.is_dir():
                raise CampaignError(
                    f"phase {phase.name}: basebackup target {self.into.parent} is not a directory",
                    hint="make it, or give target = the absolute path of one",
                )
            shutil.rmtree(self.into, ignore_errors=True)

    def __exit__(self, *exc: object) -> None:
        # put back what can be: an error here must not hide the one that ended the phase
        try:
            if self.op == "basebackup" and self.into is not None:
                shutil.rmtree(self.into, ignore_errors=True)
            if not self.conn.closed and not self.conn.broken:
                if self.op == "create_index":
                    self.conn.execute(f"DROP INDEX IF EXISTS {INDEX}")
                if self.op == "vacuum" and self.plain:
                    self.conn.execute(f"ALTER TABLE {TABLE} RESET (autovacuum_enabled)")
                if self.op == "restore" and self.into is not None:
                    self.conn.execute(
                        f"DROP DATABASE IF EXISTS {clients.RESTORE_DATABASE} WITH (FORCE)"
                    )
        except psycopg.Error:
            if not any(exc):
                raise  # the phase went well: its table is not as it was, say so
        finally:
            self.conn.close()

    def run(
        self, iteration: int, on_progress: Callable[[str], object] | None = None
    ) -> PhaseResult:
        """The measured statement or program, watched; its figures and progress
        (``on_progress``: each progress row in words, from the watcher's thread)."""
        phase, op = self.phase, self.op
        self.notices.clear()
        lsn = self.conn.execute(WAL_LSN_SQL).fetchone()[0]  # type: ignore[index]
        io_sql = (
            None if op in clients.CLIENT_OPERATIONS else io_read_sql(self.conn.info.server_version)
        )
        io0 = self._io_read(io_sql)
        probe, count = self._watching()
        watcher = _Watcher(self.connect, op, probe, count, on_progress, self.block_size, self.prior)
        if self.client is not None and op in clients.CLIENT_OPERATIONS:
            assert self.into is not None
            argv = clients.argv(phase, self.client, self.conn.info.dbname, self.into)
            shown = tuple(argv)
        else:
            argv, shown = [], (statement(phase),)
        leader = self.conn.info.backend_pid if self.local and not argv else None
        if leader is not None:
            watcher.cpu_of = cpu_seconds
        cpu0 = cpu_seconds(leader) if leader is not None else None
        watcher.start()
        started = time.time()
        t0 = time.monotonic()
        try:
            if argv:
                output = self._run_program(argv)
            else:
                self.conn.execute(shown[0])
                output = "\n".join(self.notices)
        finally:
            elapsed = time.monotonic() - t0
            watcher.stop()
        cpu1 = cpu_seconds(leader) if leader is not None else None
        cpu = (
            (cpu1 - cpu0, sum(watcher.worker_cpu.values()))
            if cpu0 is not None and cpu1 is not None
            else (None, None)
        )
        self.conn.execute("SELECT pg_stat_force_next_flush()")  # as its transaction ends
        wal = int(self.conn.execute(WAL_BYTES_SQL, (lsn,)).fetchone()[0])  # type: ignore[index]
        io1 = self._io_read(io_sql)  # the workers flushed their statistics as they exited
        io_read = io1 - io0 if io0 is not None and io1 is not None else None
        if op == "basebackup" and self.into is not None:
            self.nbytes = clients.tree_bytes(self.into)
        planned, launched = vacuum_workers(self.notices) if op == "vacuum" else (None, None)
        launched = max(launched or 0, watcher.workers)
        if op in ("dump", "restore"):  # sessions seen at once, but the leader's: -j N gives N
            launched = max(watcher.workers - 1, 0)
        elif op == "basebackup":
            launched = None
        mwm = self.mwm_kb if op in ("vacuum", "create_index", "reindex") else None
        figs = figures(
            phase, elapsed, self.nbytes, planned, launched, mwm, wal, self.tuples, cpu, io_read
        )
        return PhaseResult(
            name=phase.name,
            iteration=iteration,
            measured=phase.measured,
            started_at=started,
            elapsed_s=elapsed,
            argv=shown,
            report=PgbenchReport(tps=figs.mb_s, transactions=0, duration_s=elapsed, figure="MB/s"),
            output=output,
            tables={
                OPERATION_KIND: figs.to_table(),
                f"progress.{op}": {"columns": PROGRESS_COLUMNS, "rows": watcher.rows},
            },
        )

    def _io_read(self, sql: str | None) -> int | None:
        """pg_stat_io's relation reads so far, this session's own flushed first (None: no
        statement, or a role that may not flush them)."""
        if sql is None:
            return None
        try:
            self.conn.execute("SELECT pg_stat_force_next_flush()")  # as this statement ends
        except psycopg.errors.InsufficientPrivilege:
            return None
        return int(self.conn.execute(sql).fetchone()[0])  # type: ignore[index]

    def _watching(self) -> tuple[Probe, Callable[[psycopg.Connection], list[int]]]:
        """How the watcher reads this operation's progress and counts its workers."""
        op = self.op
        if op in PROGRESS_SQL:
            mine = {"pid": self.conn.info.backend_pid, "tuples": self.tuples or 0}
            return (
                lambda c: c.execute(PROGRESS_SQL[op], mine).fetchone(),
                lambda c: _pids(c, WORKERS_SQL, mine),
            )
        if op == "basebackup":
            return (lambda c: c.execute(clients.BASEBACKUP_SQL).fetchone(), lambda c: [])
        db = self.conn.info.dbname if op == "dump" else clients.RESTORE_DATABASE
        assert self.into is not None
        total = clients.dump_data_bytes(self.into) if op == "restore" else 0
        copies = clients.CopyProgress("COPY TO" if op == "dump" else "COPY FROM", total)
        params: dict[str, str] = {"db": db, "command": copies.phase_name, "app": f"pg_{op}"}
        return (
            lambda c: copies.row(c.execute(clients.COPY_SQL, params).fetchall()),
            lambda c: _pids(c, clients.SESSIONS_SQL, params),
        )

    def _run_program(self, argv: list[str]) -> str:
        """Run a client program to its end (Ctrl-C stops it); its output, or a clear error:
        a base backup's target out of room says so."""
        assert self.client is not None
        try:
            done = procs.run(argv, timeout=clients.TIMEOUT_S, env=self.client.env, what=argv[0])
        except CommandError as exc:
            if self.op == "basebackup" and "No space left on device" in exc.message:
                assert self.into is not None
                raise CampaignError(
                    f"phase {self.phase.name}: the basebackup target {self.into.parent} ran "
                    "out of room (No space left on device)",
                    hint="give target = a directory with room for the whole cluster (the "
                    f"database alone is {self.nbytes / 1e6:,.0f} MB here, plus WAL)",
                ) from exc
            raise
        return str(done.stdout + done.stderr).strip()


def _pids(conn: psycopg.Connection, sql: str, params: Mapping[str, str | int]) -> list[int]:
    """The pids the query finds (its named ``params``: the session's pid, a client program's
    database, command and application name)."""
    return [int(row[0]) for row in conn.execute(sql, params).fetchall()]


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process of this machine (None once it is gone)."""
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return float(times.user + times.system)


def _int_setting(conn: psycopg.Connection, name: str) -> int:
    row = conn.execute("SELECT setting::bigint FROM pg_settings WHERE name = %s", (name,))
    return int(row.fetchone()[0])  # type: ignore[index]


def _plain_table(conn: psycopg.Connection) -> bool:
    """Whether pgbench_accounts is a plain table (not partitioned: no reloptions there)."""
    row = conn.execute("SELECT relkind FROM pg_class WHERE oid = %s::regclass", (TABLE,))
    found = row.fetchone()
    return found is not None and found[0] == "r"


def _check_parallel(conn: psycopg.Connection, phase: PhaseSpec) -> None:
    """``parallel`` within what the server can launch (as preflight checked the settings pglab
    gives it; an existing server's are only known here)."""
    asked = operation_work(phase).parallel
    if asked == 0:
        return
    for name in ("max_worker_processes", "max_parallel_workers"):
        limit = _int_setting(conn, name)
        if asked > limit:
            raise CampaignError(
                f"phase {phase.name}: parallel = {asked} is more than {name} = {limit} allows",
                hint=f"raise {name} in [server.settings], or ask for fewer workers",
            )
