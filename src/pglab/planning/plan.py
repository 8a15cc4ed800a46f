"""Plans: a campaign expanded into runs (variants × matrix × repeats), ordered, done ones skipped.

Interleaved order runs every point once per round, each round in a different (seeded, so
repeatable) shuffle, so that slow drift of the machine (caches, thermal state, background jobs)
spreads over all points instead of favouring the ones that ran first.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pglab.campaign import kits, os_table
from pglab.campaign import os_spec as os_spec_module
from pglab.campaign.checks import Problems
from pglab.campaign.kits import pacing
from pglab.campaign.parse import Campaign, Variant
from pglab.campaign.phase_work import kit_of
from pglab.campaign.schema.tables import STORAGE_AXES
from pglab.campaign.spec import DatasetSpec, PhaseSpec, RunSpec, dataset_key
from pglab.campaign.workload import apply_workload, takes
from pglab.errors import CampaignError
from pglab.planning.hints import PointHints
from pglab.postgres.dataset import init_seconds
from pglab.workloads import dataset_kind
from pglab.workloads.replay import workload_file
from pglab.workloads.work import KitWork, ReplayWork, SysbenchWork, TpchWork, paced

RUN_OVERHEAD_S = 4.0  # start, stop, dataset reset, storing: measured on a small dataset
STORAGE_BENCH_OVERHEAD_S = 3.0  # per directory: starting the tools, their files


@dataclass(frozen=True)
class Plan:
    campaign: Campaign
    points: tuple[RunSpec, ...]  # repeat 1 of every point, in definition order
    runs: tuple[RunSpec, ...]  # every run to do, in execution order
    done: int  # runs already stored
    notes: tuple[str, ...] = ()  # what preflight found worth saying (settings pglab raised, ...)
    # seconds a run takes beyond its phases (stop, reset, start, telemetry, storing): measured
    # on stored runs when there are some (``analysis.points.run_overhead``)
    run_overhead_s: float = RUN_OVERHEAD_S
    # what each point's runs go by from the runs stored before (``hints.read``: the most TPS
    # of each phase, an operation's last progress), read when the plan is checked for running
    hints: Mapping[str, PointHints] = field(default_factory=dict)

    def estimated_seconds(self) -> float:
        datasets = {dataset_key(r.server, r.dataset, r.storage): r.dataset for r in self.runs}
        init = sum(init_seconds(d, dataset_kind(d)) for d in datasets.values())
        runs = sum(r.estimated_seconds() + self.run_overhead_s for r in self.runs)
        return init + self.storage_bench_seconds() + runs

    def storage_bench_seconds(self) -> float:
        """``[storage_bench]``: pg_test_fsync's 16 tests (and fio's 4 jobs) on each directory
        the runs write to, as the executor measures them before the first run."""
        from pglab.targets.fsbench import FIO_JOBS, PG_TEST_FSYNC_TESTS

        spec = self.campaign.storage_bench
        if not spec.enabled or not self.runs:
            return 0.0
        targets = {t for r in self.runs for t in (r.storage.data, r.storage.wal) if t}
        dirs = len(targets) + any(r.storage.data is None for r in self.runs)
        tests = PG_TEST_FSYNC_TESTS + (FIO_JOBS if spec.fio else 0)
        return dirs * (tests * spec.seconds + STORAGE_BENCH_OVERHEAD_S)


def expand_points(campaign: Campaign) -> list[RunSpec]:
    """Every point of the campaign: each variant at each combination of the matrix axes."""
    names = [name for name, _ in campaign.matrix]
    combos = list(itertools.product(*(values for _, values in campaign.matrix))) or [()]
    points: list[RunSpec] = []
    for variant in campaign.variants:
        for combo in combos:
            axes = tuple(zip(names, combo, strict=True))
            points.append(_point(campaign, variant, axes, len(points)))
    return points


def _point(
    campaign: Campaign, variant: Variant, axes: tuple[tuple[str, Any], ...], index: int
) -> RunSpec:
    server, dataset, phases = variant.server, variant.dataset, variant.phases
    storage, os_spec = variant.storage, variant.os
    for name, value in axes:
        if name.startswith("os."):
            os_spec = os_table.with_axis(os_spec, name, value)
        elif name in STORAGE_AXES:
            storage = replace(storage, **{STORAGE_AXES[name]: campaign.target(value)})
        elif name.startswith("settings."):
            server = server.with_settings({name.removeprefix("settings."): value})
        elif name in DatasetSpec.__dataclass_fields__ and name != "kit":  # kit: the phases'
            dataset = replace(dataset, **{name: value})
        else:
            phases = tuple(_set_workload(ph, name, value, campaign.base_dir) for ph in phases)
    if os_spec.huge_pages:  # the reservation is the point's own: from its shared_buffers
        settings = dict(server.settings)
        pages = os_spec_module.huge_pages_for(settings.get("shared_buffers"))
        os_spec = replace(
            os_spec,
            sysctl=tuple(sorted({**dict(os_spec.sysctl), "vm.nr_hugepages": str(pages)}.items())),
        )
        if "huge_pages" not in settings:
            server = server.with_settings({"huge_pages": "on"})
    kit = next((k for ph in phases if (k := kit_of(ph))), None)
    if kit is not None:  # the kit's tables are the dataset, its scripts told the scale
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
    elif any(isinstance(ph.work, ReplayWork) for ph in phases):  # its dump is the dataset
        dataset, window = replay_dataset(dataset, phases)
        phases = tuple(
            replace(ph, duration=max(1, math.ceil(window / ph.work.speed)))
            if isinstance(ph.work, ReplayWork)
            else ph
            for ph in phases
        )
    elif any(isinstance(ph.work, SysbenchWork) for ph in phases):  # its sbtest tables
        dataset = replace(dataset, kit="sysbench")
        told = (("tables", str(dataset.tables)), ("table_size", str(dataset.table_size)))
        phases = tuple(ph.with_pgbench(defines=told) for ph in phases)
    return RunSpec(
        campaign=campaign.name,
        variant=variant.name,
        axes=axes,
        server=server,
        dataset=dataset,
        phases=phases,
        derived=campaign.derived,
        point_index=index,
        telemetry=campaign.telemetry,
        storage=storage,
        profile=campaign.profile,
        os=os_spec,
        extra={"only_variant": len(campaign.variants) == 1},
    )


def _distribution(ph: PhaseSpec) -> str | None:
    """YCSB's request distribution of a kit's phase (None: another phase, or zipfian)."""
    return ph.work.distribution if isinstance(ph.work, KitWork) else None


def _mode(ph: PhaseSpec) -> str | None:
    """A kit's mode."""
    return ph.work.mode if isinstance(ph.work, KitWork | TpchWork) else None


def _set_workload(phase: PhaseSpec, name: str, value: Any, base_dir: Path) -> PhaseSpec:
    if not takes(phase, name):  # an operation's option: only the phases running one
        return phase
    problems = Problems()  # values were checked when the campaign was parsed
    return apply_workload(phase, {name: value}, problems, "", base_dir)


def make_plan(campaign: Campaign, done_keys: set[str] | frozenset[str] = frozenset()) -> Plan:
    points = expand_points(campaign)
    if campaign.order == "sequential":
        order = [replace(pt, repeat=r) for pt in points for r in range(1, campaign.repeats + 1)]
    else:
        rng = random.Random(campaign.name)
        order = []
        for r in range(1, campaign.repeats + 1):
            round_points = list(points)
            if r > 1:
                rng.shuffle(round_points)
            order += [replace(pt, repeat=r) for pt in round_points]
    todo = tuple(run for run in order if run.run_key not in done_keys)
    return Plan(campaign, tuple(points), todo, done=len(order) - len(todo))


def replay_dataset(
    dataset: DatasetSpec, phases: tuple[PhaseSpec, ...]
) -> tuple[DatasetSpec, float]:
    """The dataset of a phase that replays a workload file: its dump, restored with the roles
    and databases its sessions used (the file read and checked: pglab's format, a version this
    pglab reads, a dump made; every replaying phase of a point replays the same file); and the
    captured window's seconds (the phase's duration: the plan's estimate)."""
    files = sorted({ph.work.replay for ph in phases if isinstance(ph.work, ReplayWork)})
    if len(files) > 1:
        raise CampaignError(
            f"one point replays {len(files)} workload files ({', '.join(files)}): a point has "
            "one dataset, and each file's data is its own dump",
            hint="replay each file in a variant of its own",
        )
    workload = workload_file.read(Path(files[0]))
    dump = workload.data["dump"]
    if dump is None:
        raise CampaignError(
            f"the workload file {files[0]} has no dump: a replay needs the data as it was when "
            "the capture began",
            hint="capture again with --with-dump DIR, or attach a dump with pglab capture "
            "--from-log LOG --dump DIR",
        )
    roles = workload.data.get("roles") or workload.data["users"]
    dump = str((Path(files[0]).parent / dump).resolve())  # a relative one: beside the file
    made = replace(
        dataset,
        kit="replay",
        dump=dump,
        roles=tuple(roles),
        databases=tuple(workload.data["databases"]),
    )
    return made, workload.duration
