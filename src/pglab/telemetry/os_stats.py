"""The operating system beside a phase: CPU, the disk under PGDATA, memory, who used the CPU.

Every second: CPU time split (``psutil.cpu_times``, from /proc/stat), the block device holding
PGDATA (and pg_wal when it is elsewhere) from /proc/diskstats (fields as in the kernel's
iostats.rst; sectors are 512 bytes), memory gauges from /proc/meminfo, and the CPU used by
pgbench, by the postgres processes and by every other process of the machine (``others``: each
/proc/PID/stat, % of one core). A run whose pgbench used most of a core (> 90 %) is
client-bound: its TPS says more about the load generator than the server. ``others`` is what
neither the server, the load generator nor pglab used (pglab: this process and its descendants;
kernel threads left out), the machine's busy CPU time less theirs (``others_cpu``): a
neighbour's job that took CPU from the run, a "busy machine" when it passes
``BUSY_MACHINE_PCT`` of a core.

The arithmetic is in pure functions of two snapshots (``cpu_row``, ``disk_row``) so that it is
tested on recorded /proc contents; the sampler only reads and keeps rows.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import psutil

from pglab.hosts.proc import pid_cpu_seconds
from pglab.postgres.fingerprint import mount_of
from pglab.telemetry.base import SamplerOff, Table

TICKS_PER_S = os.sysconf("SC_CLK_TCK")  # what /proc/PID/stat counts CPU time in

CPU_COLUMNS = ["t", "user_pct", "system_pct", "iowait_pct", "steal_pct", "idle_pct"]
DISK_COLUMNS = [
    "t",
    "device",
    "read_iops",
    "write_iops",
    "read_mb_s",
    "write_mb_s",
    "await_ms",
    "util_pct",
    "queue",
]
MEM_COLUMNS = ["t", "dirty_mb", "writeback_mb", "cached_mb", "free_mb", "available_mb"]
PROCS_COLUMNS = ["t", "pgbench_cpu_pct", "postgres_cpu_pct", "others_cpu_pct"]
CLIENT_BOUND_PCT = 90.0
BUSY_MACHINE_PCT = 20.0  # others' CPU (% of one core) beyond which a run's machine was busy
KTHREADD = 2  # the parent of every kernel thread


# -- pure arithmetic ---------------------------------------------------------------------------


def cpu_row(t: float, before: dict[str, float], after: dict[str, float]) -> list[Any]:
    """Percent of all CPUs' time in each state between two ``cpu_times()._asdict()``."""
    delta = {k: max(0.0, after[k] - before[k]) for k in after}
    total = sum(delta.values()) or 1.0
    pct = {k: 100.0 * v / total for k, v in delta.items()}
    user = pct.get("user", 0.0) + pct.get("nice", 0.0)
    system = pct.get("system", 0.0) + pct.get("irq", 0.0) + pct.get("softirq", 0.0)
    return [t, user, system, pct.get("iowait", 0.0), pct.get("steal", 0.0), pct.get("idle", 0.0)]


def parse_diskstats(text: str) -> dict[str, list[int]]:
    """``major:minor`` -> [name, reads, ..., the kernel's counters as ints] of /proc/diskstats."""
    out: dict[str, list[Any]] = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 14:
            out[f"{f[0]}:{f[1]}"] = [f[2], *(int(x) for x in f[3:14])]
    return out


def disk_row(t: float, seconds: float, before: list[Any], after: list[Any]) -> list[Any]:
    """One device's IO over ``seconds`` from two /proc/diskstats entries (``parse_diskstats``).

    Entry: name, reads, reads merged, sectors read, ms reading, writes, writes merged, sectors
    written, ms writing, IOs in progress, ms doing IO, weighted ms doing IO.
    """
    d = [a - b for a, b in zip(after[1:], before[1:], strict=True)]
    reads, sectors_r, ms_r, writes, sectors_w, ms_w = d[0], d[2], d[3], d[4], d[6], d[7]
    ios = reads + writes
    return [
        t,
        after[0],
        reads / seconds,
        writes / seconds,
        sectors_r * 512 / 2**20 / seconds,
        sectors_w * 512 / 2**20 / seconds,
        (ms_r + ms_w) / ios if ios else None,
        min(100.0, d[9] / (seconds * 10)),  # ms busy per s -> %
        d[10] / (seconds * 1000),
    ]


class Proc(NamedTuple):
    """A process as ``scan_processes`` read it: its parent, its own CPU seconds (user + system,
    all its threads) and those of its children it reaped (their whole lives)."""

    ppid: int
    cpu: float
    reaped: float


def scan_processes(proc: Path, tick: float = TICKS_PER_S) -> dict[int, Proc]:
    """pid -> ``Proc`` of every process in ``proc`` (one gone while it is read is left out)."""
    out: dict[int, Proc] = {}
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"{entry.path}/stat") as stat:
                line = stat.read()
        except OSError:
            continue
        f = line.rpartition(")")[2].split()  # the command may hold spaces and ")"
        if len(f) > 14:
            own, reaped = int(f[11]) + int(f[12]), int(f[13]) + int(f[14])
            out[int(entry.name)] = Proc(int(f[1]), own / tick, reaped / tick)
    return out


def _family(procs: Mapping[int, Proc], roots: Collection[int]) -> set[int]:
    """``roots`` and every process that descends from one of them in ``procs``."""
    children: dict[int, list[int]] = {}
    for pid, p in procs.items():
        children.setdefault(p.ppid, []).append(pid)
    found = set(roots)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def others_cpu(
    seconds: float,
    busy: float,
    before: Mapping[int, Proc],
    after: Mapping[int, Proc],
    ours: Collection[int],
) -> float:
    """% of one core that processes other than ``ours``, their descendants and the kernel's
    threads used between two ``scan_processes``: the CPU seconds all processes used (``busy``:
    user, nice and system time of /proc/stat, so that a process that came and went between two
    readings counts) less those of ours. Ours count their own time and that of the children they
    reaped meanwhile (a backend that lived between two readings is the postmaster's), less what
    an exited child of theirs was already counted for; one seen for the first time counts from
    zero (it started in the interval)."""
    roots = [*ours, KTHREADD]
    now, then = _family(after, roots), _family(before, roots)
    used = 0.0
    for pid in now & after.keys():
        p, b = after[pid], before.get(pid)
        used += p.cpu + p.reaped - (b.cpu + b.reaped if b is not None else 0.0)
    for pid in then - after.keys():  # exited: its parent's reaped time holds its whole life
        b = before.get(pid)
        if b is not None and b.ppid in now:
            used -= b.cpu + b.reaped
    return 100.0 * max(0.0, busy - used) / seconds


def parse_meminfo(text: str) -> dict[str, float]:
    """/proc/meminfo in MiB."""
    out = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[name] = int(parts[0]) / 1024
    return out


def mem_row(t: float, mem: dict[str, float]) -> list[Any]:
    return [
        t,
        mem.get("Dirty"),
        mem.get("Writeback"),
        mem.get("Cached"),
        mem.get("MemFree"),
        mem.get("MemAvailable"),
    ]


# -- the sampler -------------------------------------------------------------------------------


def os_tables() -> dict[str, Table]:
    """The OS sampler's empty tables (also a server host's, ``host_os``)."""
    return {
        "os.cpu": Table(list(CPU_COLUMNS)),
        "os.disk": Table(list(DISK_COLUMNS)),
        "os.mem": Table(list(MEM_COLUMNS)),
        "os.procs": Table(list(PROCS_COLUMNS)),
    }


class OsSampler:
    name = "os"

    def __init__(
        self,
        paths: list[Path],
        pgbench_pids: Callable[[], list[int]],
        postgres_pids: Callable[[], list[int]],
        interval: float = 1.0,
        proc: Path = Path("/proc"),
    ):
        self.interval = interval
        self.paths = paths
        self._pgbench_pids, self._postgres_pids = pgbench_pids, postgres_pids
        self._proc = proc
        self.tables = os_tables()
        self.notes = Table(["sampler", "note"])
        self._devices: list[str] = []
        self._last_t = 0.0
        self._cpu: dict[str, float] = {}
        self._disk: dict[str, list[Any]] = {}
        self._proc_cpu: dict[int, float] = {}
        self._all: dict[int, Proc] = {}

    def _read(self, name: str) -> str:
        return (self._proc / name).read_text()

    def start(self, t: float) -> None:
        try:
            disks = parse_diskstats(self._read("diskstats"))
        except OSError as exc:
            raise SamplerOff(f"cannot read /proc: {exc}") from exc
        for path in self.paths:
            mount = mount_of(path)
            mm = mount.get("block_device") or mount.get("major_minor")
            if mm in disks and mm not in self._devices:
                self._devices.append(mm)
            elif mm not in disks:
                self.notes.add("os", f"no block device statistics for {path} (device {mm})")
        self._last_t = t
        self._cpu = psutil.cpu_times()._asdict()
        self._disk = disks
        self._proc_cpu = self._cpu_by_pid(self._pgbench_pids() + self._postgres_pids())
        self._all = scan_processes(self._proc)

    def _cpu_by_pid(self, pids: list[int]) -> dict[int, float]:
        return pid_cpu_seconds(pids, TICKS_PER_S, str(self._proc))

    def sample(self, t: float) -> None:
        seconds = max(t - self._last_t, 1e-3)
        cpu = psutil.cpu_times()._asdict()
        self.tables["os.cpu"].add(*cpu_row(t, self._cpu, cpu))
        disks = parse_diskstats(self._read("diskstats"))
        for mm in self._devices:
            if mm in disks and mm in self._disk:
                self.tables["os.disk"].add(*disk_row(t, seconds, self._disk[mm], disks[mm]))
        self.tables["os.mem"].add(*mem_row(t, parse_meminfo(self._read("meminfo"))))
        pgbench, postgres = self._pgbench_pids(), self._postgres_pids()
        now = self._cpu_by_pid(pgbench + postgres)

        def used(pids: list[int]) -> float:
            # a process seen for the first time counts from zero: it started in this interval
            total = sum(now[p] - self._proc_cpu.get(p, 0.0) for p in pids if p in now)
            return 100.0 * max(0.0, total) / seconds

        every = scan_processes(self._proc)
        busy = sum(cpu[k] - self._cpu.get(k, 0.0) for k in ("user", "nice", "system"))
        others = others_cpu(seconds, busy, self._all, every, [os.getpid(), *pgbench, *postgres])
        self.tables["os.procs"].add(t, used(pgbench), used(postgres), others)
        self._cpu, self._disk, self._proc_cpu, self._last_t = cpu, disks, now, t
        self._all = every

    def finish(self, t: float) -> dict[str, Table]:
        out = {kind: table for kind, table in self.tables.items() if table.rows}
        if self.notes.rows:
            out["os.notes"] = self.notes
        return out


def summarize(tables: Mapping[str, Table]) -> dict[str, float]:
    """Means over the phase; keys are absent when their table is (never zeros for no data)."""
    out: dict[str, float] = {}

    def mean(kind: str, column: str, key: str) -> None:
        table = tables.get(kind)
        if table is None or not table.rows or column not in table.columns:
            return
        i = table.columns.index(column)
        values = [r[i] for r in table.rows if r[i] is not None]
        if values:
            out[key] = sum(values) / len(values)

    for col in ("user_pct", "system_pct", "iowait_pct", "steal_pct"):
        mean("os.cpu", col, f"cpu_{col}")
    for col in ("read_mb_s", "write_mb_s", "util_pct"):
        mean("os.disk", col, f"disk_{col}")
    mean("os.procs", "pgbench_cpu_pct", "pgbench_cpu_pct")
    mean("os.procs", "postgres_cpu_pct", "postgres_cpu_pct")
    mean("os.procs", "others_cpu_pct", "others_cpu_pct")  # absent in runs stored before it
    if "pgbench_cpu_pct" in out:
        out["client_bound"] = 1.0 if out["pgbench_cpu_pct"] > CLIENT_BOUND_PCT else 0.0
    return out
