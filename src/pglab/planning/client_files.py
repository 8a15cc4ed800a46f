"""pgbench's own limit on clients: it opens a socket per client and refuses to start with
fewer open files than clients + 3 (``need at least N open files, but system limit is M``,
PostgreSQL 15 and 18 alike). pglab runs pgbench here with its own soft ``RLIMIT_NOFILE``, or
``[os] limits``' nofile for the run; a phase whose clients pgbench could not open is said
before anything runs. Generator hosts split the clients and have limits of their own (not
checked here). What a paced TPC-C-like phase meets first at thousands of terminals
(``kits/pacing.py``: 10 clients per warehouse)."""

from __future__ import annotations

import resource
from collections.abc import Sequence

from pglab.campaign.spec import RunSpec
from pglab.errors import CampaignError

OWN_FILES = 3  # pgbench's rule: clients + 3


def soft_limit() -> int:
    """This process's soft limit of open files, which pgbench inherits."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 2**31


def problems(points: Sequence[RunSpec], limit: int) -> list[str]:
    """Each point whose busiest local pgbench phase needs more open files than it may have
    (``limit``, or the point's ``[os] limits`` nofile)."""
    out = []
    for pt in points:
        allowed = dict(pt.os.limits).get("nofile", limit)
        local = [ph.clients for ph in pt.phases if ph.work.GENERATED and not ph.remote]
        need = max(local, default=0) + OWN_FILES
        if local and need > allowed:
            out.append(
                f"{pt.label}: {need - OWN_FILES} clients: pgbench needs {need} open "
                f"files, and may have {allowed}"
            )
    return out


def errors(points: Sequence[RunSpec]) -> list[CampaignError]:
    """The error that says ``problems`` at this process's limit (none: [])."""
    said = problems(points, soft_limit())
    if not said:
        return []
    return [
        CampaignError(
            "pgbench could not open its clients (a socket each):\n  " + "\n  ".join(said),
            hint="raise the open files limit: [os] limits = { nofile = N } (or ulimit -n), or "
            "split the clients over generator hosts (generators = [...])",
        )
    ]
