"""What a profiled campaign needs, checked before anything runs: perf that can sample here
(``perf.problem``: missing, forbidden, not matching the kernel), and which servers cannot be
profiled (said in the plan: an existing server's processes are not pglab's to sample, and perf
runs on this machine only)."""

from __future__ import annotations

from collections.abc import Iterable

from pglab.campaign.spec import RunSpec
from pglab.errors import ProfileError
from pglab.profile import perf


def problem(runs: Iterable[RunSpec]) -> ProfileError | None:
    """Why the profiled runs of ``runs`` cannot be profiled here, or None."""
    wanted = {r.profile.frequency for r in runs if r.profile.enabled and _here(r)}
    for hz in sorted(wanted):
        if (found := perf.problem(hz)) is not None:
            return found
    return None


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
                f"profile: the server on host {r.server.host} is not profiled (perf runs on "
                "this machine only)"
            )
        else:
            said[label] = (
                f"profile: the existing server {label} is not profiled (its processes are not "
                "pglab's to sample)"
            )
    return list(said.values())


def _here(run: RunSpec) -> bool:
    return not run.server.existing and run.server.host is None
