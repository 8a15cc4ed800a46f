"""A workload kit's dataset (``work/kits``): its tables made and loaded, on several
connections at once, with progress and an ETA, and its consistency checked after a run.

The kit's SQL makes its tables and functions (``schema.sql``, ``load.sql`` and the mode's
functions, ``procedures.sql``, which both modes get so one dataset serves both), loads the
shared rows once (TPC-C's items), then one unit of scale per call (a warehouse) on ``jobs``
connections, then adds the keys (``keys.sql``) and ANALYZEs. A cluster pglab owns is loaded
once into a template that runs copy (``postgres/dataset.ensure``); an existing server's
database is loaded in place (``postgres/bench_db.ensure``): both reach it as the kit's
``SqlKitDataset`` (``DATASETS``), through the workloads' registry.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import psycopg

from pglab.campaign.spec import DatasetSpec
from pglab.errors import CommandError
from pglab.postgres.dataset import MIB, Loading, Size, kit_size
from pglab.records import TableJson
from pglab.workloads.kits.work.kits import KITS, Kit
from pglab.workloads.loading import (
    Connect,
    Progress,
    keys_and_vacuum,
    on_connections,
    said_load,
)

CONSISTENCY_TABLE = "kit.consistency"
COUNTERS_TABLE = "kit.counters"


def load(
    connect: Connect,
    spec: DatasetSpec,
    on_status: Callable[[str], None] = lambda msg: None,
    jobs: int | None = None,
) -> dict[str, float]:
    """Make and load the kit's tables at ``spec.scale``; the seconds of each step (a kit
    whose rows come from SQL functions: the TPC-C-like and YCSB-like ones)."""
    assert spec.kit is not None
    kit = KITS[spec.kit]
    steps: dict[str, float] = {}
    t0 = time.monotonic()
    try:
        with connect() as conn:
            for name in kit.setup:
                conn.execute(kit.sql(name, spec.record_shape).encode())
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


def _load_units(
    connect: Connect, kit: Kit, spec: DatasetSpec, jobs: int, on_status: Callable[[str], None]
) -> None:
    """The kit's units 1..N (TPC-C's warehouses, YCSB's blocks of records), each in its own
    transaction, on ``jobs`` connections; its unit statement gets the unit's number and, when
    it takes two, the scale."""
    units = kit.units(spec.scale)
    progress = Progress(
        lambda done, seconds: (
            f"loading {kit.name}: " + said_load(int(done), units, kit.unit_what, seconds)
        ),
        on_status,
    )

    def one(w: int) -> None:
        with connect() as conn:
            conn.execute(kit.unit.encode(), (w, spec.scale)[: kit.unit.count("%s")])

    on_connections(range(1, units + 1), jobs, one, lambda w: progress.add(1), "pglab-kit")


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


def ycsb_record_ratio(spec: DatasetSpec) -> float:
    """A YCSB record's size against the default one's (10 fields of 100 characters: 1,200
    bytes with its key and the row's overhead): what its size and load time scale by."""
    fields, length = spec.record_shape
    return (fields * (length + 1) + 190) / 1200 if spec.kit == "ycsb" else 1.0


@dataclass(frozen=True, slots=True)
class SqlKitDataset:
    """The dataset of a kit whose rows its SQL functions make (``load``), as its workload
    declares it (``postgres.dataset.DatasetKind``); its data and WAL per unit of scale,
    measured on templates made on 18."""

    name: str
    per_unit: float  # bytes of tables, keys and indexes
    per_unit_wal: float
    init_s_per_unit: float  # seconds to load a unit of scale, 2 CPUs

    def described(self, spec: DatasetSpec) -> str:
        if self.name == "ycsb" and spec.record_shape != (10, 100):
            return (
                f"ycsb, {spec.scale:,} records of {spec.fields} field(s) × "
                f"{spec.field_length:,} characters"
            )
        return f"{self.name}, {spec.scale:,} {KITS[self.name].scale_what}"

    def estimated_size(self, spec: DatasetSpec) -> Size:
        return kit_size(spec.scale * ycsb_record_ratio(spec), self.per_unit, self.per_unit_wal)

    def init_seconds(self, spec: DatasetSpec) -> float:
        return spec.scale * self.init_s_per_unit * ycsb_record_ratio(spec)

    def load(self, into: Loading, spec: DatasetSpec) -> dict[str, float]:
        return load(into.connect, spec, into.on_status)

    def check(self) -> None:
        """Nothing: its rows are made by its SQL."""


# tpcc: per warehouse (2 warehouses: 234 MiB of tables and 257 of pg_wal); ycsb: per record
# (ten fields of 100 characters, its key)
TPCC = SqlKitDataset("tpcc", 105 * MIB, 120 * MIB, 12.0)
YCSB = SqlKitDataset("ycsb", 1200, 1250, 2e-5)
