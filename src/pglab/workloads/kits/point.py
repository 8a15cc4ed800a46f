"""A point of a workload kit (``Workload.point``): the kit's tables are its dataset, and its
scripts are told the scale (pgbench's ``-D``), paced terminals their think times, the YCSB-like
kit's scripts the shape of its records."""

from __future__ import annotations

from dataclasses import replace

from pglab.campaign import kits
from pglab.campaign.kits import pacing
from pglab.campaign.spec import DatasetSpec, PhaseSpec, ServerSpec


def kit_point(
    dataset: DatasetSpec, phases: tuple[PhaseSpec, ...], server: ServerSpec
) -> tuple[DatasetSpec, tuple[PhaseSpec, ...]]:
    """The point's dataset (its kit's tables) and phases (told the scale) of its kit."""
    kit = next(k for k in (ph.kit for ph in phases) if k)
    dataset = replace(dataset, kit=kit)
    phases = tuple(
        replace(ph, defines=kits.defines(kit, dataset.scale, ph.clients, ph.distribution))
        for ph in phases
    )
    if any(ph.pacing for ph in phases):  # terminals: 10 per warehouse, paced scripts
        phases = tuple(pacing.paced(ph, int(dataset.scale)) if ph.pacing else ph for ph in phases)
    if kit == "ycsb" and dataset.ycsb_shape != kits.YCSB_SHAPE:  # its records' scripts
        phases = tuple(
            replace(ph, scripts=kits.YCSB.scripts(str(ph.mode), dataset.ycsb_shape))
            for ph in phases
        )
    return dataset, phases
