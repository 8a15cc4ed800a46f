"""What a host's /proc and cgroups say of its CPU, read as text (over SSH, or here with the same
commands): the CPU times of the whole host, of one process, and how many CPUs the processes of a
session may use (``nproc``, lowered by a cgroup's CPU quota: a container's or a systemd slice's
limit, which /proc/stat does not show).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")

# the CPUs this session's processes may use: nproc, then the quota of its cgroup, v1 ("v1 QUOTA
# PERIOD", QUOTA -1 when none) or v2 ("v2 QUOTA PERIOD", QUOTA "max" when none), then its
# cpu.stat (nr_periods, nr_throttled: how often the quota held it back)
CPUS_PROBE = (
    'nproc; while IFS=: read -r _ ctl path; do case ",$ctl," in '
    "*,cpu,*) for d in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct; do "
    'if [ -r "$d$path/cpu.cfs_quota_us" ]; then echo "v1 $(cat "$d$path/cpu.cfs_quota_us") '
    '$(cat "$d$path/cpu.cfs_period_us")"; cat "$d$path/cpu.stat"; break; fi; done;; '
    ',,) if [ -r "/sys/fs/cgroup$path/cpu.max" ]; then '
    'echo "v2 $(cat "/sys/fs/cgroup$path/cpu.max")"; cat "/sys/fs/cgroup$path/cpu.stat"; fi;; '
    "esac; done < /proc/self/cgroup; exit 0"
)


@dataclass(frozen=True)
class CpuLimits:
    """What ``CPUS_PROBE`` said: the CPUs a session may use, and its cgroup's counts of quota
    periods and of those in which it was throttled (None without a quota's statistics)."""

    cpus: float
    periods: int | None = None
    throttled: int | None = None

    def throttled_pct(self, before: CpuLimits) -> float | None:
        """Percent of the quota periods between ``before`` and this reading that throttled."""
        if None in (self.periods, self.throttled, before.periods, before.throttled):
            return None
        periods = (self.periods or 0) - (before.periods or 0)
        throttled = (self.throttled or 0) - (before.throttled or 0)
        return round(100.0 * throttled / periods, 1) if periods > 0 else None


def cpu_limits(probe: str) -> CpuLimits:
    """``CPUS_PROBE``'s output read: its ``nproc``, lowered where its cgroup has a CPU quota."""
    lines = probe.split("\n")
    cpus = float(lines[0].strip() or 1)
    stat: dict[str, int] = {}
    for line in lines[1:]:
        words = line.split()
        if len(words) == 3 and words[0] in ("v1", "v2") and words[1] not in ("-1", "max"):
            with contextlib.suppress(ValueError, ZeroDivisionError):
                cpus = min(cpus, int(words[1]) / int(words[2]))
        elif len(words) == 2 and words[1].isdigit():
            stat[words[0]] = int(words[1])
    return CpuLimits(cpus, stat.get("nr_periods"), stat.get("nr_throttled"))


def cpu_seconds(stat_line: str, tick: float) -> dict[str, float]:
    """The ``cpu`` line of /proc/stat as seconds in each state."""
    words = stat_line.split()
    return {k: int(v) / tick for k, v in zip(CPU_FIELDS, words[1:], strict=False)}


def busy_pct(before: dict[str, float], after: dict[str, float]) -> float:
    """Percent of all the host's CPU time not idle (nor waiting for IO) between two readings."""
    delta = {k: max(0.0, after[k] - before.get(k, 0.0)) for k in after}
    total = sum(delta.values())
    idle = delta.get("idle", 0.0) + delta.get("iowait", 0.0)
    return 100.0 * (total - idle) / total if total > 0 else 0.0


def process_cpu_seconds(stat_line: str, tick: float) -> tuple[int, float] | None:
    """(pid, user + system CPU seconds of all its threads) from a /proc/PID/stat line."""
    after = stat_line.rpartition(")")[2].split()  # the command may hold spaces and ")"
    if len(after) <= 12:
        return None
    return int(stat_line.split()[0]), (int(after[11]) + int(after[12])) / tick


def descendants(pid: int, proc: str = "/proc") -> list[int] | None:
    """The processes below ``pid`` (children, theirs, ...) from the kernel's per-thread
    ``children`` lists: a file read per process, where psutil's ``children()`` reads the
    status of every process of the machine (20 ms each second on a busy host). None where the
    kernel has no such lists (CONFIG_PROC_CHILDREN) or ``pid`` is gone."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            with open(f"{proc}/{parent}/task/{parent}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except FileNotFoundError:
            if parent == pid:
                return None
            continue  # a child that ended meanwhile
        except OSError:
            return None
        found.extend(kids)
        todo.extend(kids)
    return found


def pid_cpu_seconds(pids: list[int], tick: float, proc: str = "/proc") -> dict[int, float]:
    """pid -> user + system CPU seconds, read from each /proc/PID/stat (a process gone
    meanwhile is left out)."""
    out = {}
    for pid in pids:
        try:
            with open(f"{proc}/{pid}/stat") as f:
                read = process_cpu_seconds(f.read(), tick)
        except OSError:
            continue
        if read is not None:
            out[read[0]] = read[1]
    return out
