"""The operating system of another host beside a phase: what ``os_stats`` records on this machine
(CPU split, the disk under PGDATA, memory, the CPU of the postgres processes), for a server pglab
made on a host (``postgres/on_host.py``).

Every interval one SSH command reads /proc there (``SNAPSHOT``: the ``cpu`` line of /proc/stat,
/proc/diskstats, /proc/meminfo and the ``stat`` of the postmaster and its children) and the rows
are made here by ``os_stats``'s own arithmetic; ``t`` is this machine's clock when the snapshot
came back, as for every other sampler. pgbench does not run there: no pgbench column; the
others' CPU there is the host's busy CPU time less the postgres processes' (pglab's snapshot
command among it, a few milliseconds a second).
"""

from __future__ import annotations

from typing import Any

from pglab.errors import HostError
from pglab.hosts.proc import cpu_seconds, process_cpu_seconds
from pglab.hosts.ssh import Remote
from pglab.telemetry.base import SamplerOff, Table
from pglab.telemetry.os_stats import (
    cpu_row,
    disk_row,
    mem_row,
    os_tables,
    parse_diskstats,
    parse_meminfo,
)

# $0: the data directory. Parts are separated by lines "@@"; the first part is the clock tick.
SNAPSHOT = (
    "getconf CLK_TCK; echo @@; head -n 1 /proc/stat; echo @@; cat /proc/diskstats; echo @@; "
    "cat /proc/meminfo; echo @@; "
    'pm=$(head -n 1 "$0/postmaster.pid" 2>/dev/null); '
    'if [ -n "$pm" ]; then for p in "$pm" $(cat /proc/"$pm"/task/*/children 2>/dev/null); '
    'do cat /proc/"$p"/stat 2>/dev/null; done; fi; exit 0'  # a backend may exit as it is read
)
BUSY_STATES = ("user", "nice", "system")  # the CPU time processes used (as os_stats counts it)
# consecutive snapshots that may fail (a slow or dropped SSH exchange) before the sampler is off
MISSES = 3


Snapshot = tuple[dict[str, float], dict[str, list[Any]], dict[str, float], dict[int, float]]


def parse_snapshot(text: str) -> Snapshot:
    """(cpu times in seconds as ``cpu_row`` takes them, diskstats, meminfo in MiB, the CPU
    seconds of each postgres process by pid) from one ``SNAPSHOT``."""
    parts = text.split("@@\n")
    if len(parts) != 5:
        raise ValueError(f"unexpected snapshot: {text[:200]!r}")
    tick = float(parts[0].strip() or 100)
    cpu = cpu_seconds(parts[1], tick)
    procs = dict(
        found
        for line in parts[4].splitlines()
        if (found := process_cpu_seconds(line, tick)) is not None
    )
    return cpu, parse_diskstats(parts[2]), parse_meminfo(parts[3]), procs


class HostOsSampler:
    name = "os"

    def __init__(self, remote: Remote, datadir: str, interval: float = 1.0):
        self.remote = remote
        self.datadir = datadir
        self.interval = interval
        self.tables = os_tables()
        self.notes = Table(["sampler", "note"])
        self._device: str | None = None
        self._last: tuple[float, Snapshot] | None = None
        self._misses = 0

    def _snapshot(self) -> Snapshot:
        try:
            out = self.remote.run(["sh", "-c", SNAPSHOT, self.datadir], timeout=10)
            return parse_snapshot(out.stdout)
        except (HostError, ValueError) as exc:
            raise SamplerOff(f"cannot read /proc on {self.remote.spec.name}: {exc}") from exc

    def start(self, t: float) -> None:
        found = self.remote.run(
            ["findmnt", "-n", "-o", "MAJ:MIN", "--target", self.datadir], check=False
        ).stdout.strip()
        snap = self._snapshot()
        if found in snap[1]:
            self._device = found
        else:
            self.notes.add(
                "os",
                f"no block device statistics for {self.datadir} on "
                f"{self.remote.spec.name} (device {found or 'unknown'})",
            )
        self._last = (t, snap)

    def sample(self, t: float) -> None:
        assert self._last is not None
        last_t, (last_cpu, last_disks, _, last_procs) = self._last
        try:
            snap = self._snapshot()
        except SamplerOff as exc:
            self._misses += 1
            if self._misses >= MISSES:
                raise
            self.notes.add("os", f"a sample missed: {exc}")
            return  # the next one spans both intervals
        self._misses = 0
        cpu, disks, mem, procs = snap
        seconds = max(t - last_t, 1e-3)
        self.tables["os.cpu"].add(*cpu_row(t, last_cpu, cpu))
        dev = self._device
        if dev is not None and dev in disks and dev in last_disks:
            self.tables["os.disk"].add(*disk_row(t, seconds, last_disks[dev], disks[dev]))
        self.tables["os.mem"].add(*mem_row(t, mem))
        # a process seen for the first time counts from zero: it started in this interval
        used = max(0.0, sum(v - last_procs.get(pid, 0.0) for pid, v in procs.items()))
        busy = sum(max(0.0, cpu[k] - last_cpu.get(k, 0.0)) for k in BUSY_STATES if k in cpu)
        others = 100.0 * max(0.0, busy - used) / seconds
        self.tables["os.procs"].add(t, None, 100.0 * used / seconds, others)
        self._last = (t, snap)

    def finish(self, t: float) -> dict[str, Table]:
        out = {kind: table for kind, table in self.tables.items() if table.rows}
        if self.notes.rows:
            out["os.notes"] = self.notes
        return out
