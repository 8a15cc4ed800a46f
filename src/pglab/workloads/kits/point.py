"""A point of a workload kit (``Workload.point``): the kit's tables are its dataset, and its
scripts are told the scale (pgbench's ``-D``), paced terminals their think times, the YCSB-like
kit's scripts the shape of its records."""

from __future__ import annotations

from dataclasses import replace

from pglab.campaign.phase_work import kit_of
from pglab.campaign.spec import DatasetSpec, PhaseSpec, ServerSpec
from pglab.workloads.kits.work import kits, pacing
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
            paced_phase(ph, int(dataset.scale)) if paced(ph.work) else ph for ph in phases
        )
    if kit == "ycsb" and dataset.record_shape != kits.YCSB_SHAPE:  # its records' scripts
        phases = tuple(
            ph.with_pgbench(scripts=kits.YCSB.scripts(str(_mode(ph)), dataset.record_shape))
            for ph in phases
        )
    return dataset, phases


def _distribution(ph: PhaseSpec) -> str | None:
    """YCSB's request distribution of a kit's phase (None: another phase, or zipfian)."""
    return ph.work.distribution if isinstance(ph.work, KitWork) else None


def _mode(ph: PhaseSpec) -> str | None:
    """A kit's mode."""
    return ph.work.mode if isinstance(ph.work, KitWork | TpchWork) else None


def paced_phase(ph: PhaseSpec, warehouses: int) -> PhaseSpec:
    """``ph`` (kit = "tpcc" with pacing) as its terminals run: 10 clients per warehouse, the
    paced scripts (``work/pacing``), and the variables they read (the time scale, the first
    terminal's number: 0 here, a generator host's own share elsewhere)."""
    assert isinstance(ph.work, KitWork), "a kit's phase"
    think = pacing.think_scale(ph.work.think_time)
    told = (("think_scale", f"{think:.9g}"), ("terminal_from", "0"))
    return replace(
        ph.with_pgbench(
            scripts=pacing.scripts(str(ph.work.mode)), defines=(*ph.pgbench.defines, *told)
        ),
        clients=pacing.TERMINALS_PER_WAREHOUSE * warehouses,
    )
