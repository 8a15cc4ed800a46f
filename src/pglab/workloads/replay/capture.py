"""A window of a server's workload captured (``pglab capture``): from a log the user has
(``from_log``), or live from a running server (``Live``).

Live, pglab sets the logging a replay needs (``logfile.SETTINGS``) with ALTER SYSTEM and a
reload through the existing server's journal (``postgres/existing.alter_system``: the
originals written down first; put back exactly when the window closes, on Ctrl-C and SIGTERM
too, and after a SIGKILL by the next pglab command), notes where the server's log ends, waits
for the window, and reads the log written since: from the file given (a server on this
machine whose stderr goes there, or on its host over SSH: ``RemoteLog``) or, with a logging
collector, through the server itself (``pg_current_logfile()`` and ``pg_read_binary_file``:
superuser or pg_read_server_files).
pglab's own sessions are not captured; it changes no data. With a dump (``--with-dump``) the
window opens at the snapshot the dump is made from (``pg_export_snapshot``).
"""

from __future__ import annotations

import re
import shutil
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg

from pglab import procs
from pglab.campaign import hosts as campaign_hosts
from pglab.campaign.checks import Problems
from pglab.campaign.spec import HostSpec, ServerSpec
from pglab.errors import WorkloadError
from pglab.lab import Lab
from pglab.postgres.existing import ExistingServer
from pglab.postgres.sources import Binaries
from pglab.units import parse_duration
from pglab.workloads.replay import dump, logfile, workload_file
from pglab.workloads.replay.workload_file import Workload

if TYPE_CHECKING:  # asyncssh is imported only where a host is reached
    from pglab.hosts.ssh import Remote

READ_CHUNK = 8 * 2**20  # bytes of the server's log read per call through the server


def window_seconds(duration: str | None, until: str | None) -> float | None:
    """The window's length in seconds (None: until Ctrl-C)."""
    if duration is not None and until is not None:
        raise WorkloadError("give --for or --until, not both")
    if duration is not None:
        seconds = parse_duration(re.sub(r"(\d)m$", r"\1min", duration.strip()))
        if seconds is None:
            raise WorkloadError(
                f"--for {duration!r} is not a length of time", hint="e.g. 90s, 10m, 1h"
            )
        return seconds
    if until is not None:
        try:
            at = datetime.combine(
                datetime.now().date(),
                datetime.strptime(until, "%H:%M:%S").time()
                if until.count(":") == 2
                else datetime.strptime(until, "%H:%M").time(),
            )
        except ValueError as exc:
            raise WorkloadError(
                f"--until {until!r} is not a time of day (HH:MM or HH:MM:SS)"
            ) from exc
        seconds = (at - datetime.now()).total_seconds()
        return seconds if seconds > 0 else seconds + 86400
    return None


def from_log(
    path: Path, dump_path: Path | None = None, binaries: Binaries | None = None
) -> Workload:
    """The workload of a log the user already has (stderr format with ``logfile.PREFIX``, or
    csvlog), with the dump of its data when given (checked to be of a database its sessions
    use)."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise WorkloadError(f"cannot read the log {path}: {exc.strerror}") from exc
    workload = workload_file.of(logfile.read(text), source=str(path))
    if dump_path is None:
        return workload
    assert binaries is not None, "a dump is read by pg_restore"
    dumped = dump.database_of(binaries, dump_path)
    dump.check_matches(dumped, workload.data["databases"], dump_path)
    return Workload(None, {**workload.data, "dump": str(dump_path.absolute())})


class LogSource:
    """Where the server's log is read from: its size now, and its bytes from an offset."""

    def size(self) -> int:
        raise NotImplementedError

    def read_from(self, offset: int, end: int) -> bytes:
        raise NotImplementedError


@dataclass
class LocalLog(LogSource):
    path: Path

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError as exc:
            raise WorkloadError(
                f"cannot read the server's log {self.path}: {exc.strerror}"
            ) from exc

    def read_from(self, offset: int, end: int) -> bytes:
        with open(self.path, "rb") as f:
            f.seek(offset)
            return f.read(max(0, end - offset))


@dataclass
class RemoteLog(LogSource):
    """The server's log file on its host, read over SSH (``hosts/ssh.Remote``: the server
    runs on a ``[hosts.NAME]`` host, its stderr written to ``path`` there)."""

    remote: Remote
    path: str

    def size(self) -> int:
        return self.remote.size(self.path)

    def read_from(self, offset: int, end: int) -> bytes:
        out = bytearray()
        while offset + len(out) < end:
            n = min(READ_CHUNK, end - offset - len(out))
            got = self.remote.read(self.path, offset + len(out), n)
            if not got:
                break
            out += got
        return bytes(out)


@dataclass
class ServerLog(LogSource):
    """The logging collector's current file, read through the server (any host)."""

    server: ExistingServer
    name: str  # as pg_current_logfile() gives it (relative to the data directory)

    def size(self) -> int:
        with self.server.connect(admin=True) as conn:
            row = conn.execute("SELECT size FROM pg_stat_file(%s)", (self.name,)).fetchone()
        return int(row[0]) if row else 0

    def read_from(self, offset: int, end: int) -> bytes:
        out = bytearray()
        with self.server.connect(admin=True) as conn:
            while offset + len(out) < end:
                n = min(READ_CHUNK, end - offset - len(out))
                row = conn.execute(
                    "SELECT pg_read_binary_file(%s, %s, %s)", (self.name, offset + len(out), n)
                ).fetchone()
                if not row or not row[0]:
                    break
                out += bytes(row[0])
        return bytes(out)


def host_of(path: Path, name: str) -> HostSpec:
    """``[hosts.NAME]`` of a TOML file (a campaign file, or one of hosts alone), checked as a
    campaign's hosts are."""
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise WorkloadError(f"cannot read the hosts of {path}: {exc}") from exc
    found_hosts = doc.get("hosts")
    table: dict[str, Any] = found_hosts if isinstance(found_hosts, dict) else {}
    if name not in table:
        named = ", ".join(sorted(table)) or "none"
        raise WorkloadError(
            f"{path} has no [hosts.{name}] (its hosts: {named})",
            hint=f'add [hosts.{name}] with ssh = "user@address", as a campaign file has it',
        )
    p = Problems()
    found = campaign_hosts.hosts({name: table[name]}, p)
    if p.items:
        raise WorkloadError(f"[hosts.{name}] of {path}: " + "; ".join(p.items))
    return found[name]


def log_source(server: ExistingServer, log: Path | LogSource | None) -> LogSource:
    if isinstance(log, LogSource):
        return log
    if log is not None:
        return LocalLog(log)
    with server.connect(admin=True) as conn:
        try:
            row = conn.execute("SELECT pg_current_logfile('stderr')").fetchone()
        except psycopg.errors.InsufficientPrivilege as exc:
            raise WorkloadError(
                f"the role may not ask {server.where} where its log is (pg_current_logfile)",
                hint="capture as a superuser, or give --log PATH (the server's stderr log here)",
            ) from exc
    if not row or not row[0]:
        raise WorkloadError(
            f"{server.where} has no logging collector writing a stderr log: pglab cannot find "
            "where its log goes",
            hint="give --log PATH: the file the server's stderr goes to, on this machine",
        )
    return ServerLog(server, str(row[0]))


class Live:
    """A live capture's window: entered, the server logs what a replay needs; ``close``
    reads the window's log and puts the settings back (``__exit__`` does in any case)."""

    def __init__(
        self,
        spec: ServerSpec,
        lab: Lab,
        log: Path | LogSource | None,
        on_status: Callable[[str], None] = lambda msg: None,
        dump_to: Path | None = None,
        binaries: Binaries | None = None,
    ):
        self.server = ExistingServer(spec, lab)
        self.dump_to = dump_to
        self.binaries = binaries
        self._dumping: dump.Dumping | None = None
        self.roles: list[str] = []
        self.log_path = log
        self.on_status = on_status
        self.source: LogSource | None = None
        self.offset = 0
        self.opened = 0.0
        self._snapshot: psycopg.Connection | None = None

    def __enter__(self) -> Live:
        try:
            self.open()
        except BaseException:
            self.__exit__(None, None, None)  # the settings put back, the snapshot let go
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._dumping is not None:  # not waited for: the capture failed or was stopped
            procs.terminate(self._dumping.proc)
            shutil.rmtree(self._dumping.target, ignore_errors=True)
        self.release_snapshot()
        self.server.close()

    def open(self) -> None:
        s = self.server
        if self.dump_to is not None and self.dump_to.exists():  # before anything changes
            raise WorkloadError(
                f"{self.dump_to} exists: pg_dump -Fd writes a new directory",
                hint="name a directory that does not exist yet",
            )
        s.facts()  # reachable, 15 or later
        names = list(logfile.SETTINGS)
        refused = s.may_alter_system(names)
        if refused:
            raise WorkloadError(
                f"the role may not ALTER SYSTEM {', '.join(refused)} on {s.where}: a capture "
                "sets the logging a replay needs",
                hint="capture as a superuser, or GRANT ALTER SYSTEM ON PARAMETER ... TO the role",
            )
        self.source = log_source(s, self.log_path)
        with s.connect(admin=True) as conn:  # what the dump's owners and grants may name
            self.roles = [
                r[0]
                for r in conn.execute(
                    "SELECT rolname FROM pg_roles WHERE rolname !~ '^pg_'"
                ).fetchall()
            ]
        self.on_status(f"setting the logging a replay needs on {s.where} (put back after)")
        s.alter_system(logfile.SETTINGS)
        self.offset = self.source.size()
        self.opened = time.monotonic()
        if self.dump_to is not None:
            assert self.binaries is not None, "pg_dump's binaries"
            snapshot = self.export_snapshot()
            dbname = str(s.reach.params.get("dbname") or "postgres")
            self.on_status(f"dumping database {dbname} as the window opens into {self.dump_to}")
            self._dumping = dump.Dumping.start(
                self.binaries,
                s.reach.conninfo(dbname),
                dbname,
                s.client_env(),
                snapshot,
                self.dump_to,
            )

    def export_snapshot(self) -> str:
        """A snapshot of the data as the window opens, held until ``release_snapshot`` (a
        dump made from it: ``pg_dump --snapshot``)."""
        conn = self.server.connect(admin=True)
        conn.autocommit = False
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        row = conn.execute("SELECT pg_export_snapshot()").fetchone()
        self._snapshot = conn
        assert row is not None
        return str(row[0])

    def release_snapshot(self) -> None:
        if self._snapshot is not None:
            conn, self._snapshot = self._snapshot, None
            conn.close()

    def close(self) -> Workload:
        """The window closed now: its log read, the settings put back, its workload."""
        assert self.source is not None, "open first"
        end = self.source.size()
        if self._dumping is not None:  # made from the snapshot: held until it is done
            self.on_status("waiting for pg_dump to finish")
            dumped, self._dumping = self._dumping, None
            try:
                dumped_db = dumped.wait()
            except BaseException:
                shutil.rmtree(dumped.target, ignore_errors=True)
                raise
            dump_path: str | None = str(dumped.target.absolute())
        else:
            dumped_db, dump_path = "", None
        self.release_snapshot()
        self.server.close()  # put back before the log is parsed: the server logs as before
        if end < self.offset:
            raise WorkloadError(
                "the server's log was rotated or truncated during the window: nothing kept",
                hint="capture a shorter window, or between rotations (log_rotation_age)",
            )
        text = self.source.read_from(self.offset, end).decode(errors="replace")
        try:
            workload = workload_file.of(
                logfile.read(text), source=self.server.key, dump=dump_path, roles=self.roles
            )
            if dump_path is not None:
                dump.check_matches(dumped_db, workload.data["databases"], Path(dump_path))
        except WorkloadError:
            if dump_path is not None:  # nothing kept of a refused capture
                shutil.rmtree(dump_path, ignore_errors=True)
            raise
        return workload
