"""What a profiled campaign needs, checked before anything runs: perf that can sample here
(``perf.problem``: missing, forbidden, not matching the kernel; a server on a host is checked
there, ``host.problem``), and which servers are profiled where (said in the plan: an existing
server's processes are not pglab's to sample)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from pglab.campaign.spec import RunSpec
from pglab.errors import ProfileError
from pglab.profile import perf
from pglab.units import size_text

BYTES_PER_SAMPLE = 600  # a sample's header, registers and callchain beside its stack copy


def problem(runs: Iterable[RunSpec], work: Path | None = None) -> ProfileError | None:
    """Why the profiled runs of ``runs`` cannot be profiled here, or None; ``work``: where
    perf's recordings go (the lab's work directory), checked for room for the longest."""
    runs = [r for r in runs if r.profile.enabled and _here(r)]
    for hz in sorted({r.profile.frequency for r in runs}):
        if (found := perf.problem(hz)) is not None:
            return found
    return _room(runs, work) if work is not None and runs else None


def recording_bytes(seconds: float, hz: int, cpus: int) -> int:
    """About what perf writes for a phase: each sample carries a copy of its user stack."""
    return int(seconds * hz * cpus * (perf.STACK_BYTES + BYTES_PER_SAMPLE))


def _room(runs: list[RunSpec], work: Path) -> ProfileError | None:
    cpus = os.cpu_count() or 1
    need = max(
        recording_bytes(ph.estimated_seconds(), r.profile.frequency, cpus)
        for r in runs
        for ph in r.phases
        if ph.measured
    )
    where = next((p for p in (work, *work.parents) if p.exists()), Path("/"))
    free = shutil.disk_usage(where).free
    if need <= free:
        return None
    return ProfileError(
        f"perf's recording of the longest profiled phase needs about {size_text(need)} in "
        f"{where}, which has {size_text(free)} free",
        "free space there, shorten the phase, lower [profile] frequency, or leave profiling off",
    )


def notes(runs: Iterable[RunSpec]) -> list[str]:
    """One line per server of profiled runs that is not profiled, and why."""
    said: dict[str, str] = {}
    for r in runs:
        if r.profile.enabled and _here(r):
            said["here"] = (
                f"profile: the server's processes sampled by perf at {r.profile.frequency} Hz "
                "in every measured phase (pglab show RUN --profile)"
            )
        if not r.profile.enabled or _here(r):
            continue
        label = r.server.server_label
        if r.server.host is not None:
            said[label] = (
                f"profile: the server on host {r.server.host} sampled there by its perf at "
                f"{r.profile.frequency} Hz in every measured phase, as the host's user"
            )
        else:
            said[label] = (
                f"profile: the existing server {label} is not profiled (its processes are not "
                "pglab's to sample)"
            )
    return list(said.values())


def _here(run: RunSpec) -> bool:
    return not run.server.existing and run.server.host is None
