"""The OS of a server's host from /proc snapshots read over SSH (``telemetry/host_os.py``): the
snapshot command run here by sh, and its parsing on recorded text."""

from __future__ import annotations

import os
import subprocess

from pglab.telemetry.host_os import SNAPSHOT, parse_snapshot
from pglab.telemetry.os_stats import cpu_row

RECORDED = """100
@@
cpu  1000 0 500 8000 100 0 20 0 0 0
@@
 259       0 nvme0n1 2000 0 160000 900 3000 0 240000 1500 0 2000 2400 0 0 0 0
@@
MemTotal:       24000000 kB
MemFree:        12000000 kB
MemAvailable:   20000000 kB
Cached:          4000000 kB
Dirty:              2048 kB
Writeback:             0 kB
@@
4242 (postgres) S 1 4242 4242 0 -1 4194560 500 0 0 0 150 50 0 0 20 0 1 0 100 0 0
4250 (postgres: pglab bench 10.0.0.6(5000) idle) S 4242 4242 4242 0 -1 0 0 0 0 0 300 100 0
"""


def test_a_recorded_snapshot_is_parsed_into_what_os_stats_computes_with() -> None:
    cpu, disks, mem, procs = parse_snapshot(RECORDED)
    assert cpu["user"] == 10.0 and cpu["idle"] == 80.0 and cpu["softirq"] == 0.2
    assert disks["259:0"][0] == "nvme0n1" and disks["259:0"][3] == 160000
    assert mem["Dirty"] == 2.0 and mem["MemAvailable"] > mem["MemFree"]
    # utime + stime in seconds, also for a command line with spaces and parentheses
    assert procs == {4242: 2.0, 4250: 4.0}
    later = dict(cpu, user=cpu["user"] + 1.0, idle=cpu["idle"] + 1.0)
    assert cpu_row(1.0, cpu, later)[1] == 50.0


def test_the_snapshot_command_runs_under_plain_sh_here() -> None:
    """The same command pglab runs on a host, run here on a directory with a postmaster.pid
    naming this process: every part present, this process's CPU time in it."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/postmaster.pid", "w") as f:
            f.write(f"{os.getpid()}\n{d}\n")
        out = subprocess.run(["sh", "-c", SNAPSHOT, d], capture_output=True, text=True,
                             check=True).stdout  # fmt: skip
    cpu, disks, mem, procs = parse_snapshot(out)
    assert set(cpu) >= {"user", "system", "idle", "iowait", "steal"}
    assert disks and mem["MemTotal"] > 0
    assert os.getpid() in procs and procs[os.getpid()] > 0
