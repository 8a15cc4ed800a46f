"""A workload kit's dataset (``campaign/kits``): its tables made and loaded, on several
connections at once, with progress and an ETA, and its consistency checked after a run.

The kit's SQL makes its tables and functions (``schema.sql``, ``load.sql`` and the mode's
functions, ``procedures.sql``, which both modes get so one dataset serves both), loads the
shared rows once (TPC-C's items), then one unit of scale per call (a warehouse) on ``jobs``
connections, then adds the keys (``keys.sql``) and ANALYZEs. A cluster pglab owns is loaded
once into a template that runs copy (``dataset.ensure``); an existing server's database is
loaded in place (``bench_db.ensure``).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import psycopg

from pglab import procs
from pglab.campaign.kits import KITS, Kit
from pglab.campaign.spec import DatasetSpec
from pglab.errors import CommandError, LabError
from pglab.records import TableJson

INIT_TIMEOUT = 6 * 3600

Connect = Callable[[], psycopg.Connection]
CONSISTENCY_TABLE = "kit.consistency"
COUNTERS_TABLE = "kit.counters"


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


def load(
    connect: Connect,
    spec: DatasetSpec,
    on_status: Callable[[str], None] = lambda msg: None,
    jobs: int | None = None,
) -> dict[str, float]:
    """Make and load the kit's tables at ``spec.scale``; the seconds of each step."""
    assert spec.kit is not None
    if spec.kit == "tpch":  # tpchgen-cli's rows, not SQL functions: its own loader
        from pglab.postgres import tpch_load  # it imports this module

        return tpch_load.load(connect, spec.scale, on_status, jobs)
    if spec.kit == "tpce":  # pglab's generator's rows by COPY: its own loader
        from pglab.postgres import tpce_load  # it imports this module

        return tpce_load.load(connect, spec.scale, on_status, jobs)
    if spec.kit == "sysbench":
        return _sysbench_prepare(connect, spec, on_status, jobs)
    kit = KITS[spec.kit]
    steps: dict[str, float] = {}
    t0 = time.monotonic()
    try:
        with connect() as conn:
            for name in kit.setup:
                conn.execute(kit.sql(name, spec.ycsb_shape).encode())
            if kit.shared:
                conn.execute(kit.shared.encode())
        steps["tables"] = time.monotonic() - t0
        t0 = time.monotonic()
        units = kit.units(spec.scale)
        _load_units(connect, kit, spec, jobs or min(os.cpu_count() or 1, units), on_status)
        steps["rows"] = time.monotonic() - t0
        steps |= keys_and_vacuum(connect, kit.name, kit.sql("keys"), on_status)
    except psycopg.Error as exc:
        raise CommandError(f"loading the {kit.name} dataset failed: {str(exc).strip()}") from exc
    return steps


def keys_and_vacuum(
    connect: Connect, name: str, keys_sql: str, on_status: Callable[[str], None]
) -> dict[str, float]:
    """A loaded kit's last steps, timed: its keys and indexes, then VACUUM ANALYZE."""
    t0 = time.monotonic()
    on_status(f"{name} dataset: keys and indexes")
    with connect() as conn:
        conn.execute(keys_sql.encode())
    return {"primary keys": time.monotonic() - t0, "vacuum": timed_vacuum(connect)}


def timed_vacuum(connect: Connect) -> float:
    """VACUUM ANALYZE of the loaded tables; its seconds."""
    t0 = time.monotonic()
    with connect() as conn:
        conn.execute("VACUUM ANALYZE")
    return time.monotonic() - t0


def _sysbench_prepare(
    connect: Connect, spec: DatasetSpec, on_status: Callable[[str], None], jobs: int | None
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


def said_load(done: int, total: int, what: str, seconds: float) -> str:
    """``loading tpcc: 3 of 10 warehouses (30%), ETA 0:12`` as told while loading."""
    return f"{done:,} of {total:,} {what} ({100 * done / total:.0f}%)" + eta(done, total, seconds)


def eta(done: float, total: float, seconds: float) -> str:
    """``, ETA 0:12`` at the rate so far (nothing before the first unit is done)."""
    if not done or seconds <= 0:
        return ""
    left = (total - done) * seconds / done
    return f", ETA {int(left) // 60}:{int(left) % 60:02d}"


def _load_units(
    connect: Connect, kit: Kit, spec: DatasetSpec, jobs: int, on_status: Callable[[str], None]
) -> None:
    """The kit's units 1..N (TPC-C's warehouses, YCSB's blocks of records), each in its own
    transaction, on ``jobs`` connections; its unit statement gets the unit's number and, when
    it takes two, the scale."""
    units = kit.units(spec.scale)
    lock, done, t0 = threading.Lock(), [0], time.monotonic()
    stop = threading.Event()

    def one(w: int) -> None:
        if stop.is_set():
            return
        try:
            with connect() as conn:
                conn.execute(kit.unit.encode(), (w, spec.scale)[: kit.unit.count("%s")])
        except BaseException:
            stop.set()  # the others do not start another unit
            raise
        with lock:
            done[0] += 1
            said = said_load(done[0], units, kit.unit_what, time.monotonic() - t0)
        on_status(f"loading {kit.name}: {said}")

    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="pglab-kit") as pool:
        for future in [pool.submit(one, w) for w in range(1, units + 1)]:
            future.result()


def refresh(conn: psycopg.Connection, kit: str) -> None:
    """The kit's ``refresh`` SQL run on the run's database (before its phases are watched), so
    that a dataset made by an older pglab runs this one's transactions."""
    for name in KITS[kit].refresh:
        conn.execute(KITS[kit].sql(name).encode())


def counters(conn: psycopg.Connection, kit: str) -> dict[str, int]:
    """The kit's counters now (``counters.sql``: TPC-C's orders written and skipped
    deliveries), read just before and after a measured run; none for a kit without them."""
    if not KITS[kit].has("counters"):
        return {}
    return {str(r[0]): int(r[1]) for r in conn.execute(KITS[kit].sql("counters").encode())}


def counters_table(before: Mapping[str, int], after: Mapping[str, int]) -> TableJson:
    """The counters before and after the phase's pgbench run, as stored with the phase."""
    return {
        "columns": ["counter", "before", "after"],
        "rows": [[name, before[name], after.get(name, before[name])] for name in before],
    }


def check(conn: psycopg.Connection, kit: str) -> TableJson:
    """The kit's consistency conditions on its data now, as a table: each condition, what it
    says, and how many of what it is about (warehouses, districts, customers, orders, stock
    rows) break it."""
    rows = conn.execute(KITS[kit].sql("consistency").encode()).fetchall()
    return {
        "columns": ["condition", "says", "violations"],
        "rows": [[int(r[0]), str(r[1]), int(r[2])] for r in rows],
    }


def broken(table: Mapping[str, object]) -> list[str]:
    """The conditions of a stored consistency table that do not hold, as said in warnings."""
    rows = table.get("rows") or []
    assert isinstance(rows, list)
    return [f"{r[0]} ({r[1]}: {r[2]} broken)" for r in rows if r[2]]
