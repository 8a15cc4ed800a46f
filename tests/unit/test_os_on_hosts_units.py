"""The pure parts of ``[os]`` on hosts: the command that sets a process's limits before it
becomes the command asked (run here, by sh and prlimit), which hosts a run acts on as root,
CPU lists as the kernel writes them."""

from __future__ import annotations

import subprocess

from pglab.campaign.os_spec import OsSpec
from pglab.campaign.os_where import hosts_of, sudo_hosts
from pglab.campaign.spec import DatasetSpec, HostSpec, PhaseSpec, RunSpec, ServerSpec
from pglab.hosts import sudo
from pglab.run.os_hosts import cpu_numbers


def test_limits_are_set_soft_and_hard_before_the_command_runs() -> None:
    argv = sudo.with_limits(["sh", "-c", 'echo "$(ulimit -Sn) $(ulimit -Hn)"'], {"nofile": 999})
    said = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    assert said.split() == ["999", "999"]
    assert sudo.with_limits(["true"], {}) == ["true"]


def test_a_limit_no_one_may_set_stops_before_the_command() -> None:
    argv = sudo.with_limits(["echo", "ran"], {"nofile": 2**40})  # above any fs.nr_open
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 125 and "ran" not in done.stdout, done


def _run(os: OsSpec, host: str | None = "db1", generators: tuple[str, ...] = ("gen1",)) -> RunSpec:
    phase = PhaseSpec("main", generators=generators)
    return RunSpec(campaign="c", variant="v", axes=(), server=ServerSpec(host=host),
                   dataset=DatasetSpec(), phases=(phase,), os=os)  # fmt: skip


def test_the_hosts_a_run_acts_on_as_root() -> None:
    hosts = {"db1": HostSpec("db1", "a", sudo=True), "gen1": HostSpec("gen1", "b")}
    sysctl = OsSpec(sysctl=(("net.core.somaxconn", "1024"),))
    assert hosts_of(_run(sysctl)) == ["db1", "gen1"]
    assert hosts_of(_run(sysctl, host=None)) == []  # this machine's: run/os_state
    limits = OsSpec(limits=(("nofile", 1000),))
    assert hosts_of(_run(limits)) == []
    assert sudo_hosts(_run(limits), hosts) == ["db1"]  # gen1: its user's own prlimit
    assert sudo_hosts(_run(sysctl), hosts) == ["db1", "gen1"]


def test_cpu_lists_as_the_kernel_writes_them() -> None:
    assert cpu_numbers("0-3,6\n") == [0, 1, 2, 3, 6]
    assert cpu_numbers("1") == [1] and cpu_numbers("") == []
