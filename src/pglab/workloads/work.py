"""What a phase does, by kind: the union of the kinds' declared work (``PhaseSpec.work``),
each declared in its own package (``workloads/KIND/work.py``) with the campaign keys it owns,
and what a module outside ``workloads/`` takes of them (it imports them from here).

A phase is stored as one flat record (``STORED_FIELDS``, in that order: the fields of the one
phase type every kind shared before the kinds declared their own), which
``campaign/identity.flat`` makes from a phase; a field another kind owns has the value that
says "not this kind" there (``UNSET``), and is left out of the phase's identity at that value.

A declaration: the standard library, pglab's core modules and the kinds' work modules only, so
that ``campaign/`` may import it (``tests/unit/test_architecture.py``'s stage
"declarations")."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pglab.workloads.kits import work as kits
from pglab.workloads.kits.work import KitWork, paced
from pglab.workloads.kits.work.kits import FRACTIONAL_KITS, KITS
from pglab.workloads.maintenance import work as maintenance
from pglab.workloads.maintenance.work import (
    ACCOUNT_COLUMNS,
    INDEX_METHODS,
    MAX_JOBS,
    MAX_PARALLEL,
    OPERATION_KEYS,
    OPERATION_OPTIONS,
    OPERATIONS,
    OperationWork,
    operation_work,
)
from pglab.workloads.pgbench.work import (
    LATENCY_LOGS,
    PROTOCOLS,
    Beside,
    PgbenchWork,
    Refusal,
    TuneObjective,
)
from pglab.workloads.replay import work as replay
from pglab.workloads.replay.work import ReplayWork
from pglab.workloads.sysbench import work as sysbench
from pglab.workloads.sysbench.work import (
    DEFAULT_TEST,
    GENERATOR,
    GENERATORS,
    SYSBENCH_TESTS,
    SysbenchWork,
)
from pglab.workloads.tpch import work as tpch
from pglab.workloads.tpch.work import KIT as TPCH_KIT
from pglab.workloads.tpch.work import TpchWork

__all__ = [
    "ACCOUNT_COLUMNS",
    "BESIDE",
    "CLIENTS_SAID",
    "DATASET_FIELDS",
    "DATASET_FIELDS_WHEN_SET",
    "DATASET_REFUSALS",
    "DEFAULT_TEST",
    "FRACTIONAL_KITS",
    "GENERATOR",
    "GENERATORS",
    "GENERATOR_INSTEAD_OF",
    "HOSTS_SHARE_DOC",
    "INDEX_METHODS",
    "KEYS_READ",
    "KIND_DATASET_ROWS",
    "KIND_KEYS",
    "KIND_WORKLOAD_ROWS",
    "KITS",
    "LATENCY_LOGS",
    "MAX_JOBS",
    "MAX_PARALLEL",
    "ON_THIS_MACHINE",
    "OPERATIONS",
    "OPERATION_KEYS",
    "OPERATION_OPTIONS",
    "PROTOCOLS",
    "REFUSED_ELSEWHERE",
    "SCALE_FACTORS",
    "SCALE_FACTORS_SAID",
    "SCALE_DOC",
    "STORED_FIELDS",
    "SYSBENCH_TESTS",
    "TOLD_FROM_FLAT",
    "TPCH_KIT",
    "TUNE_OBJECTIVES",
    "UNSET",
    "WORKS",
    "WRITES",
    "Beside",
    "KitWork",
    "OperationWork",
    "PgbenchWork",
    "Refusal",
    "ReplayWork",
    "SysbenchWork",
    "TpchWork",
    "TuneObjective",
    "Work",
    "operation_work",
    "paced",
    "stored_kind",
]

Work = PgbenchWork | KitWork | TpchWork | SysbenchWork | OperationWork | ReplayWork

# every kind's work type
WORKS: tuple[type[Work], ...] = (
    PgbenchWork,
    KitWork,
    TpchWork,
    SysbenchWork,
    OperationWork,
    ReplayWork,
)

# the kinds that tell their phase from its flat fields (``of_flat``), in the order they are
# asked: a maintenance operation, a workload kit (TPC-H-like or pgbench-driven), a captured
# workload's replay, sysbench; a phase none of them claims runs pgbench's scripts
TOLD_FROM_FLAT: tuple[
    type[OperationWork] | type[TpchWork] | type[KitWork] | type[ReplayWork] | type[SysbenchWork],
    ...,
] = (OperationWork, TpchWork, KitWork, ReplayWork, SysbenchWork)

# every kind's own keys given to a phase of another kind, as the parser refuses them (one rule:
# campaign/workload), in the order it names them
REFUSED_ELSEWHERE: tuple[Refusal, ...] = (
    *kits.REFUSED_ELSEWHERE,
    *sysbench.REFUSED_ELSEWHERE,
    *tpch.REFUSED_ELSEWHERE,
    *maintenance.REFUSED_ELSEWHERE,
)

# the [workload] keys whose value says a phase's kind (a table that gives one says its phase's
# kind: campaign/workload)
KIND_KEYS = ("operation", "kit", "generator", "replay")

# what the other load generator runs instead of (a later table that gives one ends it)
GENERATOR_INSTEAD_OF = sysbench.INSTEAD_OF

# what each kind has no use for, refused beside it (campaign/workload and the JSON Schema from
# these declarations), in the order the parser says them
BESIDE: tuple[Beside, ...] = (*tpch.BESIDE, *sysbench.BESIDE)

# the [dataset] keys a kind owns, refused where no phase runs it
DATASET_REFUSALS: tuple[Refusal, ...] = kits.DATASET_REFUSALS

# what the parser says of a phase's clients by its kind (a TPC-H-like power run's one session)
CLIENTS_SAID = (tpch.clients_said,)

# the kinds whose keys need more than their declarations (a file read): each gives a table's
# updates of the phase and what the parser says of them
KEYS_READ = (replay.applied,)

# a [dataset] scale that may be a fraction: a kind's scale factor, its range and name
SCALE_FACTORS, SCALE_FACTORS_SAID = tpch.SCALE_FACTORS, tpch.SCALE_FACTORS_SAID

# the [workload] keys each kind owns, as the campaign file's reference declares them (its type,
# doc, example, default; campaign/schema/tables assembles them after pgbench's), in its order
KIND_WORKLOAD_ROWS = (
    *kits.ROWS,
    *tpch.ROWS,
    *kits.PACING_ROWS,
    *replay.ROWS,
    *sysbench.ROWS,
    *maintenance.ROWS,
)
# the [dataset] keys a kind's own dataset reads (sysbench's tables, YCSB's record shape)
KIND_DATASET_ROWS = (*sysbench.DATASET_ROWS, *kits.DATASET_ROWS)
# what [dataset] scale is to a kind whose unit is not pgbench's, and what generator hosts share
# of a kind whose load is not clients (in those keys' docs)
SCALE_DOC, HOSTS_SHARE_DOC = tpch.SCALE_DOC, replay.GENERATORS_DOC

# the [tune] objectives that are a kind's own figure, in the order [tune]'s doc names them
TUNE_OBJECTIVES: tuple[TuneObjective, ...] = (kits.NOPM, tpch.GEOMEAN, kits.TPSE)

# a phase's stored fields, in their stored order
STORED_FIELDS = (
    "name",
    "scripts",
    "clients",
    "threads",
    "duration",
    "transactions",
    "times",
    "measured",
    "rate",
    "protocol",
    "connect",
    "vacuum",
    "latency_log",
    "progress",
    "generators",
    "max_tries",
    "latency_limit",
    "failures_detailed",
    "report_per_command",
    "random_seed",
    "sampling_rate",
    "operation",
    "dirty",
    "parallel",
    "freeze",
    "columns",
    "method",
    "jobs",
    "compress",
    "target",
    "kit",
    "mode",
    "distribution",
    "defines",
    "generator",
    "test",
    "queries",
    "query_timeout",
    "pacing",
    "think_time",
    "replay",
    "speed",
)

# stored fields left out of a phase's identity at these values (they came after points were
# stored): pgbench's later options, and every kind's own at the value of another kind's phase
UNSET: dict[str, object] = {
    "max_tries": 1,
    "latency_limit": None,
    "failures_detailed": False,
    "report_per_command": False,
    "random_seed": None,
    "sampling_rate": None,
    "progress": True,
    "operation": None,
    "dirty": 0.0,
    "parallel": 0,
    "freeze": False,
    "columns": ("abalance",),
    "method": "btree",
    "jobs": 1,
    "compress": True,
    "target": None,
    "kit": None,
    "mode": None,
    "distribution": None,
    "defines": (),
    "generator": "pgbench",
    "test": None,
    "queries": (),
    "query_timeout": None,
    "pacing": None,
    "think_time": None,
    "replay": None,
    "speed": 1.0,
}


# whether a phase writes, as its kind declares it from the phase's stored fields (the kits by
# their table, sysbench by its test, an operation: not told); a kind not here (pgbench, a
# replay) is judged by its scripts' statements (``campaign/writes``)
WRITES: dict[type[Work], Callable[[Mapping[str, Any]], bool | None]] = {
    KitWork: kits.writes,
    TpchWork: kits.writes,
    SysbenchWork: sysbench.writes,
    OperationWork: maintenance.writes,
}


def stored_kind(phase: Mapping[str, Any]) -> type[Work]:
    """The kind of work of a phase as stored (``campaign/identity.phase_identity``'s fields, a
    key left out at its ``UNSET`` value, read back from JSON): the first of ``TOLD_FROM_FLAT``
    that claims them, else pgbench's."""
    f = {**UNSET, **phase}
    claims = (kind for kind in TOLD_FROM_FLAT if kind.of_flat(f, PgbenchWork()) is not None)
    return next(claims, PgbenchWork)


# what a phase of a kind that runs on this machine only says when given generator hosts
# (``campaign/kit_checks``)
ON_THIS_MACHINE: dict[type[Work], str] = {SysbenchWork: sysbench.ON_THIS_MACHINE}

# each dataset kind's own [dataset] fields, in its points' identity in this order
# (``campaign/spec.DatasetSpec.point_identity``): always (sysbench's tables, a replay's dump), or
# only when not at their default (YCSB's record shape: its points stored before keep their keys)
DATASET_FIELDS: dict[str, tuple[str, ...]] = {
    sysbench.GENERATOR: sysbench.DATASET_FIELDS,
    replay.KIND: replay.DATASET_FIELDS,
}
DATASET_FIELDS_WHEN_SET: dict[str, tuple[str, ...]] = {
    kit.name: kit.dataset_fields for kit in KITS.values() if kit.dataset_fields
}
