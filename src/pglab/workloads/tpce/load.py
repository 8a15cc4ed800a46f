"""The TPC-E-like kit's dataset: its tables made (``workloads/kits/work/tpce/schema.sql`` and the
transactions' functions), the fixed tables copied, then one load unit of 1,000 customers per
call on several connections at once, each unit's rows (``rows``, deterministic per seed,
unit and scale) streamed into ``COPY ... FROM STDIN`` table by table, with progress and an
ETA; then the keys, foreign keys and indexes (``keys.sql``), VACUUM ANALYZE, and the kit's
consistency conditions checked on what was loaded (a broken one fails the load: the generator
is wrong, and no run should measure it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import psycopg

from pglab.campaign.spec import DatasetSpec
from pglab.errors import CommandError
from pglab.postgres.dataset import Loading, Size, kit_size
from pglab.workloads.kits.load import broken, check
from pglab.workloads.kits.work.kits import TPCE
from pglab.workloads.loading import (
    Connect,
    Progress,
    copy_rows,
    keys_and_vacuum,
    on_connections,
    said_load,
)
from pglab.workloads.tpce import fixed, rows


def load(
    connect: Connect,
    scale: int,
    on_status: Callable[[str], None] = lambda msg: None,
    jobs: int | None = None,
) -> dict[str, float]:
    """Make and load the kit's tables at ``scale`` customers; the seconds of each step."""
    steps: dict[str, float] = {}
    units = rows.units(scale)
    t0 = time.monotonic()
    try:
        with connect() as conn:
            for name in TPCE.setup:
                conn.execute(TPCE.sql(name).encode())
            for table, fixed_rows in fixed.fixed_tables().items():
                copy_rows(conn, table, fixed_rows)
        steps["tables"] = time.monotonic() - t0
        t0 = time.monotonic()
        _load_units(connect, scale, jobs or min(os.cpu_count() or 1, units), on_status)
        with connect() as conn:  # how many securities each exchange lists
            conn.execute(
                b"UPDATE exchange SET ex_num_symb = (SELECT count(*) FROM security "
                b"WHERE s_ex_id = ex_id)"
            )
        steps["rows"] = time.monotonic() - t0
        steps |= keys_and_vacuum(connect, "tpce", TPCE.sql("keys"), on_status)
        t0 = time.monotonic()
        on_status("tpce dataset: consistency")
        with connect() as conn:
            found = broken(check(conn, "tpce"))
        steps["consistency"] = time.monotonic() - t0
    except psycopg.Error as exc:
        raise CommandError(f"loading the tpce dataset failed: {str(exc).strip()}") from exc
    if found:
        raise CommandError(f"the loaded tpce dataset is not consistent: {'; '.join(found)}")
    return steps


def _load_units(connect: Connect, scale: int, jobs: int, on_status: Callable[[str], None]) -> None:
    """Load units 1..N, each in its own transaction, on ``jobs`` connections."""
    units = rows.units(scale)
    progress = Progress(
        lambda done, seconds: (
            "loading tpce: " + said_load(int(done), units, TPCE.unit_what, seconds)
        ),
        on_status,
    )

    def one(number: int) -> None:
        with connect() as conn:
            for table, unit_rows in rows.Unit(number, scale).tables():
                copy_rows(conn, table, unit_rows)

    on_connections(range(1, units + 1), jobs, one, lambda n: progress.add(1), "pglab-tpce")


class TpceDataset:
    """The TPC-E-like kit's tables as its workload declares them
    (``postgres.dataset.DatasetKind``): per customer, 275,000 bytes and 300,000 of WAL (1,000
    customers: 1.1 million rows, 261 MiB with their keys and indexes)."""

    name = "tpce"

    def described(self, spec: DatasetSpec) -> str:
        return f"tpce, {spec.scale:,} {TPCE.scale_what}"

    def estimated_size(self, spec: DatasetSpec) -> Size:
        return kit_size(spec.scale, 275_000, 300_000)

    def init_seconds(self, spec: DatasetSpec) -> float:
        return spec.scale * 0.03  # per customer

    def load(self, into: Loading, spec: DatasetSpec) -> dict[str, float]:
        return load(into.connect, int(spec.scale), into.on_status)

    def check(self) -> None:
        """Nothing: its rows are pglab's own generator's."""


DATASET = TpceDataset()
