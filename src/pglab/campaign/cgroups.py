"""Where ``[os] memory`` can make the server's memory cgroup on this machine (read, never
written, here: the group is made, filled and removed by ``run/memory_limit``).

cgroup v2 (one hierarchy, ``cgroup2`` mounted): a group whose ``cgroup.subtree_control``
enables the memory controller takes children with a ``memory.max``; pglab's own group cannot
(a v2 group with processes has no controllers for its children), so the group is made beside
it, under its parent (or under the hierarchy's root when pglab runs there). cgroup v1 (a
``memory`` hierarchy of its own, as in many containers): a child of pglab's own memory group,
whose ``memory.limit_in_bytes`` counts the page cache its processes read in. Either way the
place is found from /proc/self/cgroup and /proc/self/mountinfo, so a container whose
hierarchy is mounted at its own group is handled as the host's."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
OWN = Path("/proc/self/cgroup")


@dataclass(frozen=True)
class Place:
    """A directory under which a memory cgroup can be made, and how its files are named."""

    parent: Path  # the new group is a directory made here
    version: int  # 1 or 2
    home: Path  # pglab's own group: where the server's processes go back to

    @property
    def limit_file(self) -> str:
        return "memory.limit_in_bytes" if self.version == 1 else "memory.max"

    @property
    def peak_file(self) -> str:
        return "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"


def _mounts(mountinfo: str) -> list[tuple[str, Path, str, set[str]]]:
    """The cgroup mounts: (root inside the hierarchy, mount point, fstype, super options)."""
    out = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        out.append((fields[3], Path(fields[4]), tail[0], set(tail[2].split(","))))
    return out


def _own_groups(text: str) -> dict[str, str]:
    """pglab's groups, by controller ("" for the v2 hierarchy): /proc/self/cgroup's paths."""
    out = {}
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            out[name] = path
    return out


def _under(mount: Path, root: str, path: str) -> Path | None:
    """The directory of the group ``path`` in a hierarchy mounted at ``mount`` from ``root``."""
    rel = os.path.relpath(path, root) if root != "/" else path.lstrip("/")
    if rel.startswith(".."):
        return None  # the group is not inside what this mount shows
    return mount / rel if rel != "." else mount


def place(mountinfo: str | None = None, own_text: str | None = None) -> Place | str:
    """Where the server's memory group can be made, or why none can (a sentence); from the
    texts of /proc/self/mountinfo and /proc/self/cgroup (read when not given)."""
    try:
        mounts = _mounts(MOUNTINFO.read_text() if mountinfo is None else mountinfo)
        own = _own_groups(OWN.read_text() if own_text is None else own_text)
    except (OSError, ValueError) as exc:
        return f"the kernel's cgroup files cannot be read ({exc})"
    for root, mount, fstype, opts in mounts:
        if fstype == "cgroup" and "memory" in opts and "memory" in own:
            home = _under(mount, root, own["memory"])
            if home is not None and (home / "memory.limit_in_bytes").exists():
                if not os.access(home, os.W_OK):
                    return f"pglab cannot make a group in {home} (cgroup v1): run it as root"
                return Place(home, 1, home)
    for root, mount, fstype, _opts in mounts:
        if fstype != "cgroup2" or "" not in own:
            continue
        home = _under(mount, root, own[""])
        if home is None:
            continue
        parent = home if home == mount else home.parent  # the root group may have children
        if "memory" not in _read(parent / "cgroup.subtree_control").split():
            return (
                f"the memory controller is not enabled for the groups under {parent} "
                "(cgroup v2: its cgroup.subtree_control lacks memory)"
            )
        if not os.access(parent, os.W_OK):
            return f"pglab cannot make a group in {parent} (cgroup v2): run it as root"
        return Place(parent, 2, home)
    return (
        "no memory cgroup controller is mounted here (neither cgroup v1's memory "
        "hierarchy nor cgroup v2 with the memory controller)"
    )


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
