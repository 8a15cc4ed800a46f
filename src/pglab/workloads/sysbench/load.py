"""sysbench's dataset (``kit = "sysbench"``): its sbtest tables made by sysbench's own
``prepare``, and where a program that takes no connection string connects (``Target``); the
sysbench on this machine and its version."""

from __future__ import annotations

import functools
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg

from pglab import procs
from pglab.campaign.spec import DatasetSpec
from pglab.errors import LabError
from pglab.postgres.dataset import INIT_TIMEOUT, Loading, Size, kit_size
from pglab.workloads.loading import Connect, timed_vacuum


@dataclass(frozen=True, slots=True)
class Target:
    """Where a client program that takes no connection string (sysbench) connects: what
    libpq used for a session of pglab's (a socket directory or a host); the password goes in
    its environment, never on its command line."""

    host: str
    port: int
    user: str
    dbname: str
    password: str | None

    @classmethod
    def of(cls, conn: psycopg.Connection) -> Target:
        info = conn.info
        return cls(info.host, int(info.port), info.user, info.dbname, info.password or None)

    def sysbench_args(self) -> list[str]:
        return [
            "--db-driver=pgsql",
            f"--pgsql-host={self.host}",
            f"--pgsql-port={self.port}",
            f"--pgsql-user={self.user}",
            f"--pgsql-db={self.dbname}",
        ]

    def env(self) -> dict[str, str]:
        """Beside the clean environment every child gets (``procs.clean_env``)."""
        return {"PGPASSWORD": self.password} if self.password else {}


def sysbench_exe() -> str:
    """sysbench on this machine's PATH, or a LabError saying how to install it."""
    found = shutil.which("sysbench")
    if found is None:
        raise LabError(
            'generator = "sysbench" needs sysbench, which is not on this machine\'s PATH',
            hint="install Debian's: apt-get install sysbench (1.0, with its pgsql driver)",
        )
    return found


@functools.cache
def sysbench_version() -> str:
    """``1.0.20`` (``sysbench --version``), or ``?`` when it says nothing we read."""
    said = procs.run([sysbench_exe(), "--version"], timeout=30, check=False).stdout
    found = re.search(r"sysbench (\S+)", said)
    return found.group(1) if found else "?"


def prepare(
    connect: Connect,
    spec: DatasetSpec,
    on_status: Callable[[str], None] = lambda msg: None,
    jobs: int | None = None,
) -> dict[str, float]:
    """sysbench's own prepare of its sbtest tables (its tables dropped first), one table per
    thread at once; then VACUUM ANALYZE."""
    exe = sysbench_exe()
    with connect() as conn:
        target = Target.of(conn)
        for i in range(1, spec.tables + 1):
            conn.execute(f"DROP TABLE IF EXISTS sbtest{i}".encode())
    threads = max(1, min(jobs or os.cpu_count() or 1, spec.tables))
    argv = [
        exe,
        "oltp_common",
        *target.sysbench_args(),
        f"--tables={spec.tables}",
        f"--table-size={spec.table_size}",
        f"--threads={threads}",
        "prepare",
    ]
    on_status(f"sysbench prepare: {spec.tables} table(s) of {spec.table_size:,} rows")
    t0 = time.monotonic()
    procs.run(argv, timeout=INIT_TIMEOUT, env=target.env(), what="sysbench prepare")
    return {"sysbench prepare": time.monotonic() - t0, "vacuum": timed_vacuum(connect)}


class SysbenchDataset:
    """sysbench's sbtest tables as its workload declares them
    (``postgres.dataset.DatasetKind``): per row (id, k, c char(120), pad char(60), two
    indexes), 260 bytes and 280 of WAL."""

    name = "sysbench"

    def described(self, spec: DatasetSpec) -> str:
        return f"sysbench, {spec.tables:,} table(s) × {spec.table_size:,} rows"

    def estimated_size(self, spec: DatasetSpec) -> Size:
        return kit_size(spec.tables * spec.table_size, 260, 280)

    def init_seconds(self, spec: DatasetSpec) -> float:
        return spec.scale * 2e-6  # by the dataset's scale, as the plan always said

    def load(self, into: Loading, spec: DatasetSpec) -> dict[str, float]:
        return prepare(into.connect, spec, into.on_status)

    def check(self) -> None:
        sysbench_exe()  # sysbench missing: said before anything is made


DATASET = SysbenchDataset()
