"""A PostgreSQL cluster that pglab owns: initdb, start, stop, settings, connections, its log.

The postmaster is started directly (not through pg_ctl) as a child that pglab owns, listening only
on a private socket directory (mode 0700) and, never on TCP unless asked. The lab's own settings
(port, socket directory, listen_addresses, log_checkpoints and the log line format) go on the
command line; the user's
settings go in ``pglab.conf``, included at the end of ``postgresql.conf``, so that a change that
does not need a restart is applied by a reload. Stop modes map to signals: smart → TERM,
fast → INT, immediate → QUIT (then KILL after a grace period).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import psutil
import psycopg

from pglab import procs
from pglab.errors import LabError, ServerError
from pglab.fingerprints import Fingerprint
from pglab.hosts import proc as proc_files
from pglab.lab import Lab
from pglab.postgres import code_pages, fingerprint, settings
from pglab.postgres.interface import OsView
from pglab.postgres.sources import Binaries
from pglab.records import CRASH_ECHOES

STOP_SIGNALS = {"smart": signal.SIGTERM, "fast": signal.SIGINT, "immediate": signal.SIGQUIT}
LAB_MANAGED = frozenset(
    {
        "port",
        "unix_socket_directories",
        "listen_addresses",
        "data_directory",
        "hba_file",
        "ident_file",
        "config_file",
        "external_pid_file",
        "logging_collector",
        # the server log is read back for checkpoint events: its format is pglab's
        "log_checkpoints",
        "log_line_prefix",
        "log_timezone",
    }
)
LOG_LINE_PREFIX = "%m [%p] "  # "2026-11-22 15:37:30.123 UTC [4242] LOG:  ..."
OWNER_FILE = "pglab.owner"
SOCKET_PATH_MAX = 107
CONF_FILE = "pglab.conf"
SUPERUSER = "postgres"


def free_port() -> int:
    """A TCP port number nobody listens on now (the socket file name embeds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# only local socket connections, and only with trust on the private (0700) socket directory;
# replication too, for a basebackup operation (written at every start: datasets made before
# it have the first line only)
HBA = "local all all trust\nlocal replication all trust\n"


def initdb(binaries: Binaries, lab: Lab, datadir: Path, timeout: float = 300) -> None:
    """Create a cluster: superuser ``postgres``, trust on the private socket only, C locale."""
    lab.make_private_dir(datadir)
    procs.run(
        [
            binaries.exe("initdb"),
            "-D",
            str(datadir),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-locale",
            "--no-sync",
        ],
        timeout=timeout,
        run_as=lab.run_as,
        what="initdb",
    )
    with open(datadir / "postgresql.conf", "a") as conf:
        conf.write(f"\n# settings of the current pglab run\ninclude_if_exists = '{CONF_FILE}'\n")
    (datadir / CONF_FILE).write_text("")
    lab.give(datadir / CONF_FILE)
    (datadir / "pg_hba.conf").write_text(HBA)


class Cluster:
    """A data directory and, while started, the postmaster running on it."""

    owned = True  # pglab started it: its files, processes and log are pglab's to read
    local_processes = True
    unwatched: tuple[tuple[str, str], ...] = ()  # samplers it cannot have (telemetry notes)

    def __init__(self, binaries: Binaries, lab: Lab, datadir: Path, name: str):
        self.binaries = binaries
        self.lab = lab
        self.datadir = datadir
        self.name = name
        # a short name: a socket path is limited to 107 bytes, cluster names can be long
        self.socket_dir = lab.home / "sock" / hashlib.sha256(name.encode()).hexdigest()[:12]
        self.log_path = lab.home / "clusters" / f"{name}.log"
        self.port = 0
        self.proc: subprocess.Popen[Any] | None = None
        self.applied: dict[str, str] = {}
        # called with the settings once they are written, before a postmaster starts ([os]
        # huge_pages: the reservation sized by the server itself)
        self.before_start: Callable[[Mapping[str, str]], None] | None = None
        self.hard_limits: dict[str, int] = {}  # [os] limits: soft and hard, set as it starts

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, user_settings: Mapping[str, str] | None = None, timeout: float = 120) -> None:
        if self.proc is not None and self.proc.poll() is None:
            raise ServerError(f"cluster {self.name} is already running")
        if self.proc is not None:
            self.stop()  # it died since it was started: reap it and whatever it left
        self._write_conf(user_settings or {})
        (self.datadir / "pg_hba.conf").write_text(HBA)
        if self.before_start is not None:
            self.before_start(user_settings or {})
        if len(str(self.socket_dir)) + len("/.s.PGSQL.65535") > SOCKET_PATH_MAX:
            raise ServerError(
                f"the socket path under {self.lab.home} would be too long for PostgreSQL "
                f"({SOCKET_PATH_MAX} bytes at most)",
                hint="use a shorter lab directory (PGLAB_HOME or --lab-dir)",
            )
        self.lab.make_private_dir(self.socket_dir)
        self.port = free_port()
        write_owner(self.datadir)
        log = open(self.log_path, "a")  # noqa: SIM115 - the postmaster keeps writing to it
        argv = [
            self.binaries.exe("postgres"),
            "-D",
            str(self.datadir),
            "-c",
            f"port={self.port}",
            "-c",
            f"unix_socket_directories={self.socket_dir}",
            "-c",
            "listen_addresses=",
            "-c",
            "log_checkpoints=on",
            "-c",
            f"log_line_prefix={LOG_LINE_PREFIX}",
            "-c",
            "log_timezone=UTC",
            "-c",
            "logging_collector=off",
        ]
        # its code read afresh: where it lands in memory is drawn again at every start
        code_pages.read_afresh(self.binaries.bindir)
        try:
            # the same environment, and a binary path of the same length, for every server:
            # what would move its stack and code from one build to another is fixed
            self.proc = procs.spawn(
                argv,
                run_as=self.lab.run_as,
                stdout=log,
                stderr=log,
                limits=self.hard_limits,
                environ=procs.server_env(),
            )
        finally:
            log.close()
        self.applied = dict(user_settings or {})
        if not procs.wait_until(self._ready, timeout, interval=0.05) or not self.running:
            tail = self.log_tail()
            self._reap()
            if self.proc is not None and self.proc.returncode is not None:
                raise ServerError(
                    f"PostgreSQL {self.binaries.version} did not start "
                    f"(exit {self.proc.returncode})",
                    hint=start_hint(tail, _meminfo()),
                    log_tail=tail,
                )
            raise ServerError(
                f"PostgreSQL did not become ready within {timeout:.0f} s", log_tail=tail
            )

    def huge_pages_needed(self) -> int | None:
        """The huge pages the stopped cluster's shared memory takes with the settings written
        for it, as the server itself computes them (``postgres -C
        shared_memory_size_in_huge_pages``, PostgreSQL 15 on); None before 15, or where the
        kernel has no huge pages (the server says -1)."""
        if self.binaries.major < 15 or self.running:
            return None
        argv = [
            self.binaries.exe("postgres"),
            "-D",
            str(self.datadir),
            "-C",
            "shared_memory_size_in_huge_pages",
        ]
        out = procs.run(argv, run_as=self.lab.run_as, timeout=60, what="postgres -C")
        pages = int(out.stdout.strip())
        return pages if pages > 0 else None

    def _ready(self) -> bool:
        if self.proc is None or self.proc.poll() is not None:
            return True  # not ready, but waiting longer is pointless
        try:
            lines = (self.datadir / "postmaster.pid").read_text().splitlines()
        except (FileNotFoundError, PermissionError):
            return False
        # a postmaster killed earlier leaves a postmaster.pid that says "ready": only ours counts
        return (
            len(lines) >= 8
            and lines[0].strip() == str(self.proc.pid)
            and lines[7].strip() == "ready"
        )

    def _reap(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            procs.terminate(self.proc, signal.SIGQUIT, grace=5)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def survived(self, grace: float = 1.0) -> bool:
        """Whether the postmaster is still running after a client saw the server go away: a
        SIGKILLed postmaster's backends notice its death (and pgbench reports it) a moment
        before the kernel has made it a process its parent can reap, so wait up to ``grace``
        seconds for that before saying it lives."""
        if self.proc is None:
            return False
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            return True
        return False

    def lost(self, grace: float = 1.0) -> str | None:
        """Why the run cannot be trusted because of the server (it died), or None."""
        return None if self.survived(grace) else "the server was not running at the end of the run"

    def stop(self, mode: str = "fast", timeout: float = 120) -> None:
        """Stop the postmaster (INT for fast), escalating to QUIT then KILL; always reaps, and
        after a postmaster that died by itself, ends the backends it left."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is not None:
            self._end_orphans()
            return
        try:
            proc.send_signal(STOP_SIGNALS[mode])
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            procs.terminate(proc, signal.SIGQUIT, grace=10)
        except BaseException:
            procs.terminate(proc, signal.SIGQUIT, grace=10)
            raise

    def _end_orphans(self, timeout: float = 10) -> None:
        """Backends of a postmaster that was killed notice it at their next wait and exit; the
        shared memory they hold would stop a new postmaster from starting, so wait, then kill."""
        here = self.datadir.resolve()

        def orphans() -> list[psutil.Process]:
            found = []
            for p in psutil.process_iter(["name"]):
                try:
                    if p.info["name"] == "postgres" and Path(p.cwd()).resolve() == here:
                        found.append(p)
                except (psutil.Error, OSError):
                    continue
            return found

        if procs.wait_until(lambda: not orphans(), timeout / 2, interval=0.1):
            return
        for p in orphans():
            with contextlib.suppress(psutil.Error):
                p.kill()
        procs.wait_until(lambda: not orphans(), timeout / 2, interval=0.1)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- settings --------------------------------------------------------------------------
    def _write_conf(self, user_settings: Mapping[str, str]) -> None:
        lines = ["# written by pglab for the current run; do not edit"]
        for name, value in sorted(user_settings.items()):
            escaped = str(value).replace("\\", "\\\\").replace("'", "''")
            lines.append(f"{name} = '{escaped}'")
        path = self.datadir / CONF_FILE
        path.write_text("\n".join(lines) + "\n")
        self.lab.give(path)

    def apply(
        self, user_settings: Mapping[str, str], catalog: Mapping[str, settings.SettingDef]
    ) -> str:
        """Bring the running server to ``user_settings``: "none", "reload" or "restart"."""
        new = dict(user_settings)
        if new == self.applied and self.running:
            return "none"
        if not self.running:
            self.start(new)
            return "restart"
        if settings.needs_restart(self.applied, new, catalog):
            self.stop()
            self.start(new)
            return "restart"
        self._write_conf(new)
        with self.connect() as conn:
            conn.execute("SELECT pg_reload_conf()")
        self._wait_applied(new, catalog)
        self.applied = new
        return "reload"

    def _wait_applied(
        self, new: Mapping[str, str], catalog: Mapping[str, settings.SettingDef]
    ) -> None:
        wait_applied(self.connect, self.applied, new, catalog, self.log_tail)

    # -- connections and facts --------------------------------------------------------------
    def conninfo(self, dbname: str = "postgres") -> str:
        return f"host={self.socket_dir} port={self.port} user={SUPERUSER} dbname={dbname}"

    def connect(self, dbname: str = "postgres", autocommit: bool = True) -> psycopg.Connection:
        try:
            return psycopg.connect(
                self.conninfo(dbname),
                autocommit=autocommit,
                application_name="pglab",
                connect_timeout=10,
            )
        except psycopg.OperationalError as exc:
            raise ServerError(
                f"cannot connect to cluster {self.name}: {exc}", log_tail=self.log_tail()
            ) from exc

    def bench_session(self) -> psycopg.Connection:
        return self.connect()

    def client_conninfo(self, dbname: str | None = None) -> str:
        return self.conninfo(dbname or "postgres")

    def client_env(self) -> dict[str, str] | None:
        return None  # pgbench reaches it by the socket pglab gives it, as pglab's user

    def os_view(self) -> OsView:
        return OsView(self.datadir, postgres_pids=self._postgres_pids)

    def _postgres_pids(self) -> list[int]:
        """The postmaster and its children."""
        if self.proc is None:
            return []
        below = proc_files.descendants(self.proc.pid)  # a file read per process, each second
        if below is not None:
            return [self.proc.pid, *below]
        try:
            postmaster = psutil.Process(self.proc.pid)
            return [postmaster.pid, *(c.pid for c in postmaster.children(recursive=True))]
        except psutil.Error:
            return []

    def changed_under_run(self) -> str | None:
        return None  # only pglab starts and stops it; a crash fails the run by itself

    def fingerprint(self, binaries: Binaries) -> Fingerprint:
        del binaries  # its own
        return fingerprint.of_run(self)

    def pgbench_conn_args(self, dbname: str = "postgres") -> list[str]:
        return ["-h", str(self.socket_dir), "-p", str(self.port), "-U", SUPERUSER, dbname]

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def log_since(self, offset: int, limit: int = 2_000_000) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                data = f.read(limit)
        except FileNotFoundError:
            return ""
        return data.decode("utf-8", "replace")

    def log_tail(self, lines: int = 20) -> str:
        size = self.log_size()
        return procs.tail(self.log_since(max(0, size - 20_000)), lines)


def wait_applied(
    connect: Callable[[], psycopg.Connection],
    before: Mapping[str, str],
    new: Mapping[str, str],
    catalog: Mapping[str, settings.SettingDef],
    log_tail: Callable[[], str],
) -> None:
    """After a reload, until new sessions see ``new`` and no longer what pglab set from ``before``
    (a setting dropped falls back to the server's own files)."""
    # the server's own names (DateStyle, not datestyle) for what is set now or was set before
    wanted = {}
    for name, value in new.items():
        defn = settings.lookup(name, catalog)
        if defn is not None:  # a custom (extension) placeholder cannot be checked
            wanted[defn.name] = (defn, value)
    dropped = [d.name for n in before if (d := settings.lookup(n, catalog))]
    names = sorted(set(wanted) | set(dropped))
    deadline = time.monotonic() + 10
    while True:
        with connect() as conn:
            rows = conn.execute(
                "SELECT name, setting, sourcefile FROM pg_settings WHERE name = ANY(%s)",
                (names,),
            ).fetchall()
        pending = []
        for name, setting, sourcefile in rows:
            if name in wanted:
                defn, value = wanted[name]
                if not settings.same_value(defn, value, setting):
                    pending.append(name)
            elif (sourcefile or "").endswith("/" + CONF_FILE):  # still the value pglab set
                pending.append(name)
        if not pending:
            return
        if time.monotonic() > deadline:
            raise ServerError(
                f"the server did not take the new value of {', '.join(pending)}",
                log_tail=log_tail(),
            )
        time.sleep(0.05)


def complaints(log: str, limit: int = 5) -> str:
    """The last PANIC, FATAL and ERROR messages of a server log (what it said went wrong),
    without the lines every backend prints when the postmaster dies. A message that many
    backends printed (each client's same ERROR) is given once, with its count."""
    counts: dict[str, int] = {}
    lines: dict[str, str] = {}  # message -> its last line, in the order of last occurrence
    for line in log.splitlines():
        m = _LEVEL.search(line)
        if m is None or any(n in line for n in CRASH_ECHOES):
            continue
        message = line[m.start() + 1 :].strip()
        counts[message] = counts.get(message, 0) + 1
        lines.pop(message, None)
        lines[message] = line.strip()
    last = list(lines.items())[-limit:]
    return "\n".join(
        line + (f"  ({counts[msg]} times)" if counts[msg] > 1 else "") for msg, line in last
    )


_LEVEL = re.compile(r" (PANIC|FATAL|ERROR): ")


# -- ownership: finding and stopping what an earlier pglab left running ----------------------


def write_owner(datadir: Path) -> None:
    me = psutil.Process()
    (datadir.parent / f"{datadir.name}.{OWNER_FILE}").write_text(
        json.dumps({"pid": me.pid, "create_time": me.create_time()})
    )


def owner_alive(datadir: Path) -> bool:
    try:
        info = json.loads((datadir.parent / f"{datadir.name}.{OWNER_FILE}").read_text())
        proc = psutil.Process(info["pid"])
        return bool(abs(proc.create_time() - info["create_time"]) < 0.01)
    except (FileNotFoundError, ValueError, KeyError, psutil.NoSuchProcess):
        return False


def postmaster_of(datadir: Path) -> psutil.Process | None:
    """The live postmaster of ``datadir`` (its pid checked against executable and data dir)."""
    try:
        pid = int((datadir / "postmaster.pid").read_text().splitlines()[0])
        proc = psutil.Process(pid)
        if proc.name() not in ("postgres", "postmaster"):
            return None
        if Path(proc.cwd()).resolve() != datadir.resolve():
            return None
        return proc
    except (FileNotFoundError, IndexError, ValueError, psutil.Error, OSError):
        return None


def stop_leftovers(lab: Lab) -> list[str]:
    """Stop postmasters (and pgbench) that a dead pglab left behind under this lab home."""
    stopped: list[str] = []
    candidates = [p for p in lab.clusters.iterdir() if p.is_dir()]
    candidates += [d / "pgdata" for d in lab.datasets.iterdir() if (d / "pgdata").is_dir()]
    for datadir in candidates:
        if owner_alive(datadir):
            continue
        proc = postmaster_of(datadir)
        if proc is None:
            continue
        _kill_tree(proc, signal.SIGQUIT)
        stopped.append(f"postgres pid {proc.pid} on {datadir}")
    for datadir in lab.clusters.glob("w*"):  # working copies of a dead pglab: disposable
        if datadir.is_dir() and not owner_alive(datadir) and postmaster_of(datadir) is None:
            shutil.rmtree(datadir, ignore_errors=True)
            for suffix in (".log", f".{OWNER_FILE}"):
                datadir.with_name(datadir.name + suffix).unlink(missing_ok=True)
    sock = str(lab.home / "sock")
    for proc in psutil.process_iter(["name", "cmdline", "pid"]):
        try:
            if proc.info["name"] != "pgbench" or not any(
                sock in a for a in proc.info["cmdline"] or []
            ):
                continue
            owner = proc.parent()
            if owner is not None and owner.pid != 1 and "pglab" in " ".join(owner.cmdline()):
                continue
            proc.kill()
            stopped.append(f"pgbench pid {proc.pid}")
        except psutil.Error:
            continue
    return stopped


def _kill_tree(proc: psutil.Process, sig: int) -> None:
    try:
        proc.send_signal(sig)
        proc.wait(timeout=10)
    except psutil.TimeoutExpired:
        proc.kill()
    except psutil.Error:
        pass
    try:
        for child in proc.children(recursive=True):
            child.kill()
    except psutil.Error:
        pass


def require_not_managed(names: list[str]) -> None:
    managed = sorted(n for n in names if n in LAB_MANAGED)
    if managed:
        raise LabError(
            f"settings managed by pglab cannot be set in a campaign: {', '.join(managed)}"
        )


def _meminfo() -> str:
    try:
        return Path("/proc/meminfo").read_text()
    except OSError:
        return ""


def start_hint(log_tail: str, meminfo: str) -> str:
    """What to do when a server did not start, from its log and the kernel's ``/proc/meminfo``:
    with ``huge_pages = on``, how many huge pages were free and who takes them."""
    if "could not map anonymous shared memory" not in log_tail:
        return "read the server log below; a setting combination it rejects is the usual cause"
    fields = (line.partition(":") for line in meminfo.splitlines())
    info = {key.strip(): value.split()[0] for key, _, value in fields if value.strip()}
    total, free = info.get("HugePages_Total", "0"), info.get("HugePages_Free", "0")
    asked = re.search(r"currently (\d+) bytes", log_tail)
    size = f"{int(asked.group(1)) / 2**20:.0f} MB" if asked else "its shared memory"
    if total == "0":
        return (
            f"huge_pages = on and the kernel has no huge pages (vm.nr_hugepages = 0) for {size}: "
            "reserve them with [os] huge_pages = true, or set huge_pages = try"
        )
    return (
        f"{free} of the {total} huge pages reserved (vm.nr_hugepages) were free when it asked "
        f"for {size}: another process maps them (a PostgreSQL started meanwhile with the "
        "default huge_pages = try takes them), or the reservation is too small"
    )
