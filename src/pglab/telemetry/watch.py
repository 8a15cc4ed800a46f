"""Watching one measured phase: the samplers a run gets, started before pgbench and stopped after.

    with PhaseWatch(cluster, spec, server_version_num) as watch:
        result = pgbench.run_phase(..., on_spawn=watch.set_client)
    result = replace(result, tables=watch.tables)

Checkpoints come from the part of the server log written while the phase ran. With ``on_live``,
a thread hands it, once a second while the phase runs, the waits of the last ``LIVE_WAITS_S``
seconds and the checkpoints logged so far (``{"waits": Table, "checkpoints": Table}``), for a
live view; what it raises is ignored (a view must never cost the run). Every sampler's
own sessions are named ``pglab…`` so that the wait sampler leaves them out.

A server pglab made on another host (``on_host.py``) has its host's OS read over SSH
(``host_os.py``) and its log by SFTP. A server pglab did not start (``existing.py``) is watched
over SQL only: its files, processes and log are not pglab's to read, so there is no OS sampler
and no checkpoint log, and the phase's ``telemetry.notes`` say so (never zeros); its
checkpoints are counted by the statistics sampler (pg_stat_checkpointer, pg_stat_bgwriter) as
on any server.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from pglab.campaign.spec import TelemetrySpec
from pglab.postgres.interface import Server
from pglab.records import TableJson
from pglab.telemetry import checkpoints
from pglab.telemetry.base import Sampler, Table
from pglab.telemetry.buffers import BuffersSampler
from pglab.telemetry.host_os import HostOsSampler
from pglab.telemetry.os_stats import OsSampler
from pglab.telemetry.pg_stats import PgStatsSampler
from pglab.telemetry.runner import NOTES, TelemetryRunner
from pglab.telemetry.waits import WaitsSampler

OWN = "telemetry.own_xacts"
LIVE_WAITS_S = 5  # the seconds of waits a live view is given
# the samplers that hold a session of their own on the server while a measured phase runs, one
# each (the OS sampler reads /proc): with pgbench's clients, what the server must have room for
SESSION_SAMPLERS = (PgStatsSampler, WaitsSampler, BuffersSampler)


def own_sessions(spec: TelemetrySpec, measured: bool) -> int:
    """The connections pglab itself holds to the server while a phase runs: one per sampler
    with a session in a measured phase with telemetry on (unmeasured phases are not watched)."""
    return len(SESSION_SAMPLERS) if spec.enabled and measured else 0


class PhaseWatch:
    def __init__(
        self,
        cluster: Server,
        spec: TelemetrySpec,
        server_version_num: int,
        on_live: Callable[[dict[str, Table]], object] | None = None,
    ):
        self.cluster = cluster
        self.on_live = on_live
        self._live_stop = threading.Event()
        self._live: threading.Thread | None = None
        self.spec = spec
        self.version = server_version_num
        self.tables: dict[str, TableJson] = {}
        self._pgbench: int | None = None
        self._runner: TelemetryRunner | None = None
        self._log_offset = 0

    def set_client(self, proc: subprocess.Popen[Any]) -> None:
        self._pgbench = proc.pid

    def _pgbench_pids(self) -> list[int]:
        return [self._pgbench] if self._pgbench is not None else []

    def _connect(self) -> psycopg.Connection:
        return self.cluster.connect()

    def samplers(self) -> list[Sampler]:
        s = self.spec
        over_sql: list[Sampler] = [
            PgStatsSampler(self._connect, self.version, interval=s.stats_interval),
            WaitsSampler(self._connect, hz=s.waits_hz),
            BuffersSampler(self._connect, self.version, interval=s.buffers_interval),
        ]
        view = self.cluster.os_view()
        if view is None:  # a server pglab does not own: no files or processes to read
            return over_sql
        if view.remote is not None:  # its host's /proc, over SSH
            return [*over_sql, HostOsSampler(view.remote, str(view.datadir), s.stats_interval)]
        datadir = Path(view.datadir)
        paths = [datadir]
        wal = datadir / "pg_wal"
        if wal.is_symlink():
            paths.append(Path(wal.resolve()))
        pids = view.postgres_pids or (lambda: [])
        return [
            *over_sql,
            OsSampler(paths, self._pgbench_pids, pids, interval=s.stats_interval),
        ]

    def __enter__(self) -> PhaseWatch:
        if not self.spec.enabled:
            return self
        self._log_offset = self.cluster.log_size()
        self._samplers = self.samplers()
        self._runner = TelemetryRunner(self._samplers)
        self._runner.start()
        if self.on_live is not None:
            self._live = threading.Thread(target=self._live_loop, name="pglab-live", daemon=True)
            self._live.start()
        return self

    def _live_loop(self) -> None:
        assert self.on_live is not None
        waits = next((s for s in self._samplers if isinstance(s, WaitsSampler)), None)
        # a server pglab did not start has no log of pglab's to read checkpoints from
        has_log = self.cluster.owned
        while not self._live_stop.wait(1.0):
            with contextlib.suppress(Exception):  # the view goes without; the phase goes on
                tables: dict[str, Table] = {}
                if has_log:
                    log = self.cluster.log_since(self._log_offset)
                    tables["checkpoints"] = checkpoints.parse(log)
                if waits is not None:
                    tables["waits"] = waits.recent(time.time() - LIVE_WAITS_S)
                self.on_live(tables)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._runner is None:
            return
        if self._live is not None:
            self._live_stop.set()
            self._live.join(timeout=10)
            self._live = None
        tables = self._runner.stop()
        self._runner = None
        if exc_type is not None:
            return  # the phase failed: no telemetry is kept for it
        ckpt = checkpoints.parse(self.cluster.log_since(self._log_offset))
        if ckpt.rows:
            tables["checkpoints"] = ckpt
        if self.cluster.unwatched:
            notes = tables.setdefault(NOTES, Table(["sampler", "note"]))
            for sampler, note in self.cluster.unwatched:
                notes.add(sampler, note)
        # pglab's own transactions, to take out of pg_stat_database's xact_commit
        own = Table(["sampler", "xacts"])
        for s in self._samplers:
            if hasattr(s, "own_xacts"):
                own.add(s.name, s.own_xacts)
        tables[OWN] = own
        self.tables = {kind: t.to_json() for kind, t in tables.items()}
