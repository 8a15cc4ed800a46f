"""What a run asks of the OS under its server (``[os]``, read by ``os_table``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from pglab.stored_spec import OsJson
from pglab.units import guc_bytes, size_text

QUEUE_KEYS = ("io_scheduler", "nr_requests", "read_ahead_kb")  # the order they are written in


@dataclass(frozen=True)
class OsSpec:
    """The OS state a run asks for; None (or empty) leaves that part as it is."""

    sysctl: tuple[tuple[str, str], ...] = ()  # name -> the text written to /proc/sys
    io_scheduler: str | None = None
    read_ahead_kb: int | None = None
    nr_requests: int | None = None
    transparent_hugepages: str | None = None
    drop_caches: bool = False
    huge_pages: bool = False  # vm.nr_hugepages sized from shared_buffers, huge_pages = on
    limits: tuple[tuple[str, int], ...] = ()  # nofile, nproc: soft limits of server and pgbench
    cpus: int | None = None  # the server confined to the first N CPUs pglab may use
    client_cpus: int | None = None  # pgbench/sysbench to the last N (default: the others)
    memory: int | None = None  # bytes: the server's cgroup memory limit, page cache included

    @property
    def is_default(self) -> bool:
        return self == OsSpec()

    @property
    def changes_kernel(self) -> bool:
        """Whether the run writes kernel state (drop_caches alone puts nothing back; the CPUs
        are the affinity of the server's and pgbench's processes, which end with them; the
        memory limit is a cgroup of the run's own, ``run/memory_limit``)."""
        return not replace(
            self, drop_caches=False, cpus=None, client_cpus=None, memory=None
        ).is_default

    def queue(self) -> dict[str, str]:
        """The block device's queue files to write, in order (the scheduler first: a new
        scheduler resets nr_requests)."""
        names = {"io_scheduler": "scheduler"}
        return {
            names.get(k, k): str(getattr(self, k))
            for k in QUEUE_KEYS
            if getattr(self, k) is not None
        }

    def label(self, axes: Iterable[str] = ()) -> str:
        """What the point asks of the OS but its ``axes`` (os.KEY, os.sysctl.NAME), as the
        plan shows it ("" for nothing)."""
        skip = {a.removeprefix("os.").removeprefix("sysctl.") for a in axes}
        words = [f"{k}={v}" for k, v in self.sysctl if k not in skip]
        words += [
            f"{k}={getattr(self, k)}"
            for k in (*QUEUE_KEYS, "transparent_hugepages")
            if getattr(self, k) is not None and k not in skip
        ]
        words += [f"{k}={v}" for k, v in self.limits]
        words += [
            f"{k}={getattr(self, k)}"
            for k in ("cpus", "client_cpus")
            if getattr(self, k) is not None and k not in skip
        ]
        if self.memory is not None and "memory" not in skip:
            words.append(f"memory={size_text(self.memory)}")
        flags = [k for k in ("drop_caches", "huge_pages") if getattr(self, k)]
        return ", ".join(words + flags)

    def identity(self) -> OsJson:
        """What the run asks, as stored: only what it asks (no None, empty, False or 0)."""
        out: OsJson = {}
        if self.sysctl:
            out["sysctl"] = dict(self.sysctl)
        if self.io_scheduler is not None:
            out["io_scheduler"] = self.io_scheduler
        if self.read_ahead_kb:
            out["read_ahead_kb"] = self.read_ahead_kb
        if self.nr_requests:
            out["nr_requests"] = self.nr_requests
        if self.transparent_hugepages is not None:
            out["transparent_hugepages"] = self.transparent_hugepages
        if self.drop_caches:
            out["drop_caches"] = True
        if self.huge_pages:
            out["huge_pages"] = True
        if self.limits:
            out["limits"] = dict(self.limits)
        if self.cpus is not None:
            out["cpus"] = self.cpus
        if self.client_cpus is not None:
            out["client_cpus"] = self.client_cpus
        if self.memory is not None:
            out["memory"] = self.memory
        return out


def huge_pages_for(shared_buffers: str | None) -> int:
    """The 2 MB (or the kernel's size of) huge pages a server with ``shared_buffers`` maps:
    its buffers and a tenth more, and 64 MB for the rest of its shared memory, rounded up."""
    text = (shared_buffers or "128MB").strip()
    found = guc_bytes(text, "8kB")  # a bare number counts in 8kB blocks
    if found is None:
        raise ValueError(f"shared_buffers = {text!r}: not an amount of memory")
    size = int(found)
    page = 2 * 2**20
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Hugepagesize:"):
            page = int(line.split()[1]) * 1024
    return -(-(int(size * 1.1) + 64 * 2**20) // page)
