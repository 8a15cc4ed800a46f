"""Workload kits: a benchmark pglab ships as pgbench scripts, the SQL of its tables, and the
loader's and checker's SQL beside them (``workloads/kits/work/NAME/``). A phase with ``kit = NAME``
runs the kit's scripts at its weights (so pgbench's per-second progress, per-script figures,
failures, ``rate`` and generator hosts work for it), and the dataset is the kit's tables at
``scale`` (``workloads/kits/load.py`` loads them, instead of ``pgbench -i``).

The kits' table, ``KITS``, is a declaration (``tests/unit/test_architecture.py``'s stage
"declarations": the standard library and pglab's core modules only), which ``campaign/``
checks a file against: each kit's modes, its scale's unit and bounds, whether it writes.

``tpcc``: a TPC-C-like kit written by pglab from the TPC-C specification (revision 5.11): the
nine tables, warehouses = scale, the five transactions in the 45/43/4/4/4 mix, NURand as the
specification draws it (pgbench's ``|``, ``%`` and ``random``), 1% of New-Orders rolled back
(``new_order_rollback``, its own script so pgbench counts them). Two modes: ``procedures``
(each transaction one PL/pgSQL function call) and ``client`` (its statements from pgbench).

``tpce``: a TPC-E-like kit (its brokerage loaded by ``workloads/tpce/load.py``), the same two
modes: ``procedures/`` call ``procedures.sql``'s functions, ``client/`` sends each frame's
statements, carrying what one frame passes to the next in pgbench's variables (numbers only,
so that the scripts run on every pgbench protocol).

YCSB's record shape (``[dataset] fields`` and ``field_length``, YCSB's fieldcount and
fieldlength) fills in the ``@FIELD_...@`` markers of its SQL and scripts (``shaped``); at
YCSB's defaults, 10 fields of 100 characters, the text is what it was before the shape could
be set, so the scripts' digests (and the points' keys) did not change.

pgbench has no include, so a script's line ``-- pglab: include args/NAME.sql`` stands for that
file of the kit (the random arguments that a transaction's scripts share; ``frames/NAME.sql``:
statements two scripts share, as the TPC-E-like Trade-Order's frames 1-4 committed or rolled
back): the script pgbench
runs is written, expanded, to a folder named by its content in the lab (``scripts_dir``).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from pglab.lab import command_home
from pglab.script import Script

HERE = Path(__file__).parent
INCLUDE = re.compile(r"^-- pglab: include (\S+)\n", re.MULTILINE)


Mix = tuple[tuple[str, int], ...]  # scripts (file stems) and their pgbench weights
Shape = tuple[int, int]  # YCSB's record: fields, and characters per field
YCSB_SHAPE: Shape = (10, 100)  # YCSB's fieldcount and fieldlength defaults


def shaped(text: str, shape: Shape = YCSB_SHAPE) -> str:
    """``text`` with its ``@FIELD_...@`` markers filled in for records of ``shape``: the
    columns, a value per field, one field updated by ``:field``, and the last field's number."""
    fields, length = shape
    value = "ycsb_value()" if length == YCSB_SHAPE[1] else f"ycsb_value({length})"
    updates = ",\n".join(
        f"    field{i} = CASE WHEN :field = {i} THEN {value} ELSE field{i} END"
        for i in range(fields)
    )
    return (
        text.replace("@FIELD_COLUMNS@", ", ".join(f"field{i} text" for i in range(fields)))
        .replace("@FIELD_VALUES@", ", ".join([value] * fields))
        .replace("@FIELD_UPDATES@", updates)
        .replace("@LAST_FIELD@", str(fields - 1))
    )


@dataclass(frozen=True, slots=True)
class Kit:
    name: str
    modes: tuple[str, ...]  # the first is the default
    mix: Mix | dict[str, Mix]  # one for every mode, or each mode's
    scale_what: str  # what the dataset's scale counts
    max_scale: int
    since: int  # the oldest PostgreSQL major (server and pgbench) that runs it
    needs: str  # what that version brought, as said when refusing an older one
    headline: str | None  # the script whose committed transactions per minute are its figure
    # the loader: the SQL files run first, the statement that loads what all units share, the
    # statement that loads one unit (%s: its number, from 1), and how many units a scale has
    setup: tuple[str, ...] = ("schema", "load")
    shared: str | None = None
    unit: str = ""
    unit_size: int = 1  # units of the scale per loading unit (YCSB: 100,000 records)
    unit_what: str = ""
    min_scale: float = 1  # below 1: a fractional scale (TPC-H's scale factors 0.01, 0.1)
    scale_step: int = 1  # the scale is a multiple of it (TPC-E's load unit: 1,000 customers)
    # the SQL files run again on the run's database before its phases: what a dataset made by an
    # older pglab must get of this one's (TPC-C's transactions as functions, Delivery's table)
    refresh: tuple[str, ...] = ()
    # whether its transactions write (TPC-C's and TPC-E's are functions that write; TPC-H's
    # queries read), and its modes that only read (YCSB's workload C)
    writes: bool = True
    read_modes: tuple[str, ...] = ()
    # its own [dataset] fields, part of its points' identity when not at their default (campaign/
    # spec.DatasetSpec: YCSB's record shape came after its points were stored, which keep keys)
    dataset_fields: tuple[str, ...] = ()

    def directory(self) -> Path:
        return HERE / self.name

    def sql(self, name: str, shape: Shape = YCSB_SHAPE) -> str:
        return shaped((self.directory() / f"{name}.sql").read_text(), shape)

    def has(self, name: str) -> bool:
        return (self.directory() / f"{name}.sql").is_file()

    def writes_in(self, mode: object) -> bool:
        """Whether a phase of this kit in ``mode`` writes."""
        return self.writes and mode not in self.read_modes

    def units(self, scale: int) -> int:
        return -(-scale // self.unit_size)

    def scripts(self, mode: str, shape: Shape = YCSB_SHAPE) -> tuple[Script, ...]:
        """The mode's pgbench scripts with their weights and content digests: from the mode's
        folder when the kit has one per mode, else its ``scripts`` folder; YCSB's for records
        of ``shape``."""
        mix = self.mix[mode] if isinstance(self.mix, dict) else self.mix
        folder = self.directory() / mode
        folder = folder if folder.is_dir() else self.directory() / "scripts"
        out = []
        for stem, weight in mix:
            text = shaped(self.expanded(folder / f"{stem}.sql"), shape)
            digest = hashlib.sha256(text.encode()).hexdigest()[:16]
            path = written(f"{self.name}/{digest}/{mode}", f"{stem}.sql", text)
            out.append(Script(path=str(path), weight=weight, sha256=digest))
        return tuple(out)

    def expanded(self, path: Path) -> str:
        """The script's text with each include line replaced by the kit's file it names."""
        text = path.read_text()
        return INCLUDE.sub(lambda m: (self.directory() / m.group(1)).read_text(), text)


def scripts_dir() -> Path:
    """Where expanded kit scripts are written for pgbench (rewritten when missing): the lab's
    home (``kit-scripts/``, each folder named by its content), not one user's cache: as root
    ``/var/lib/pglab``, shared by everyone who runs pglab there as its datasets and builds are;
    ``PGLAB_HOME`` or a command's ``--lab-dir`` another (``lab.command_home``: they are
    written when the campaign is read, before the lab is opened)."""
    return command_home() / "kit-scripts"


def written(folder: str, name: str, text: str) -> Path:
    """``scripts_dir()/folder/name`` holding ``text`` (folder names the content, so a file
    already there is the same; written through a temporary file so no reader sees half)."""
    path = scripts_dir() / folder / name
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


TPCC = Kit(
    name="tpcc",
    modes=("procedures", "client"),
    # 45/43/4/4/4 (clause 5.2.3), of which 1 in 100 New-Orders rolls back (clause 2.4.1.4)
    mix=(
        ("new_order", 4455),
        ("new_order_rollback", 45),
        ("payment", 4300),
        ("order_status", 400),
        ("delivery", 400),
        ("stock_level", 400),
    ),
    scale_what="warehouses",
    max_scale=10000,
    since=11,
    needs="pgbench's \\if, \\gset and CASE expressions",
    headline="new_order",
    setup=("schema", "load", "procedures"),
    refresh=("procedures",),
    shared="SELECT tpcc_load_items()",
    unit="SELECT tpcc_load_warehouse(%s)",
    unit_what="warehouses",
)
# YCSB's core workloads (Cooper et al., SoCC 2010; the workloads of its distribution): A
# update-heavy 50/50, B read-mostly 95/5, C read-only, D read-latest 95/5 insert, E short
# ranges 95/5 insert, F read-modify-write 50/50
YCSB = Kit(
    name="ycsb",
    modes=("a", "b", "c", "d", "e", "f"),
    mix={
        "a": (("read", 50), ("update", 50)),
        "b": (("read", 95), ("update", 5)),
        "c": (("read", 100),),
        "d": (("read", 95), ("insert", 5)),
        "e": (("scan", 95), ("insert", 5)),
        "f": (("read", 50), ("read_modify_write", 50)),
    },
    scale_what="records",
    max_scale=1_000_000,  # [dataset] scale's own limit
    since=14,
    needs="pgbench's permute() for scattered zipfian keys",
    headline=None,
    unit="SELECT ycsb_load(%s, %s)",
    unit_size=100_000,
    unit_what="blocks of 100,000 records",
    read_modes=("c",),  # read-only
    dataset_fields=("fields", "field_length"),  # YCSB's fieldcount and fieldlength
)
# TPC-H-like (workloads/tpch/work/queries.py, workloads/tpch/): no pgbench scripts; its phase is
# the power run of the 22 queries (workloads/tpch/power.py), its dataset made by
# workloads/tpch/load.py (its SQL in tpch/ here)
TPCH = Kit(
    name="tpch",
    modes=("power", "throughput"),  # throughput: clients = its query streams
    mix=(),
    scale_what="scale factor",
    max_scale=1000,
    since=11,  # its queries are plain SQL; no pgbench runs them
    needs="",
    headline=None,
    setup=(),
    min_scale=0.01,
    writes=False,  # its queries read
)
# TPC-E-like (tpce/): the brokerage of TPC-E 1.14 at scale customers, loaded by pglab's own
# generator (workloads/tpce/rows.py, workloads/tpce/load.py); the ten transactions of clause 3 in
# the mix of clause 6.2.2 (per 10,000: Trade-Order 10.1%, of which 1% rolls back by design), as
# PL/pgSQL functions (procedures/) or as their frames' statements from pgbench (client/)
TPCE = Kit(
    name="tpce",
    modes=("procedures", "client"),
    mix=(
        ("broker_volume", 490),
        ("customer_position", 1300),
        ("market_feed", 100),
        ("market_watch", 1800),
        ("security_detail", 1400),
        ("trade_lookup", 800),
        ("trade_order", 1000),
        ("trade_order_rollback", 10),
        ("trade_result", 1000),
        ("trade_status", 1900),
        ("trade_update", 200),
    ),
    scale_what="customers",
    max_scale=1_000_000,  # [dataset] scale's own limit
    since=11,
    needs="pgbench's \\if and CASE expressions",
    headline=None,  # its figure is tpsE-like, Trade-Results per second (workloads/kits/metrics)
    setup=("schema", "procedures"),
    refresh=("procedures",),
    unit_size=1000,
    unit_what="units of 1,000 customers",
    min_scale=1000,
    scale_step=1000,
)
KITS: dict[str, Kit] = {k.name: k for k in (TPCC, YCSB, TPCH, TPCE)}
# the kits whose scale may be a fraction (TPC-H's scale factors 0.01, 0.1)
FRACTIONAL_KITS = tuple(k for k in KITS.values() if k.min_scale < 1)
# how a YCSB workload picks its keys (its requestdistribution): pgbench -D distribution=N
DISTRIBUTIONS = ("zipfian", "uniform", "latest")
MODES = tuple(dict.fromkeys(m for k in KITS.values() for m in k.modes))
# the per-transaction-type names of a kit's scripts (their file stems): what reports group by
TRANSACTION_TYPES = {
    "new_order": "New-Order",
    "new_order_rollback": "New-Order (rolled back)",
    "payment": "Payment",
    "order_status": "Order-Status",
    "delivery": "Delivery",
    "stock_level": "Stock-Level",
    "broker_volume": "Broker-Volume",
    "customer_position": "Customer-Position",
    "market_feed": "Market-Feed",
    "market_watch": "Market-Watch",
    "security_detail": "Security-Detail",
    "trade_lookup": "Trade-Lookup",
    "trade_order": "Trade-Order",
    "trade_order_rollback": "Trade-Order (rolled back)",
    "trade_result": "Trade-Result",
    "trade_status": "Trade-Status",
    "trade_update": "Trade-Update",
}


def defines(
    kit: str, scale: float, clients: int = 1, distribution: str | None = None
) -> tuple[tuple[str, str], ...]:
    """The pgbench variables (-D) the kit's scripts read: its scale under the kit's name; for
    YCSB also the clients (inserts' keys are apart per client), the distribution's number and
    each client's count of inserts (from 0)."""
    told: tuple[tuple[str, str], ...] = ((KITS[kit].scale_what, str(scale)),)
    if kit == "ycsb":
        number = DISTRIBUTIONS.index(distribution or "zipfian")
        told += (("clients", str(clients)), ("distribution", str(number)), ("inserted", "0"))
    return told


def script_stem(script_path: str) -> str:
    """``new_order`` of ``.../tpcc/client/new_order.sql`` (and of pgbench's name for it)."""
    return Path(script_path).stem
