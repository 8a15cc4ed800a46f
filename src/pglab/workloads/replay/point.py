"""A point that replays a captured workload (``Workload.point``): its dataset is the workload
file's dump, restored with the roles and databases its sessions used, and each replaying
phase lasts the captured window at its speed (the plan's estimate)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from pglab.campaign.spec import DatasetSpec, PhaseSpec, ServerSpec
from pglab.errors import CampaignError
from pglab.workloads.replay import workload_file
from pglab.workloads.work import ReplayWork


def replay_point(
    dataset: DatasetSpec, phases: tuple[PhaseSpec, ...], server: ServerSpec
) -> tuple[DatasetSpec, tuple[PhaseSpec, ...]]:
    """The point's dataset (the dump) and phases (each replaying one the captured window)."""
    dataset, window = replay_dataset(dataset, phases, server)
    phases = tuple(
        replace(ph, duration=max(1, math.ceil(window / ph.work.speed)))
        if isinstance(ph.work, ReplayWork)
        else ph
        for ph in phases
    )
    return dataset, phases


def replay_dataset(
    dataset: DatasetSpec, phases: tuple[PhaseSpec, ...], server: ServerSpec | None = None
) -> tuple[DatasetSpec, float]:
    """The dataset of a phase that replays a workload file: its dump, restored with the roles
    and databases its sessions used (the file read and checked: pglab's format, a version this
    pglab reads, a dump made; every replaying phase of a point replays the same file; no more
    generator hosts than its sessions; a server pglab makes, here or on a host: an existing
    one's roles and databases are not its to make); and the captured window's seconds (the
    phase's duration: the plan's estimate)."""
    if server is not None and server.existing:
        raise CampaignError(
            "a replay on an existing server (dsn): its dataset is the capture's dump restored "
            "with the captured roles and databases, which pglab makes only on a server of its "
            "own",
            hint='replay on a server pglab makes here, or on a host ([server] host = "db1", '
            "which generator hosts reach too)",
        )
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
    sessions = len(workload.data["sessions"])
    for ph in phases:  # each host replays whole sessions: at least one each
        hosts = len(ph.generators) if isinstance(ph.work, ReplayWork) and ph.remote else 0
        if hosts > sessions:
            raise CampaignError(
                f"the workload file {files[0]} has {sessions} session(s) for {hosts} "
                f"generator hosts ({', '.join(ph.generators)}): each host replays whole "
                "sessions, at least one",
                hint=f"name at most {sessions} generator(s), or capture a window with more "
                "sessions",
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
