"""A captured workload's dataset (``kit = "replay"``): the roles and databases its sessions
used, made on the template cluster, and its dump (``pg_dump -Fd``, from ``pglab capture
--with-dump``) restored into its database by ``pg_restore``. Made once per server source and
copied per run like every dataset (``postgres/dataset.ensure``, which reaches it as
``DATASET`` through the workloads' registry). On a server pglab makes on a host
(``postgres/bench_db.ensure``), the same, over TCP: the roles given the server's password, so
that the sessions replayed from generator hosts log in as their users; the dataset's files
kept there and copied per run as a cluster's here are. An existing server (a dsn) is not
pglab's to make roles and databases on: refused."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

import psycopg
from psycopg import sql

from pglab import procs
from pglab.campaign.spec import DatasetSpec
from pglab.errors import CommandError, LabError
from pglab.postgres.dataset import (
    DATA_BYTES,
    INIT_S_PER_SCALE,
    INIT_WAL_BYTES,
    Loading,
    Size,
    du,
)
from pglab.postgres.sources import Binaries

RESTORE_TIMEOUT = 24 * 3600
Connect = Callable[[str], psycopg.Connection]


def load(
    connect: Connect,
    conninfo: Callable[[str], str],
    binaries: Binaries,
    spec: DatasetSpec,
    on_status: Callable[[str], None] = lambda msg: None,
    env: Mapping[str, str] | None = None,
    password: str | None = None,
) -> dict[str, float]:
    """Roles, databases, then the dump restored into the first database (the one it was
    made of: ``pglab capture`` checked it); the seconds of each step. ``password``: the new
    roles' (they log in over TCP); ``env``: pg_restore's (the server's password)."""
    assert spec.dump is not None and spec.databases, "a replay's dataset (planning/plan.py)"
    t0 = time.monotonic()
    with connect("postgres") as conn:
        have = {r[0] for r in conn.execute("SELECT rolname FROM pg_roles").fetchall()}
        for role in spec.roles:
            if role in have:
                continue
            if password is None:  # login, no password: the cluster trusts its socket
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
            else:  # over TCP, by scram-sha-256, as pglab logs in there
                made = sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}")
                conn.execute(made.format(sql.Identifier(role), sql.Literal(password)))
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
        env=env,
        check=False,
        what="pg_restore",
    )
    if done.returncode != 0:
        raise CommandError(f"restoring the dump {spec.dump} failed: {procs.tail(done.stderr)}")
    steps["restore"] = time.monotonic() - t0
    return steps


class ReplayDataset:
    """A captured workload's dataset as its workload declares it
    (``postgres.dataset.DatasetKind``): its tables and indexes, a few times its dump's files."""

    name = "replay"

    def described(self, spec: DatasetSpec) -> str:
        return f"a captured workload's dump ({Path(spec.dump or '').name})"

    def estimated_size(self, spec: DatasetSpec) -> Size:
        dumped = du(Path(spec.dump)) if spec.dump and Path(spec.dump).is_dir() else 0
        return Size(
            int(DATA_BYTES + 4 * dumped + INIT_WAL_BYTES), int(INIT_WAL_BYTES), measured=False
        )

    def init_seconds(self, spec: DatasetSpec) -> float:
        return spec.scale * INIT_S_PER_SCALE  # as pgbench -i's, as the plan always said

    def load(self, into: Loading, spec: DatasetSpec) -> dict[str, float]:
        if into.connect_to is None or into.conninfo is None:
            raise LabError(
                "a captured workload's dump is restored on a server pglab makes, with the "
                "captured roles and databases: an existing server's are not pglab's to make",
                hint='replay on a server pglab makes here, or on a host ([server] host = "db1", '
                "which generator hosts reach too)",
            )
        return load(
            into.connect_to,
            into.conninfo,
            into.binaries,
            spec,
            into.on_status,
            into.env,
            into.password,
        )

    def check(self) -> None:
        """Nothing: its dump and pgreplay are checked with the plan (``planning/plan``)."""


DATASET = ReplayDataset()
