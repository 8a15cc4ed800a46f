"""The OS of a server's host from /proc snapshots read over SSH (``telemetry/host_os.py``): the
snapshot command run here by sh, and its parsing on recorded text."""

from __future__ import annotations

import os
import subprocess

import pytest

from pglab.errors import HostError
from pglab.telemetry.base import SamplerOff
from pglab.telemetry.host_os import SNAPSHOT, HostOsSampler, parse_snapshot
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


def test_a_postgres_process_gone_as_it_is_read_is_not_a_failure(tmp_path) -> None:
    """A backend exits between the listing of the postmaster's children and the read of its
    stat (clients disconnect as a phase ends): the snapshot still succeeds, without it. The
    exit status of sh was that last ``cat``'s, so the sampler went off and lost the phase's OS
    series."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    (tmp_path / "postmaster.pid").write_text(f"{gone.pid}\n{tmp_path}\n")
    done = subprocess.run(["sh", "-c", SNAPSHOT, str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert parse_snapshot(done.stdout)[3] == {}


class FlakyRemote:
    """A host whose SSH exchanges fail on the calls listed in ``fail``."""

    def __init__(self, fail: set[int]):
        self.fail, self.calls = fail, 0
        self.spec = type("Spec", (), {"name": "gen9"})()

    def run(self, argv, timeout=120, check=True):
        self.calls += 1
        if self.calls in self.fail:
            raise HostError("the SSH link to gen9 failed: channel closed")
        return subprocess.run(argv, capture_output=True, text=True)  # this machine's /proc


def test_one_missed_snapshot_skips_an_interval_three_switch_the_sampler_off(tmp_path) -> None:
    remote = FlakyRemote(fail={4})  # 1: findmnt, 2: the first snapshot, 4: the second sample
    sampler = HostOsSampler(remote, str(tmp_path))  # type: ignore[arg-type]
    sampler.start(0.0)
    for t in (1.0, 2.0, 3.0):
        sampler.sample(t)
    tables = sampler.finish(3.0)
    assert [r[0] for r in tables["os.cpu"].rows] == [1.0, 3.0]  # the second spans two seconds
    assert [r[1] for r in tables["os.notes"].rows][-1].startswith("a sample missed: cannot read")
    remote.fail = {6, 7, 8}  # the samples at 4, 5 and 6
    sampler.sample(4.0)
    sampler.sample(5.0)
    with pytest.raises(SamplerOff, match="gen9"):
        sampler.sample(6.0)
