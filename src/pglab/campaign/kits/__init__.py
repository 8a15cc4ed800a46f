"""Workload kits: a benchmark pglab ships as pgbench scripts, the SQL of its tables, and the
loader's and checker's SQL beside them (``campaign/kits/NAME/``). A phase with ``kit = NAME``
runs the kit's scripts at its weights (so pgbench's per-second progress, per-script figures,
failures, ``rate`` and generator hosts work for it), and the dataset is the kit's tables at
``scale`` (``postgres/kit_load.py`` loads them, instead of ``pgbench -i``).

``tpcc``: a TPC-C-like kit written by pglab from the TPC-C specification (revision 5.11): the
nine tables, warehouses = scale, the five transactions in the 45/43/4/4/4 mix, NURand as the
specification draws it (pgbench's ``|``, ``%`` and ``random``), 1% of New-Orders rolled back
(``new_order_rollback``, its own script so pgbench counts them). Two modes: ``procedures``
(each transaction one PL/pgSQL function call) and ``client`` (its statements from pgbench).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pglab.campaign.spec import Script

HERE = Path(__file__).parent


@dataclass(frozen=True, slots=True)
class Kit:
    name: str
    modes: tuple[str, ...]  # the first is the default
    mix: tuple[tuple[str, int], ...]  # script (file stem) and pgbench weight
    scale_what: str  # what the dataset's scale counts
    max_scale: int
    since: int  # the oldest PostgreSQL major (server and pgbench) that runs it
    needs: str  # what that version brought, as said when refusing an older one
    headline: str  # the script whose committed transactions per minute are the kit's figure

    def directory(self) -> Path:
        return HERE / self.name

    def sql(self, name: str) -> str:
        return (self.directory() / f"{name}.sql").read_text()

    def scripts(self, mode: str) -> tuple[Script, ...]:
        """The mode's pgbench scripts with their weights and content digests."""
        out = []
        for stem, weight in self.mix:
            path = self.directory() / mode / f"{stem}.sql"
            digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            out.append(Script(path=str(path), weight=weight, sha256=digest))
        return tuple(out)


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
)
KITS: dict[str, Kit] = {k.name: k for k in (TPCC,)}
MODES = tuple(dict.fromkeys(m for k in KITS.values() for m in k.modes))
# the per-transaction-type names of a kit's scripts (their file stems): what reports group by
TRANSACTION_TYPES = {
    "new_order": "New-Order",
    "new_order_rollback": "New-Order (rolled back)",
    "payment": "Payment",
    "order_status": "Order-Status",
    "delivery": "Delivery",
    "stock_level": "Stock-Level",
}


def defines(kit: str, scale: int) -> tuple[tuple[str, str], ...]:
    """The pgbench variables (-D) the kit's scripts read: its scale under the kit's name."""
    return ((KITS[kit].scale_what, str(scale)),)


def script_stem(script_path: str) -> str:
    """``new_order`` of ``.../tpcc/client/new_order.sql`` (and of pgbench's name for it)."""
    return Path(script_path).stem
