"""How pglab reaches a PostgreSQL server over the network, by a dsn: what every server that is
not a cluster of this machine's shares.

A :class:`Reach` is held, not inherited, by the two kinds of server pglab talks to by a
connection string: an existing server (``existing.ExistingServer``: never started by pglab)
and a server pglab made on a host (``on_host.HostServer``: started, restarted and stopped over
SSH). It knows the connection parameters (libpq's: the dsn, PG* variables, ``~/.pgpass``,
``service=``), opens sessions (pglab's own, in the dsn's database, and pgbench's with the run's
session settings in ``options``), learns the server and its role once (:class:`Facts`) and its
``pg_settings`` (the catalog), measures the round trip, and tells a server restarted under a run
from one that was not (``mark_start``/``lost``). The password never leaves the process except
in the environment of pgbench (``PGPASSWORD``), never on a command line, and is masked in
everything printed or stored.
"""

from __future__ import annotations

import os
import re
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

import psutil
import psycopg
from psycopg.abc import ConnDict
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row

from pglab.campaign.spec import ServerSpec, mask_dsn
from pglab.errors import ServerError
from pglab.postgres import settings
from pglab.postgres.settings import SettingDef

MIN_VERSION_NUM = 150000
# environment variables of the caller that pgbench must see to connect as pglab does (libpq's
# own); PGOPTIONS and PGDATABASE are pglab's to choose
_PG_ENV_SKIP = frozenset({"PGOPTIONS", "PGDATABASE", "PGAPPNAME"})
RTT_PINGS = 21
# what a server says while it restarts: worth waiting for before the next run
_TRANSIENT = ("shutting down", "starting up", "not yet accepting", "connection refused")

FACTS_SQL = """
SELECT current_setting('server_version_num')::int AS version_num,
       current_setting('server_version') AS version,
       version() AS version_full,
       current_user AS role,
       r.rolsuper AS superuser,
       r.rolcreatedb AS createdb,
       pg_has_role('pg_monitor', 'USAGE') AS pg_monitor,
       pg_has_role('pg_read_all_settings', 'USAGE') AS read_all_settings,
       has_function_privilege('pg_reload_conf()', 'EXECUTE') AS may_reload,
       pg_postmaster_start_time() AS started,
       host(inet_server_addr()) AS server_addr,
       inet_server_port() AS server_port,
       current_setting('max_connections')::int AS max_connections,
       current_setting('superuser_reserved_connections')::int
         + coalesce(current_setting('reserved_connections', true), '0')::int AS reserved,
       (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int
         AS in_use
FROM pg_roles r WHERE r.rolname = current_user
"""


@dataclass(frozen=True)
class Facts:
    """What pglab learns of a server reached by a dsn and its role on first contact."""

    version_num: int
    version: str  # "18.1", or "15.8 (Debian 15.8-1.pgdg120+1)"
    version_full: str
    role: str
    superuser: bool
    createdb: bool
    pg_monitor: bool
    read_all_settings: bool
    may_reload: bool
    started: datetime  # pg_postmaster_start_time()
    server_addr: str | None  # None over a Unix socket
    server_port: int | None
    max_connections: int
    reserved: int
    in_use: int

    @property
    def short_version(self) -> str:
        return self.version.split()[0]

    def room(self) -> int:
        """Connections this role can still open (a superuser may use the reserved slots)."""
        usable = self.max_connections - (0 if self.superuser else self.reserved)
        return usable - self.in_use

    def privileges(self) -> dict[str, bool]:
        return {
            "superuser": self.superuser,
            "createdb": self.createdb,
            "pg_monitor": self.pg_monitor,
            "pg_read_all_settings": self.read_all_settings,
            "pg_reload_conf": self.may_reload,
        }


def require_version(facts: Facts, where: str) -> Facts:
    if facts.version_num < MIN_VERSION_NUM:
        raise ServerError(
            f"the existing server {where} runs PostgreSQL {facts.short_version}; pglab needs "
            "15 or later",
            hint="the statistics views pglab reads and GRANT ... ON PARAMETER are PostgreSQL "
            "15's; benchmark an older version on a server pglab makes (bindir)",
        )
    return facts


def explain(exc: psycopg.Error, where: str) -> ServerError:
    """A connection failure as the user can act on it, with what libpq said."""
    said = mask_dsn(str(exc).strip()) or type(exc).__name__
    low = said.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        hint = (
            "check the role's password: pglab takes it from ~/.pgpass (mode 0600), PGPASSWORD "
            "or the dsn, as psql does"
        )
    elif "pg_hba.conf" in low and "no encryption" in low:
        hint = "the server accepts this role only over SSL: add sslmode=require to the dsn"
    elif "pg_hba.conf" in low:
        hint = "the server's pg_hba.conf does not let this role in from this host"
    elif "ssl" in low and ("not support" in low or "not enabled" in low):
        hint = "the server has no SSL: remove sslmode=require (or verify-*) from the dsn"
    elif "does not exist" in low and "database" in low:
        hint = "name an existing database in the dsn (postgres is usual); pglab makes its own"
    elif "refused" in low or "timeout" in low or "could not translate" in low or "no route" in low:
        hint = "is the server running, and listening there? try: pg_isready -d '<your dsn>'"
    else:
        hint = "try the same dsn with psql, which reads it the same way"
    return ServerError(f"cannot connect to the existing server {where}: {said}", hint=hint)


class Reach:
    """A server reached by ``spec.dsn``: its sessions, facts, catalog and round trip.

    ``session`` holds the settings pgbench's sessions get (in libpq's ``options``); the server
    that holds this ``Reach`` sets them (an existing server, for its session-context settings).
    """

    def __init__(self, spec: ServerSpec, key: str | None = None, where: str | None = None):
        assert spec.dsn is not None
        self.spec = spec
        self.params: ConnDict = conninfo_to_dict(spec.dsn)
        self.key = key or mask_dsn(spec.dsn)  # names the server in messages, journals, store
        self.where = where or _where(self.params)  # names it in what a person reads
        self.session: dict[str, str] = {}  # the settings pgbench's sessions get
        self.started: datetime | None = None  # pg_postmaster_start_time() as the run began
        self._facts: Facts | None = None
        self._catalog: dict[str, SettingDef] | None = None

    @property
    def password(self) -> str | None:
        value = self.params.get("password")
        return None if value is None else str(value)

    # -- connections ------------------------------------------------------------------------
    def conninfo(self, dbname: str | None = None, with_options: bool = False) -> str:
        """Without the password: libpq finds it in the environment pglab passes, or .pgpass."""
        params = {k: v for k, v in self.params.items() if k != "password"}
        params["dbname"] = dbname or self.spec.database
        if with_options and self.session:
            own = str(params.get("options") or "")
            params["options"] = " ".join([own, *_options(self.session)]).strip()
        params.setdefault("connect_timeout", "10")
        return make_conninfo("", **params)

    def connect(
        self, dbname: str | None = None, with_options: bool = False, admin: bool = False
    ) -> psycopg.Connection:
        """A session in pglab's database (``admin``: in the dsn's own database)."""
        if admin:  # the dsn's, else PGDATABASE's, else postgres (not libpq's: the role's name)
            dbname = str(self.params.get("dbname") or os.environ.get("PGDATABASE") or "postgres")
        info = self.conninfo(dbname, with_options)
        try:  # a SQL_ASCII server's text comes as bytes unless the client says what it wants
            return psycopg.connect(
                info,
                autocommit=True,
                application_name="pglab",
                client_encoding="UTF8",
                password=self.password,  # None: libpq's own ways (PGPASSWORD, ~/.pgpass)
            )
        except psycopg.OperationalError as exc:
            raise explain(exc, self.where) from exc

    def client_env(self) -> dict[str, str]:
        """libpq's variables of pglab's environment, and the dsn's password."""
        env = {k: v for k, v in os.environ.items() if k.startswith("PG") and k not in _PG_ENV_SKIP}
        if self.password is not None:
            env["PGPASSWORD"] = self.password
        return env

    def wait_ready(
        self, timeout: float = 60, on_status: Callable[[str], None] = lambda msg: None
    ) -> None:
        """Wait while the server refuses connections because it is starting, stopping or not
        listening (someone restarts it): a campaign goes on once it is back; then raise."""
        deadline = time.monotonic() + timeout
        said = False
        while True:
            try:
                self.connect(admin=True).close()
                return
            except ServerError as exc:
                low = exc.message.lower()
                if not any(w in low for w in _TRANSIENT) or time.monotonic() > deadline:
                    raise
                if not said:
                    on_status(f"waiting for {self.where} to accept connections again")
                    said = True
                time.sleep(0.5)

    # -- facts --------------------------------------------------------------------------------
    def facts(self) -> Facts:
        """Connect, learn the server and the role; refuse a server older than 15."""
        if self._facts is None:
            with self.connect(admin=True) as conn:
                cur = conn.cursor(row_factory=dict_row)
                row = cur.execute(FACTS_SQL).fetchone()
            if row is None:
                raise ServerError(f"the role of {self.where} is not in pg_roles")
            self._facts = require_version(Facts(**row), self.where)
        return self._facts

    def catalog(self) -> dict[str, SettingDef]:
        """The server's own pg_settings (what exists, its values' rules, its contexts)."""
        if self._catalog is None:
            with self.connect(admin=True) as conn:
                rows = conn.cursor(row_factory=dict_row).execute(settings.CATALOG_SQL).fetchall()
            self._catalog = {r["name"]: SettingDef.from_row(r) for r in rows}
        return self._catalog

    # -- during a run ------------------------------------------------------------------------
    def mark_start(self) -> None:
        """Remember when the postmaster started, to tell a restart during the run."""
        with self.connect(admin=True) as conn:
            row = conn.execute("SELECT pg_postmaster_start_time()").fetchone()
        self.started = row[0] if row else None

    def lost(self) -> str | None:
        """Why the run cannot be trusted because of the server, or None: unreachable now, or
        restarted (by someone else: never by pglab) since ``mark_start``."""
        try:
            self.wait_ready(timeout=30)  # a restart in progress: wait to tell it from a crash
            with self.connect(admin=True) as conn:
                row = conn.execute("SELECT pg_postmaster_start_time()").fetchone()
        except ServerError as exc:
            return f"the existing server could not be reached after the run: {exc.message}"
        now = row[0] if row else None
        if self.started is not None and now != self.started:
            return (
                f"the existing server {self.where} restarted during the run (started at "
                f"{self.started:%Y-%m-%d %H:%M:%S %Z}, now at {now:%Y-%m-%d %H:%M:%S %Z}); "
                "pglab never restarts it: someone or something else did"
            )
        return None

    # -- the environment -------------------------------------------------------------------------
    def round_trip_ms(self, conn: psycopg.Connection, pings: int = RTT_PINGS) -> float:
        """The median time of ``SELECT 1`` on an open session: the network's round trip and
        the server's least work, what every pgbench statement pays on top of its own."""
        times = []
        for _ in range(pings):
            t0 = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times)

    def client_is_local(self) -> bool:
        """Whether pgbench runs on the server's machine: a Unix socket, a loopback address or an
        address of one of this machine's interfaces."""
        addr = self.facts().server_addr
        if addr is None:
            return True
        if addr.startswith("127.") or addr == "::1":
            return True
        mine = {a.address.split("%")[0] for nic in psutil.net_if_addrs().values() for a in nic}
        return addr in mine


def _options(session: Mapping[str, str]) -> list[str]:
    """``-c name=value`` words for libpq's options (spaces and backslashes escaped)."""
    return [f"-c {name}={_escape(value)}" for name, value in sorted(session.items())]


def _escape(value: str) -> str:
    return re.sub(r"([\\\s])", r"\\\1", value)


def _where(params: ConnDict) -> str:
    """user@host:port/dbname from the dsn (what it says; libpq's defaults where it is silent)."""
    host = params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "local"
    port = params.get("port") or os.environ.get("PGPORT") or "5432"
    user = params.get("user") or os.environ.get("PGUSER") or ""
    service = params.get("service")
    if service and not params.get("host"):
        return f"service={service}"
    return f"{user}{'@' if user else ''}{host}:{port}"
