"""A phase made from the flat record of what the campaign file said of it (``identity.flat``'s
fields, which the parser fills layer by layer: ``[workload]``, ``[[phases]]``, a variant's
workload, a ``[matrix]`` axis): its kind decided once, here, and its ``work`` that kind's
(``workloads/work.Work``), with the pgbench options every kind composes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pglab.campaign.spec import PhaseSpec, RunSpec
from pglab.workloads.kits.work import KitWork
from pglab.workloads.maintenance.work import OperationWork
from pglab.workloads.pgbench.work import PgbenchWork
from pglab.workloads.replay.work import ReplayWork
from pglab.workloads.sysbench.work import GENERATOR, SysbenchWork
from pglab.workloads.tpch.work import KIT, TpchWork
from pglab.workloads.work import Work

W = TypeVar("W")

# pgbench's options, as PgbenchWork's fields
PGBENCH_FIELDS = (
    "scripts",
    "rate",
    "protocol",
    "connect",
    "vacuum",
    "latency_log",
    "progress",
    "max_tries",
    "latency_limit",
    "failures_detailed",
    "report_per_command",
    "random_seed",
    "sampling_rate",
    "defines",
)


def work_of(f: Mapping[str, Any]) -> Work:
    """The work a phase's flat fields say: a maintenance operation, a workload kit (TPC-H-like
    or pgbench-driven), a captured workload's replay, sysbench, else pgbench's scripts (the
    order ``workloads.kind_of`` told kinds apart in before they had types of their own)."""
    pgbench = PgbenchWork(**{k: f[k] for k in PGBENCH_FIELDS})
    if f["operation"] is not None:
        options = ("dirty", "parallel", "freeze", "columns", "method", "jobs", "compress")
        return OperationWork(
            f["operation"], **{k: f[k] for k in options}, target=f["target"], pgbench=pgbench
        )
    if f["kit"] == KIT:
        return TpchWork(f["mode"], f["queries"], f["query_timeout"], pgbench)
    if f["kit"] is not None:
        return KitWork(
            f["kit"], f["mode"], f["distribution"], f["pacing"], f["think_time"], pgbench
        )
    if f["replay"] is not None:
        return ReplayWork(f["replay"], f["speed"], pgbench)
    if f["generator"] == GENERATOR:
        return SysbenchWork(f["test"], pgbench)
    return pgbench


def phase_of(f: Mapping[str, Any]) -> PhaseSpec:
    """The phase of the flat fields ``f`` (``identity.flat``'s): ``phase_of(flat(ph)) == ph``."""
    return PhaseSpec(
        f["name"],
        work_of(f),
        clients=f["clients"],
        threads=f["threads"],
        duration=f["duration"],
        transactions=f["transactions"],
        times=f["times"],
        measured=f["measured"],
        generators=f["generators"],
    )


def kit_of(phase: PhaseSpec) -> str | None:
    """The workload kit a phase runs (a pgbench-driven kit's name, or the TPC-H-like kit's), or
    None."""
    work = phase.work
    return work.kit if isinstance(work, KitWork | TpchWork) else None


def operation_of(phase: PhaseSpec) -> str | None:
    """The maintenance operation a phase runs, or None."""
    return phase.work.operation if isinstance(phase.work, OperationWork) else None


def works(run: RunSpec, kind: type[W]) -> list[W]:
    """The work of ``run``'s phases that is of type ``kind`` (``OperationWork``...)."""
    return [ph.work for ph in run.phases if isinstance(ph.work, kind)]
