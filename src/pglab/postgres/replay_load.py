"""A captured workload's dataset (``kit = "replay"``): the roles and databases its sessions
used, made on the template cluster, and its dump (``pg_dump -Fd``, from ``pglab capture
--with-dump``) restored into its database by ``pg_restore``. Made once per server source and
copied per run like every dataset (``dataset.ensure``)."""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg
from psycopg import sql

from pglab import procs
from pglab.campaign.spec import DatasetSpec
from pglab.errors import CommandError
from pglab.postgres.sources import Binaries

RESTORE_TIMEOUT = 24 * 3600
Connect = Callable[[str], psycopg.Connection]


def load(
    connect: Connect,
    conninfo: Callable[[str], str],
    binaries: Binaries,
    spec: DatasetSpec,
    on_status: Callable[[str], None] = lambda msg: None,
) -> dict[str, float]:
    """Roles, databases, then the dump restored into the first database (the one it was
    made of: ``pglab capture`` checked it); the seconds of each step."""
    assert spec.dump is not None and spec.databases, "a replay's dataset (planning/plan.py)"
    t0 = time.monotonic()
    with connect("postgres") as conn:
        have = {r[0] for r in conn.execute("SELECT rolname FROM pg_roles").fetchall()}
        for role in spec.roles:
            if role not in have:  # login, no password: the cluster trusts its socket
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        dbs = {r[0] for r in conn.execute("SELECT datname FROM pg_database").fetchall()}
        for db in spec.databases:
            if db not in dbs:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(db)))
    steps = {"roles and databases": time.monotonic() - t0}
    t0 = time.monotonic()
    target = spec.databases[0]
    on_status(f"restoring the captured workload's dump into {target}")
    done = procs.run(
        [binaries.exe("pg_restore"), "-d", conninfo(target), spec.dump],
        timeout=RESTORE_TIMEOUT,
        check=False,
        what="pg_restore",
    )
    if done.returncode != 0:
        raise CommandError(f"restoring the dump {spec.dump} failed: {procs.tail(done.stderr)}")
    steps["restore"] = time.monotonic() - t0
    return steps
