"""The files a campaign names, carried by its fleet jobs: custom pgbench scripts, a build's
patches and its source when that is a tarball (a source tree is not carried: it must be on
every worker).

On submission each file is kept in the results store by its content (``Store.put_file``) and
the job names it by path and SHA-256. A worker that lacks a file writes it where the campaign
named it (points are keyed by the files' contents, a build also by its paths, so a file must be
at that same path); a worker that has a different file there refuses the job, naming it,
rather than run something else than what was submitted.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from pglab.campaign.phase_work import kit_of
from pglab.campaign.spec import RunSpec
from pglab.errors import CampaignError, LabError

if TYPE_CHECKING:  # the store's type only: its module is not imported to run this
    from pglab.store.base import Store


class Carried(TypedDict):
    """A file a job carries (in its JSON arguments): where the campaign names it, and the
    content's sha256, by which the store keeps it."""

    path: str
    sha256: str


# what one campaign may carry in all: a patch series is a few MB, a release tarball ~30 MB
LIMIT = 256 * 2**20


def named(points: Iterable[RunSpec]) -> list[str]:
    """The files the points name, each once, in order: their phases' custom scripts (a kit's
    are pglab's own), their builds' patches and source tarball."""
    out: dict[str, None] = {}
    for point in points:
        for phase in point.phases:
            if kit_of(phase) is None:
                out.update((str(s.path), None) for s in phase.pgbench.scripts if s.path)
        build = point.server.build
        if build is not None:
            out.update((p, None) for p in build.patches)
            if Path(build.source).is_file():
                out[build.source] = None
    return list(out)


def carry(store: Store, points: Iterable[RunSpec]) -> list[Carried]:
    """Keep the files the points name in ``store``; what a job says of them."""
    paths = named(points)
    total = sum(Path(p).stat().st_size for p in paths)
    if total > LIMIT:
        raise CampaignError(
            f"the files this campaign names add up to {total / 2**20:.0f} MB, more than a fleet "
            f"job carries ({LIMIT // 2**20} MB)",
            hint="put a large source on every worker as a directory (a tree is not carried)",
        )
    return [Carried(path=p, sha256=store.put_file(Path(p).read_bytes())) for p in paths]


def place(store: Store, carried: Iterable[Carried]) -> list[str]:
    """Make each carried file be where the campaign named it; the paths written."""
    written = []
    for item in carried:
        path, digest = Path(item["path"]), item["sha256"]
        if path.is_file():
            if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
                raise LabError(
                    f"{path} on this worker is not the file the campaign was submitted with",
                    hint="remove it (the job then writes the submitted one) or put that one there",
                )
            continue
        data = store.get_file(digest)
        if data is None:
            raise LabError(
                f"{path}: the results store does not hold it (sha256 {digest[:16]})",
                hint="submit the campaign again",
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.chmod(0o644)
        tmp.replace(path)
        written.append(str(path))
    return written
