"""The dataset on an existing server: pgbench's tables in a database of pglab's own.

pglab creates the database (``[server] database``, default ``pglab_bench``) if it is missing and
runs ``pgbench -i`` there; it never touches another database. A table ``pglab_dataset`` in it
says which dataset pglab made (scale, steps, ...): the same dataset is reused, another one is
made over it. pgbench tables that pglab did not make (no such table) are not dropped unless the
user says so (``--reinit``). A file copy cannot reset a server pglab does not own:
``reset = "reinit"`` runs ``pgbench -i`` again before each run instead.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
from psycopg import sql

from pglab import procs
from pglab.campaign.spec import DatasetSpec
from pglab.errors import LabError, ServerError
from pglab.postgres.dataset import (
    INIT_TIMEOUT,
    Dataset,
    DatasetKind,
    Loading,
    described,
    init_argv,
    kind_checked,
)
from pglab.postgres.interface import DsnServer
from pglab.postgres.sources import Binaries

MARKER = "pglab_dataset"
BEING_MADE = "(being made)"  # the marker's dataset while pgbench -i runs


def ensure(
    server: DsnServer,
    binaries: Binaries,
    spec: DatasetSpec,
    on_status: Callable[[str], None] = lambda msg: None,
    reinit: bool = False,
    again: bool = False,
    kind: DatasetKind | None = None,
    whole: bool = False,
) -> Dataset:
    """The dataset in pglab's database, made first if it is not the one there. ``again``:
    initialize even if it is (``reset = "reinit"``); ``reinit``: the user allows dropping
    pgbench tables pglab did not make. A kind's dataset is loaded by ``kind``
    (``workloads.dataset_kind(spec)``), pgbench's by ``pgbench -i``; ``whole``: the server is
    pglab's (made on a host for the campaign), so a kind may make roles and databases of its
    own there (``_loading``)."""
    kind = kind_checked(spec, kind)
    _ensure_database(server)
    want = json.dumps(spec.identity(), sort_keys=True)
    db = server.spec.database
    with server.connect() as conn:
        made, seconds = _marker(conn)
        foreign = made is None and _has_pgbench_tables(conn)
        size = _size(conn)
        if made == want and not again:
            return Dataset(f"{server.key}/{db}", _no_template(), seconds, size)
        if foreign and not reinit:
            raise LabError(
                f"database {db} on {server.where} has pgbench tables that pglab did not make; "
                "pglab will not drop them",
                hint="pass --reinit to let pglab re-initialise them, or name another database "
                'in [server] (database = "..."), which pglab then makes',
            )
        row = conn.execute("SELECT has_schema_privilege(current_schema(), 'CREATE')").fetchone()
        if not row or not row[0]:
            role = server.facts().role
            raise ServerError(
                f"role {role} may not create tables in database {db} on {server.where}",
                hint=f"as the database's owner or a superuser: GRANT CREATE ON SCHEMA public "
                f"TO {role} (in {db}), or let pglab make its own database (another name)",
            )
        # the marker first, as "being made": an init cut short (a restart, Ctrl-C) leaves tables
        # pglab knows for its own, to make again, rather than tables it would refuse to drop
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(MARKER)))
        conn.execute(
            sql.SQL(
                "CREATE TABLE {} (dataset text NOT NULL, init_seconds float8 NOT NULL, "
                "made_at timestamptz NOT NULL DEFAULT now())"
            ).format(sql.Identifier(MARKER))
        )
        conn.execute(
            sql.SQL("INSERT INTO {} (dataset, init_seconds) VALUES (%s, 0)").format(
                sql.Identifier(MARKER)
            ),
            (BEING_MADE,),
        )
    on_status(
        f"initializing dataset {described(spec, kind)} in database {db} on {server.where} "
        f"(PostgreSQL {server.facts().short_version})"
    )
    t0 = time.monotonic()
    if kind is not None:
        kind.load(_loading(server, binaries, on_status, whole), spec)
    else:
        procs.run(
            [*init_argv(binaries, spec), *server.pgbench_conn_args()],
            timeout=INIT_TIMEOUT,
            env=server.client_env(),
            what="pgbench -i",
        )
    seconds = time.monotonic() - t0
    with server.connect() as conn:
        conn.execute(
            sql.SQL("UPDATE {} SET dataset = %s, init_seconds = %s, made_at = now()").format(
                sql.Identifier(MARKER)
            ),
            (want, seconds),
        )
        size = _size(conn)
    on_status(f"dataset ready in {seconds:.1f} s ({size / 2**20:,.0f} MiB in {db})")
    return Dataset(f"{server.key}/{db}", _no_template(), seconds, size, made_now=True)


def _loading(
    server: DsnServer, binaries: Binaries, on_status: Callable[[str], None], whole: bool
) -> Loading:
    """Where a kind loads its dataset: pglab's database; on a server pglab made (``whole``)
    also its other databases and client programs (with its password in their environment),
    the roles the kind makes given that password, to be let in over TCP as pglab is."""
    if not whole:
        return Loading(server.connect, binaries, on_status)
    env = server.client_env() or {}
    return Loading(
        server.connect,
        binaries,
        on_status,
        connect_to=lambda db: server.connect(db),
        conninfo=server.client_conninfo,
        env=env,
        password=env.get("PGPASSWORD"),
    )


def problems(server: DsnServer, reinit: bool = False) -> list[str]:
    """Why pglab could not make or use its database on the server, checked without changing
    anything (before the first run, and by a dry run): the role may not create the database,
    may not create tables in it, or it holds pgbench tables pglab did not make."""
    db = server.spec.database
    role = server.facts().role
    with server.connect(admin=True) as conn:
        row = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,)).fetchone()
    if row is None:
        facts = server.facts()
        if facts.superuser or facts.createdb:
            return []
        return [
            f"role {role} may not create database {db} on {server.where} (no CREATEDB): as a "
            f"superuser, ALTER ROLE {role} CREATEDB, or CREATE DATABASE {db} OWNER {role}"
        ]
    found = []
    with server.connect() as conn:
        row = conn.execute("SELECT has_schema_privilege(current_schema(), 'CREATE')").fetchone()
        if not row or not row[0]:
            found.append(
                f"role {role} may not create tables in database {db} on {server.where}: as its "
                f"owner or a superuser, GRANT CREATE ON SCHEMA public TO {role} (in {db}), "
                'or name a database pglab makes itself ([server] database = "...")'
            )
        if not reinit and _marker(conn)[0] is None and _has_pgbench_tables(conn):
            found.append(
                f"database {db} on {server.where} has pgbench tables that pglab did not make, "
                "and pglab will not drop them: pass --reinit to let it, or name another "
                'database ([server] database = "..."), which pglab then makes'
            )
    return found


def _no_template() -> Path:
    return Path("/nonexistent")  # no files: the dataset lives in the server's database


def _ensure_database(server: DsnServer) -> None:
    db = server.spec.database
    with server.connect(admin=True) as conn:
        row = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,)).fetchone()
        if row:
            return
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
        except psycopg.errors.InsufficientPrivilege as exc:
            role = server.facts().role
            raise ServerError(
                f"role {role} may not create database {db} on {server.where}: {str(exc).strip()}",
                hint=f"as a superuser: ALTER ROLE {role} CREATEDB, or CREATE DATABASE {db} "
                f"OWNER {role}",
            ) from exc


def _marker(conn: psycopg.Connection) -> tuple[str | None, float]:
    exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (MARKER,)).fetchone()
    if not exists or not exists[0]:
        return None, 0.0
    row = conn.execute(
        sql.SQL("SELECT dataset, init_seconds FROM {} LIMIT 1").format(sql.Identifier(MARKER))
    ).fetchone()
    return (row[0], float(row[1])) if row else (None, 0.0)


def _has_pgbench_tables(conn: psycopg.Connection) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = current_schema() AND c.relname IN "
        "('pgbench_accounts', 'pgbench_branches', 'pgbench_tellers', 'pgbench_history')"
    ).fetchone()
    return bool(row and row[0])


def _size(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0
