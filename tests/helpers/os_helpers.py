"""The kernel state [os] campaigns may change, read byte for byte: the sysctls they set (and
their counterparts), transparent huge pages, and every loop device's queue."""

from __future__ import annotations

from pathlib import Path

FILES = [
    "/proc/sys/vm/dirty_background_bytes", "/proc/sys/vm/dirty_background_ratio",
    "/proc/sys/vm/dirty_bytes", "/proc/sys/vm/dirty_ratio", "/proc/sys/vm/swappiness",
    "/proc/sys/vm/nr_hugepages",
    "/sys/kernel/mm/transparent_hugepage/enabled",
]  # fmt: skip


def kernel_state() -> dict[str, bytes]:
    paths = [Path(f) for f in FILES]
    for queue in sorted(Path("/sys/block").glob("loop*/queue")):
        paths += [queue / n for n in ("scheduler", "read_ahead_kb", "nr_requests")]
    return {str(p): p.read_bytes() for p in paths if p.exists()}
