"""What a phase does, by kind: the union of the kinds' declared work (``PhaseSpec.work``),
each declared in its own package (``workloads/KIND/work.py``) with the campaign keys it owns.

A declaration: the standard library, pglab's core modules and the kinds' work modules only, so
that ``campaign/`` may import it (``tests/unit/test_architecture.py``'s stage
"declarations")."""

from __future__ import annotations

from pglab.workloads.kits.work import KitWork
from pglab.workloads.maintenance.work import OperationWork
from pglab.workloads.pgbench.work import PgbenchWork
from pglab.workloads.replay.work import ReplayWork
from pglab.workloads.sysbench.work import SysbenchWork
from pglab.workloads.tpch.work import TpchWork

Work = PgbenchWork | KitWork | TpchWork | SysbenchWork | OperationWork | ReplayWork

# every kind's work type, and the [workload] keys each owns: pgbench's are every kind's (a
# kind that runs no pgbench keeps them), a kind's own refused beside another kind
WORKS: tuple[type[Work], ...] = (
    PgbenchWork,
    KitWork,
    TpchWork,
    SysbenchWork,
    OperationWork,
    ReplayWork,
)
