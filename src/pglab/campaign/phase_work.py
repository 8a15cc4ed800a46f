"""A phase made from the flat record of what the campaign file said of it (``identity.flat``'s
fields, which the parser fills layer by layer: ``[workload]``, ``[[phases]]``, a variant's
workload, a ``[matrix]`` axis): its kind decided once, here, and its ``work`` that kind's
(``workloads/work.Work``), with the pgbench options every kind composes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pglab.campaign.spec import PhaseSpec, RunSpec
from pglab.workloads.work import (
    TOLD_FROM_FLAT,
    KitWork,
    OperationWork,
    PgbenchWork,
    TpchWork,
    Work,
)

W = TypeVar("W")


def work_of(f: Mapping[str, Any]) -> Work:
    """The work a phase's flat fields say: the first kind that claims them
    (``workloads/work.TOLD_FROM_FLAT``: a maintenance operation, a workload kit, a captured
    workload's replay, sysbench; the order ``workloads.kind_of`` told kinds apart in before
    they had types of their own), else pgbench's scripts."""
    pgbench = PgbenchWork.of_flat(f)
    for kind in TOLD_FROM_FLAT:
        work = kind.of_flat(f, pgbench)
        if work is not None:
            return work
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
