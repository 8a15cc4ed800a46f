"""A PostgreSQL server pglab did not start, reached by a connection string (``[server] dsn``).

pglab never starts, stops or restarts such a server, and changes only what the server lets its
role change, decided from the server's own ``pg_settings.context`` and the role's privileges:

- ``user``/``superuser``/``backend`` settings: per session, in the ``options`` of pgbench's
  connections (a superuser-context one needs a superuser or ``GRANT SET ON PARAMETER``);
- ``sighup`` settings: only with ``manage = "reload"``, by ``ALTER SYSTEM`` + ``pg_reload_conf()``,
  the originals written down first (``altered.py``) and put back when the campaign ends;
- ``postmaster`` and ``internal`` settings: refused, naming them and why.

Connections honour what libpq users expect: the dsn (URL or key=value), PG* variables,
``~/.pgpass`` and ``service=``. The password never leaves the process except in the environment
of pgbench (``PGPASSWORD``), never on a command line, and is masked in everything printed or
stored.
"""

from __future__ import annotations

import os
import re
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import psutil
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row

from pglab.campaign.spec import ServerSpec, mask_dsn
from pglab.errors import ServerError
from pglab.fingerprints import Fingerprint
from pglab.lab import Lab
from pglab.postgres import altered, fingerprint, settings
from pglab.postgres.interface import OsView
from pglab.postgres.settings import SettingDef
from pglab.postgres.sources import Binaries

MIN_VERSION_NUM = 150000
SESSION_CONTEXTS = frozenset({"user", "superuser", "backend", "superuser-backend"})
NEEDS_SET_PRIVILEGE = frozenset({"superuser", "superuser-backend"})
# environment variables of the caller that pgbench must see to connect as pglab does (libpq's
# own); PGOPTIONS and PGDATABASE are pglab's to choose
_PG_ENV_SKIP = frozenset({"PGOPTIONS", "PGDATABASE", "PGAPPNAME"})
RTT_PINGS = 21
# pg_try_advisory_lock key (any constant: "a pglab changes settings of this server")
SETTINGS_LOCK = 7073817547875
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
    """What pglab learns of an existing server and its role on first contact."""

    version_num: int
    version: str  # "18.1", or "15.8 (Debian 15.8-1.pgdg120+1)"
    version_full: str
    role: str
    superuser: bool
    createdb: bool
    pg_monitor: bool
    read_all_settings: bool
    may_reload: bool
    started: Any  # pg_postmaster_start_time()
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


class ExistingServer:
    """A server pglab reaches by a dsn. ``owned`` is False: no data directory, no log, no
    process of pglab's; the executor and the telemetry read that."""

    owned = False
    local_processes = False  # whatever machine it is on, its processes are not pglab's
    datadir = None
    proc = None
    # what the telemetry cannot watch, said in every phase's notes (never zeros)
    unwatched: tuple[tuple[str, str], ...] = (
        ("os", "absent: the server was not started by pglab, its machine is not read"),
        ("checkpoints", "no log events: the server's log is not read; see pg.checkpointer"),
    )

    def __init__(self, spec: ServerSpec, lab: Lab):
        assert spec.dsn is not None
        self.spec = spec
        self.lab = lab
        self.params: dict[str, Any] = conninfo_to_dict(spec.dsn)
        self.key = mask_dsn(spec.dsn)  # names the server in messages, journals and the store
        self.where = _where(self.params)
        self.session: dict[str, str] = {}  # the settings pgbench's sessions get
        self.altered: dict[str, str] = {}  # what ALTER SYSTEM set for the current run
        self.journal = altered.Journal.open(lab, self.key)
        self._facts: Facts | None = None
        self._catalog: dict[str, SettingDef] | None = None
        self.started: Any = None  # pg_postmaster_start_time() as the current run began
        self._lock: psycopg.Connection | None = None  # holds SETTINGS_LOCK while it changes any

    # -- connections ------------------------------------------------------------------------
    def conninfo(self, dbname: str | None = None, with_options: bool = False) -> str:
        """Without the password: libpq finds it in the environment pglab passes, or .pgpass."""
        params = {k: v for k, v in self.params.items() if k != "password"}
        params["dbname"] = dbname or self.spec.database
        if with_options and self.session:
            own = params.get("options") or ""
            params["options"] = " ".join([own, *_options(self.session)]).strip()
        params.setdefault("connect_timeout", "10")
        return make_conninfo("", **params)

    def connect(
        self, dbname: str | None = None, with_options: bool = False, admin: bool = False
    ) -> psycopg.Connection:
        """A session in pglab's database (``admin``: in the dsn's own database)."""
        if admin:  # the dsn's, else PGDATABASE's, else postgres (not libpq's: the role's name)
            dbname = self.params.get("dbname") or os.environ.get("PGDATABASE") or "postgres"
        info = self.conninfo(dbname, with_options)
        # a SQL_ASCII server's text comes as bytes unless the client says what it wants
        kwargs: dict[str, Any] = {
            "autocommit": True,
            "application_name": "pglab",
            "client_encoding": "UTF8",
        }
        if "password" in self.params:
            kwargs["password"] = self.params["password"]
        try:
            return psycopg.connect(info, **kwargs)
        except psycopg.OperationalError as exc:
            raise explain(exc, self.where) from exc

    def pgbench_conn_args(self, dbname: str | None = None) -> list[str]:
        return [self.conninfo(dbname, with_options=True)]

    def bench_session(self) -> psycopg.Connection:
        return self.connect(with_options=True)

    def client_conninfo(self, dbname: str | None = None) -> str:
        return self.conninfo(dbname, with_options=True)

    def for_run(self, spec: ServerSpec) -> None:
        """The same server and database, with this run's settings."""
        self.spec = spec

    def os_view(self) -> OsView | None:
        return None  # its machine is not pglab's to read

    def pause(self, host: str) -> None:
        """Stop while another server on ``host`` is measured (only one pglab made there)."""

    def use_copy(self, dataset: str, name: str, fresh: bool) -> float | None:
        """Reset by copy (``reset = "run"`` or ``"point"``): only a server pglab made on a host
        has files pglab may copy (``HostServer``); None until the dataset is kept."""
        raise ServerError(f"{self.where} is not pglab's: its files are not copied",
                          hint='use reset = "reinit" or "never" for it')  # fmt: skip

    def keep_dataset(self, dataset: str) -> float:
        """The cluster's files as dataset ``dataset`` was just made, kept for ``use_copy``."""
        raise ServerError(f"{self.where} is not pglab's: its files are not copied")

    def changed_under_run(self) -> str | None:
        return self.lost()  # restarted under the run: its numbers mean nothing

    def fingerprint(self, binaries: Binaries) -> Fingerprint:
        return fingerprint.of_existing(self, binaries)

    def pgbench_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k.startswith("PG") and k not in _PG_ENV_SKIP}
        if "password" in self.params:
            env["PGPASSWORD"] = self.params["password"]
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

    def check_settings(self, values: Mapping[str, str], where: str) -> list[str]:
        """Every reason the server would not let this role vary ``values`` the way ``manage``
        allows, one line each (with the existing value checks of ``settings.validate``)."""
        catalog = self.catalog()
        facts = self.facts()
        problems = settings.validate(values, catalog, where=where)
        names = [d.name for n in values if (d := settings.lookup(n, catalog)) is not None]
        allowed = self._privileges(names)
        role = facts.role
        for name in names:
            context = catalog[name].context
            if context == "postmaster":
                problems.append(
                    f"{where}{name} has context postmaster: it changes only when the server "
                    "restarts, and pglab never restarts a server it did not start; vary it on "
                    "a server pglab makes (no dsn)"
                )
            elif context == "internal":
                problems.append(f"{where}{name} has context internal: it cannot be changed")
            elif context == "sighup" and self.spec.manage != "reload":
                problems.append(
                    f"{where}{name} has context sighup: it changes for the whole server, by "
                    'ALTER SYSTEM and a reload; allow that with manage = "reload" in [server]'
                )
            elif context == "sighup" and not allowed[name]["alter_system"]:
                problems.append(
                    f"{where}role {role} may not ALTER SYSTEM SET {name}: as a superuser, "
                    f"GRANT ALTER SYSTEM ON PARAMETER {name} TO {role}"
                )
            elif context in NEEDS_SET_PRIVILEGE and not allowed[name]["set"]:
                problems.append(
                    f"{where}role {role} may not set {name} (context {context}): as a "
                    f"superuser, GRANT SET ON PARAMETER {name} TO {role}"
                )
        if any(catalog[n].context == "sighup" for n in names) and self.spec.manage == "reload":
            if not facts.may_reload:
                problems.append(
                    f"{where}role {role} may not call pg_reload_conf(): as a superuser, "
                    f"GRANT EXECUTE ON FUNCTION pg_reload_conf() TO {role}"
                )
            if not (facts.superuser or facts.read_all_settings):
                problems.append(
                    f"{where}role {role} cannot see where settings come from, so pglab could "
                    f"not put them back exactly: GRANT pg_monitor TO {role}"
                )
        return problems

    def _privileges(self, names: list[str]) -> dict[str, dict[str, bool]]:
        if not names:
            return {}
        with self.connect(admin=True) as conn:
            rows = conn.execute(
                "SELECT n, has_parameter_privilege(n, 'SET'), "
                "has_parameter_privilege(n, 'ALTER SYSTEM') FROM unnest(%s::text[]) AS n",
                (names,),
            ).fetchall()
        return {n: {"set": s, "alter_system": a} for n, s, a in rows}

    # -- settings -----------------------------------------------------------------------------
    def apply(self, values: Mapping[str, str], catalog: Mapping[str, SettingDef]) -> str:
        """Bring the server to the run's settings: "session" when only pgbench's sessions get
        them, "reload" when ALTER SYSTEM changed something (put back by ``close``)."""
        session, system = {}, {}
        for name, value in values.items():
            defn = settings.lookup(name, catalog)
            key = defn.name if defn is not None else name
            if defn is not None and defn.context == "sighup":
                system[key] = value
            else:
                session[key] = value
        self.session = session
        changes = {n: v for n, v in system.items() if self.altered.get(n) != v}
        back = [n for n in self.altered if n not in system]
        if not changes and not back:
            return "session"
        self._hold_lock()  # before the journal: one pglab at a time changes this server
        with self.connect(admin=True) as conn:
            new = [n for n in changes if n not in self.journal.originals]
            if new:  # written down (and flushed) before anything changes
                self.journal.record(self._originals(conn, new))
            for name, value in changes.items():
                conn.execute(
                    altered.statements({name: value})[0]  # ALTER SYSTEM SET name = 'value'
                )
            for stmt in altered.statements({n: self.journal.originals[n] for n in back}):
                conn.execute(stmt)
            conn.execute("SELECT pg_reload_conf()")
        expected = {n: self.journal.originals[n] for n in back}
        expected.update(changes)
        self._wait_applied(expected, catalog)
        self.altered = dict(system)
        return "reload"

    def _originals(self, conn: psycopg.Connection, names: list[str]) -> altered.Originals:
        rows = conn.execute(
            "SELECT name, current_setting(name), sourcefile FROM pg_settings WHERE name = ANY(%s)",
            (names,),
        ).fetchall()
        return {
            name: shown if (sourcefile or "").endswith("postgresql.auto.conf") else None
            for name, shown, sourcefile in rows
        }

    def _wait_applied(
        self, expected: Mapping[str, str | None], catalog: Mapping[str, SettingDef]
    ) -> None:
        """Until new sessions see the values (None: whatever the server's files say, i.e. no
        longer the value from postgresql.auto.conf that pglab set)."""
        deadline = time.monotonic() + 10
        while True:
            with self.connect(admin=True) as conn:
                rows = conn.execute(
                    "SELECT name, setting, sourcefile FROM pg_settings WHERE name = ANY(%s)",
                    (list(expected),),
                ).fetchall()
            pending = []
            for name, setting, sourcefile in rows:
                want = expected[name]
                if want is None:
                    if (sourcefile or "").endswith("postgresql.auto.conf"):
                        pending.append(name)
                elif not settings.same_value(catalog[name], want, setting):
                    pending.append(name)
            if not pending:
                return
            if time.monotonic() > deadline:
                raise ServerError(
                    f"the existing server {self.where} did not take the new value of "
                    f"{', '.join(pending)} after pg_reload_conf()",
                    hint="the server log says why (a value its configuration files reject?)",
                )
            time.sleep(0.05)

    def _hold_lock(self) -> None:
        """Take the server's "pglab changes settings here" advisory lock for the campaign (a
        session of its own holds it; it goes with the session, also when pglab is killed)."""
        if self._lock is not None:
            return
        conn = self.connect(admin=True)
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (SETTINGS_LOCK,)).fetchone()
        if not row or not row[0]:
            conn.close()
            raise ServerError(
                f"another pglab is changing settings of {self.where} with ALTER SYSTEM "
                '(manage = "reload") right now',
                hint="wait until its campaign ends, or vary session settings only "
                '(manage = "session") meanwhile: two at once would put back each other\'s '
                "values wrongly",
            )
        self._lock = conn

    def close(self) -> None:
        """Put back every setting pglab changed with ALTER SYSTEM, forget the journal, and let
        another pglab change settings here."""
        try:
            if self.journal.originals:
                put_back(self, self.journal)
                self.altered = {}
        finally:
            if self._lock is not None:
                lock, self._lock = self._lock, None
                lock.close()

    # -- during a run ------------------------------------------------------------------------
    def mark_start(self) -> None:
        """Remember when the postmaster started, to tell a restart during the run."""
        with self.connect(admin=True) as conn:
            row = conn.execute("SELECT pg_postmaster_start_time()").fetchone()
        self.started = row[0] if row else None

    def lost(self, grace: float = 0.0) -> str | None:
        """Why the run cannot be trusted because of the server, or None: unreachable now, or
        restarted (by someone else: never by pglab) since ``mark_start``."""
        del grace  # a remote postmaster's death is not ours to wait for
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

    def log_size(self) -> int:
        return 0

    def log_since(self, offset: int) -> str:
        return ""

    def log_tail(self, lines: int = 20) -> str:
        return ""

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


def put_back(server: ExistingServer, journal: altered.Journal) -> list[str]:
    """ALTER SYSTEM the journal's originals back, reload, wait until they hold, forget the
    journal; the names put back."""
    names = sorted(journal.originals)
    with server.connect(admin=True) as conn:
        for stmt in altered.statements(journal.originals):
            conn.execute(stmt)
        conn.execute("SELECT pg_reload_conf()")
    server._wait_applied(journal.originals, server.catalog())
    journal.forget(names)
    return names


def _options(session: Mapping[str, str]) -> list[str]:
    """``-c name=value`` words for libpq's options (spaces and backslashes escaped)."""
    return [f"-c {name}={_escape(value)}" for name, value in sorted(session.items())]


def _escape(value: str) -> str:
    return re.sub(r"([\\\s])", r"\\\1", value)


def _where(params: Mapping[str, Any]) -> str:
    """user@host:port/dbname from the dsn (what it says; libpq's defaults where it is silent)."""
    host = params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "local"
    port = params.get("port") or os.environ.get("PGPORT") or "5432"
    user = params.get("user") or os.environ.get("PGUSER") or ""
    service = params.get("service")
    if service and not params.get("host"):
        return f"service={service}"
    return f"{user + '@' if user else ''}{host}:{port}"
