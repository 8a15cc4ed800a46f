"""What a campaign's datasets need of its kits: one kind of dataset per run, and a scale the kit
takes (a whole number, or TPC-H's fractional scale factor), as the kits' table declares them
(``workloads/kits/work/kits``); a kind that runs on this machine only given generator hosts
refused as it declares (``workloads/work.ON_THIS_MACHINE``). Apart from ``workload`` (the keys
of one phase) because they look at a variant's phases together, or at ``[dataset]``."""

from __future__ import annotations

from typing import Any

from pglab.campaign.checks import Problems
from pglab.workloads.work import (
    FRACTIONAL_KITS,
    GENERATORS,
    KITS,
    ON_THIS_MACHINE,
    PgbenchWork,
)


def kit_problems(phases: Any, where: str, p: Problems) -> None:
    """A run's dataset is one kit's tables, sysbench's or pgbench's: when a phase runs a kit
    (or sysbench), every phase runs it."""
    kits = {ph.dataset_kind for ph in phases}
    if len(kits) > 1:
        said = ", ".join(f"{ph.name}: {ph.dataset_kind or ph.script_label}" for ph in phases)
        # the load generators besides pgbench, each with tables of its own
        others = [g for g in GENERATORS if g != PgbenchWork.KIND]
        tables = ", ".join(f"{g}'s" for g in others)
        p.add(
            where,
            f"phases run different workloads ({said}): a run's dataset is one kit's "
            f"tables, {tables} or pgbench's, so when a phase runs a kit or "
            f"{' or '.join(others)}, every phase runs it",
        )
    for ph in phases:
        refusal = ON_THIS_MACHINE.get(type(ph.work))
        if refusal is not None and ph.remote:
            p.add(where, f'phase "{ph.name}": {refusal}')


def kit_scale(kits: list[str], scales: Any, where: str, p: Problems) -> None:
    """The dataset's scale counts the kit's unit (warehouses), up to the kit's limit; a
    fraction only where the kit takes one (TPC-H's scale factor 0.01)."""
    for kit in (KITS[k] for k in dict.fromkeys(kits)):
        for scale in scales:
            if isinstance(scale, int | float) and not kit.min_scale <= scale <= kit.max_scale:
                said = "at most" if scale > kit.max_scale else "at least"
                bound = kit.max_scale if scale > kit.max_scale else kit.min_scale
                p.add(
                    where,
                    f"scale = {scale}: kit {kit.name!r} has {kit.scale_what} as its "
                    f"scale, {said} {bound:,g}",
                )
            elif isinstance(scale, int | float) and kit.scale_step > 1 and scale % kit.scale_step:
                p.add(
                    where,
                    f"scale = {scale}: kit {kit.name!r} loads {kit.scale_what} in "
                    f"{kit.unit_what}: a multiple of {kit.scale_step:,}",
                )
    fractional = " or ".join(f'kit = "{kit.name}"' for kit in FRACTIONAL_KITS)
    if not kits:
        for scale in scales:
            if isinstance(scale, float):
                p.add(
                    where,
                    f"scale = {scale}: a fraction is a scale factor of {fractional}; "
                    "pgbench's scale is a whole number ≥ 1",
                )
