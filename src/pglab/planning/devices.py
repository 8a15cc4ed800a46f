"""The block devices under a campaign's storage, for ``[os]``: which device a directory lives
on (``device_of``, also what the executor's ``run/os_state`` writes the queue settings of), and
what a point's ``[os]`` cannot apply to its storage (a queue key over tmpfs, a scheduler the
device lacks: ``problem``), said before anything runs."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pglab.campaign import os_checks
from pglab.campaign.checks import Problems
from pglab.campaign.spec import RunSpec, TargetSpec
from pglab.errors import CampaignError
from pglab.lab import Lab

SYS_BLOCK = Path("/sys/block")


def device_of(path: Path) -> str | None:
    """The block device (a whole disk, as under /sys/block) a directory lives on, or None
    (tmpfs, overlay: no device)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    sysdev = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if not sysdev.exists():
        return None
    real = sysdev.resolve()
    if (real / "partition").exists():
        real = real.parent
    return real.name if (SYS_BLOCK / real.name / "queue").is_dir() else None


def problem(points: Iterable[RunSpec], lab: Lab) -> CampaignError | None:
    """Device problems of the points' [os] (a queue key over tmpfs, a scheduler the device
    lacks), all in one error, before anything runs."""
    said: list[str] = []
    for pt in points:
        if not pt.os.queue():
            continue
        for target in [pt.storage.data] + ([pt.storage.wal] if pt.storage.wal else []):
            said += _device_problems(pt, target, lab)
    if not said:
        return None
    return CampaignError(
        "[os] cannot be applied:\n  " + "\n  ".join(dict.fromkeys(said)),
        hint="io_scheduler, read_ahead_kb and nr_requests are for a block device: a loop "
        "target, or a path on a disk; nothing was changed",
    )


def _device_problems(pt: RunSpec, target: TargetSpec | None, lab: Lab) -> list[str]:
    where = f'point "{pt.label}"'
    if target is not None and target.kind == "tmpfs":
        return [f"{where}: storage target {target.name} is a tmpfs, which has no block device"]
    if target is not None and target.kind == "loop":
        loops = sorted(d.name for d in SYS_BLOCK.glob("loop*"))
        dev = loops[0] if loops else None  # every loop device offers the same
    else:
        path = Path(target.path) if target is not None and target.path else lab.clusters
        dev = device_of(path) if path.exists() else None
        if dev is None:
            return [f"{where}: {path} is on no block device (tmpfs or overlay)"]
    p = Problems()
    if dev is not None and pt.os.io_scheduler is not None:
        os_checks.check_scheduler(dev, pt.os.io_scheduler, p, where)
    return p.items
