"""A PostgreSQL server pglab did not start, reached by a connection string (``[server] dsn``).

pglab never starts, stops or restarts such a server, and changes only what the server lets its
role change, decided from the server's own ``pg_settings.context`` and the role's privileges:

- ``user``/``superuser``/``backend`` settings: per session, in the ``options`` of pgbench's
  connections (a superuser-context one needs a superuser or ``GRANT SET ON PARAMETER``);
- ``sighup`` settings: only with ``manage = "reload"``, by ``ALTER SYSTEM`` + ``pg_reload_conf()``,
  the originals written down first (``altered.py``) and put back when the campaign ends;
- ``postmaster`` and ``internal`` settings: refused, naming them and why.

It reaches the server through a ``reach.Reach`` it holds (as a server pglab makes on a host
holds one: neither class inherits from the other): connections as libpq users expect them (the
dsn, URL or key=value, PG* variables, ``~/.pgpass`` and ``service=``), the server's facts and
catalog, the round trip, a restart told. The password never leaves the process except in the
environment of pgbench (``PGPASSWORD``), never on a command line, and is masked in everything
printed or stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import psycopg

from pglab.campaign.spec import ServerSpec
from pglab.errors import ServerError
from pglab.fingerprints import Fingerprint
from pglab.lab import Lab
from pglab.postgres import altered, fingerprint, settings
from pglab.postgres.interface import OsView
from pglab.postgres.reach import Facts, Reach
from pglab.postgres.settings import SettingDef
from pglab.postgres.sources import Binaries

SESSION_CONTEXTS = frozenset({"user", "superuser", "backend", "superuser-backend"})
NEEDS_SET_PRIVILEGE = frozenset({"superuser", "superuser-backend"})
# pg_try_advisory_lock key (any constant: "a pglab changes settings of this server")
SETTINGS_LOCK = 7073817547875


class ExistingServer:
    """A server pglab reaches by a dsn (``reach``). ``owned`` is False: no data directory, no
    log, no process of pglab's; the executor and the telemetry read that."""

    owned = False
    local_processes = False  # whatever machine it is on, its processes are not pglab's
    # what the telemetry cannot watch, said in every phase's notes (never zeros)
    unwatched: tuple[tuple[str, str], ...] = (
        ("os", "absent: the server was not started by pglab, its machine is not read"),
        ("checkpoints", "no log events: the server's log is not read; see pg.checkpointer"),
    )

    def __init__(self, spec: ServerSpec, lab: Lab):
        self.reach = Reach(spec)
        self.lab = lab
        self.altered: dict[str, str] = {}  # what ALTER SYSTEM set for the current run
        self.journal = altered.Journal.open(lab, self.key)
        self._lock: psycopg.Connection | None = None  # holds SETTINGS_LOCK while it changes any

    @property
    def spec(self) -> ServerSpec:
        return self.reach.spec

    @property
    def key(self) -> str:
        """The masked dsn: names the server in messages, journals and the store."""
        return self.reach.key

    @property
    def where(self) -> str:
        return self.reach.where

    # -- connections ------------------------------------------------------------------------
    def connect(
        self, dbname: str | None = None, with_options: bool = False, admin: bool = False
    ) -> psycopg.Connection:
        """A session in pglab's database (``admin``: in the dsn's own database)."""
        return self.reach.connect(dbname, with_options, admin)

    def pgbench_conn_args(self, dbname: str | None = None) -> list[str]:
        return [self.reach.conninfo(dbname, with_options=True)]

    def bench_session(self) -> psycopg.Connection:
        return self.reach.connect(with_options=True)

    def client_conninfo(self, dbname: str | None = None) -> str:
        return self.reach.conninfo(dbname, with_options=True)

    def client_env(self) -> dict[str, str]:
        return self.reach.client_env()

    def for_run(self, spec: ServerSpec) -> None:
        """The same server and database, with this run's settings."""
        self.reach.spec = spec

    def wait_ready(
        self, timeout: float = 60, on_status: Callable[[str], None] = lambda msg: None
    ) -> None:
        """Wait while someone restarts it (``Reach.wait_ready``)."""
        self.reach.wait_ready(timeout, on_status)

    def os_view(self) -> OsView | None:
        return None  # its machine is not pglab's to read

    def pause(self, host: str) -> None:
        """Stop while another server on ``host`` is measured (only one pglab made there)."""

    def use_copy(self, dataset: str, name: str, fresh: bool) -> float | None:
        """Reset by copy (``reset = "run"`` or ``"point"``): only a server pglab made on a host
        has files pglab may copy (``HostServer``); None until the dataset is kept."""
        raise ServerError(
            f"{self.where} is not pglab's: its files are not copied",
            hint='use reset = "reinit" or "never" for it',
        )

    def keep_dataset(self, dataset: str) -> float:
        """The cluster's files as dataset ``dataset`` was just made, kept for ``use_copy``."""
        raise ServerError(f"{self.where} is not pglab's: its files are not copied")

    def changed_under_run(self) -> str | None:
        return self.lost()  # restarted under the run: its numbers mean nothing

    def fingerprint(self, binaries: Binaries) -> Fingerprint:
        return fingerprint.of_existing(self.reach, binaries)

    # -- facts --------------------------------------------------------------------------------
    def facts(self) -> Facts:
        """The server and the role (refused when older than 15)."""
        return self.reach.facts()

    def catalog(self) -> dict[str, SettingDef]:
        return self.reach.catalog()

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
        self.reach.session = session
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

    def alter_system(self, values: Mapping[str, str]) -> None:
        """ALTER SYSTEM these settings whatever their context (pglab capture's logging) and
        reload, the originals journaled first and the settings lock held: ``close`` puts them
        back, and after a SIGKILL the next pglab does (``run/resume``)."""
        self._hold_lock()
        with self.connect(admin=True) as conn:
            new = [n for n in values if n not in self.journal.originals]
            if new:
                self.journal.record(self._originals(conn, new))
            for name, value in values.items():
                conn.execute(altered.statements({name: value})[0])
            conn.execute("SELECT pg_reload_conf()")
        self._wait_applied(values, self.catalog())
        self.altered.update(values)

    def may_alter_system(self, names: list[str]) -> list[str]:
        """Of ``names``, those this role may not ALTER SYSTEM."""
        allowed = self._privileges(names)
        return [n for n in names if not allowed[n]["alter_system"]]

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
        self.reach.mark_start()

    def lost(self, grace: float = 0.0) -> str | None:
        """Unreachable now, or restarted by someone else since ``mark_start`` (``Reach.lost``)."""
        del grace  # a remote postmaster's death is not ours to wait for
        return self.reach.lost()

    def log_size(self) -> int:
        return 0

    def log_since(self, offset: int) -> str:
        return ""

    def log_tail(self, lines: int = 20) -> str:
        return ""


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
