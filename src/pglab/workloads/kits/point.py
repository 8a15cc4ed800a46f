"""A point of a workload kit (``Workload.point``): the kit's tables are its dataset, and its
scripts are told the scale (pgbench's ``-D``), paced terminals their think times, the YCSB-like
kit's scripts the shape of its records."""

from __future__ import annotations

from dataclasses import replace

from pglab.campaign import kits
from pglab.campaign.kits import pacing
from pglab.campaign.phase_work import kit_of
from pglab.campaign.spec import DatasetSpec, PhaseSpec, ServerSpec
from pglab.workloads.work import KitWork, TpchWork, paced


def kit_point(
    dataset: DatasetSpec, phases: tuple[PhaseSpec, ...], server: ServerSpec
) -> tuple[DatasetSpec, tuple[PhaseSpec, ...]]:
    """The point's dataset (its kit's tables) and phases (told the scale) of its kit."""
    kit = next(k for ph in phases if (k := kit_of(ph)))
    dataset = replace(dataset, kit=kit)
    phases = tuple(
        ph.with_pgbench(defines=kits.defines(kit, dataset.scale, ph.clients, _distribution(ph)))
        for ph in phases
    )
    if any(paced(ph.work) for ph in phases):  # terminals: 10 per warehouse, paced scripts
        phases = tuple(
            pacing.paced(ph, int(dataset.scale)) if paced(ph.work) else ph for ph in phases
        )
    if kit == "ycsb" and dataset.ycsb_shape != kits.YCSB_SHAPE:  # its records' scripts
        phases = tuple(
            ph.with_pgbench(scripts=kits.YCSB.scripts(str(_mode(ph)), dataset.ycsb_shape))
            for ph in phases
        )
    return dataset, phases


def _distribution(ph: PhaseSpec) -> str | None:
    """YCSB's request distribution of a kit's phase (None: another phase, or zipfian)."""
    return ph.work.distribution if isinstance(ph.work, KitWork) else None


def _mode(ph: PhaseSpec) -> str | None:
    """A kit's mode."""
    return ph.work.mode if isinstance(ph.work, KitWork | TpchWork) else None
