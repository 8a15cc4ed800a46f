"""How an `[os]` table's kernel settings are checked before anything runs (issue 39, first part).

Used by ``os_table`` when the campaign file is read. A sysctl name
must exist in the kernel's own /proc/sys tree (with the closest existing name for a typo), its
value must be something the kernel can be given (a number with an optional byte unit for the
*_bytes settings, or whitespace-separated integers), transparent_hugepages one of the modes
the kernel offers, an io_scheduler one the block device offers, and the settings writable
only by root."""

from __future__ import annotations

import difflib
import functools
import os
import re
import resource
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pglab.campaign import cgroups
from pglab.campaign.checks import Problems
from pglab.units import size_text

PROC_SYS = Path("/proc/sys")
THP_MODES = ("always", "madvise", "never")
_BYTES = re.compile(r"^\s*(\d+)\s*(B|kB|KB|MB|GB)?\s*$")
_UNIT = {None: 1, "B": 1, "kB": 1024, "KB": 1024, "MB": 1024**2, "GB": 1024**3}
_INTS = re.compile(r"^\s*-?\d+(\s+-?\d+)*\s*$")


@functools.cache
def sysctl_names(root: Path = PROC_SYS) -> list[str]:
    """Every sysctl under root, in dotted form (vm.dirty_bytes), from the kernel's own tree."""
    names = []
    for dirpath, _dirs, files in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        names += [".".join((*rel.parts, f)) for f in files]
    return sorted(names)


def sysctl_value(name: str, value: Any) -> str | None:
    """The text to write for a sysctl value, or None when the kernel could not be given it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        return None
    if name.endswith("_bytes"):
        m = _BYTES.match(value)
        return str(int(m.group(1)) * _UNIT[m.group(2)]) if m else None
    return " ".join(value.split()) if _INTS.match(value) else None


def check_sysctls(table: Any, p: Problems, where: str, root: Path = PROC_SYS) -> dict[str, str]:
    """The sysctls of an [os] sysctl table as name → text to write; problems said in p."""
    if not isinstance(table, dict):
        p.add(where, 'sysctl must be a table, e.g. sysctl = {"vm.swappiness" = 10}')
        return {}
    known = set(sysctl_names(root))
    out: dict[str, str] = {}
    for name, value in table.items():
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f' — did you mean "{close[0]}"?' if close else ""
            p.add(where, f'sysctl "{name}" does not exist in {root}{hint}')
            continue
        text = sysctl_value(name, value)
        if text is None:
            unit = (
                " (bytes: an integer with an optional B/kB/MB/GB)"
                if name.endswith("_bytes")
                else " (integers separated by spaces)"
            )
            p.add(where, f"sysctl {name} = {value!r}: not a value the kernel takes{unit}")
            continue
        out[name] = text
    return out


def usable_cpus() -> list[int]:
    """The CPUs the kernel lets this process (and so the servers it starts) run on."""
    return sorted(os.sched_getaffinity(0))


def check_cpus(key: str, value: Any, p: Problems, where: str) -> None:
    """cpus / client_cpus: at most the CPUs the kernel lets pglab use (the range of the
    number itself is the declarations')."""
    usable = usable_cpus()
    if isinstance(value, int) and value > len(usable):
        p.add(
            where,
            f"{key} = {value}: the kernel lets pglab use {len(usable)} CPU"
            f"{'s' if len(usable) != 1 else ''} here ({cpu_list(usable)}): ask for 1 to "
            f"{len(usable)}",
        )


CAP_SYS_RESOURCE = 24  # linux/capability.h: raise hard limits, set any limit


def can_raise_limits(status: str | None = None) -> bool:
    """Whether pglab may set hard resource limits (CAP_SYS_RESOURCE in its effective set, as
    root has): from /proc/self/status's CapEff (read when not given)."""
    try:
        text = Path("/proc/self/status").read_text() if status is None else status
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> CAP_SYS_RESOURCE & 1)
    return False


def limit_ceiling(name: str, hard: int) -> int:
    """The most a limit may be set to: the kernel's (nofile: fs.nr_open) when pglab may set
    hard limits, else its own hard limit."""
    infinite = hard == resource.RLIM_INFINITY
    if can_raise_limits():
        if name == "nofile":
            return int((PROC_SYS / "fs" / "nr_open").read_text())
        return 2**31 - 1 if infinite else max(hard, 2**22)  # nproc: more than pid_max's 2**22
    return 2**31 - 1 if infinite else hard


MEMORY_FLOOR = 32 * 2**20  # below this no server starts (shared memory, a few backends)


def check_memory(value: Any, p: Problems, where: str) -> None:
    """memory: a cgroup can be made here (``cgroups.place``), and the limit is one a server
    can start under."""
    if isinstance(value, int) and value < MEMORY_FLOOR:
        p.add(
            where, f"memory = {size_text(value)} is too small for a server: give it 32MB at least"
        )
    found = cgroups.place()
    if isinstance(found, str):
        p.add(where, f"memory: the kernel offers no memory cgroup for the server here: {found}")


def cpu_list(cpus: Iterable[int]) -> str:
    """CPU numbers as the kernel writes a list of them: 0-3,6."""
    runs: list[list[int]] = []
    for c in sorted(cpus):
        if runs and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def check_root(p: Problems, where: str) -> None:
    """[os] writes /proc/sys and /sys: root only."""
    if os.geteuid() != 0:
        p.add(where, "writing kernel settings needs root: run pglab as root, or leave [os] out")


def schedulers(text: str) -> tuple[list[str], str | None]:
    """A /sys/block/*/queue/scheduler line ("none [mq-deadline] kyber bfq") as the schedulers
    the device offers and the one in use (the bracketed one)."""
    words = text.split()
    current = next((w[1:-1] for w in words if w.startswith("[") and w.endswith("]")), None)
    return [w.strip("[]") for w in words], current


def check_scheduler(device: str, value: Any, p: Problems, where: str) -> str | None:
    """An io_scheduler the block device offers (read from its queue), or None with the
    problem said."""
    path = Path("/sys/block") / device / "queue" / "scheduler"
    try:
        offered, _current = schedulers(path.read_text())
    except OSError:
        p.add(where, f"io_scheduler: block device {device} has no {path}")
        return None
    if value not in offered:
        p.add(where, f"io_scheduler = {value!r}: {device} offers {', '.join(offered)}")
        return None
    return str(value)
