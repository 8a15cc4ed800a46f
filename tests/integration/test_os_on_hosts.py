"""``[os]`` on hosts (sshd in network namespaces, ``netns_hosts.py``): a sysctl and limits
applied through sudo, the server confined to one CPU and the page cache dropped before the
run, on the server's host (gen3, as the unprivileged ``LOGIN_USER``, allowed ``sudo -n`` by a
sudoers rule for that host's address alone) and as root on a generator host (gen1), read back
there while pgbench runs, recorded in the run's fingerprint, put back after the run, and put
back by the next ``pglab run`` after pglab was SIGKILLed; a host whose user may not sudo
refused before anything runs.

The sysctl is ``net.core.somaxconn``: a network namespace's own, so that setting it on a host
leaves this machine's (and the other hosts') as they are."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import pglab_run_in_background, wait_for
from helpers.netns_hosts import LOGIN_USER

from pglab.cli import main
from pglab.lab import Lab
from pglab.postgres.sources import embedded_bindir
from pglab.store import open_store

pytestmark = pytest.mark.integration

SYSCTL = "/proc/sys/net/core/somaxconn"
ASKED = "1234"
HARD = 4096  # the hard limit of open files gen3's SSH sessions get (sudo_on_gen3)
# below it: root raises a hard limit only with CAP_SYS_RESOURCE, which the development
# machine's container lacks (so its namespaces' root too)
NOFILE = 3000


@pytest.fixture
def sudo_on_gen3(ns_hosts) -> Iterator[None]:
    """LOGIN_USER may run anything with ``sudo -n`` on gen3 (the rule names its address: sudo
    matches it against the interfaces of the namespace it runs in), nowhere else."""
    if not Path("/usr/bin/sudo").exists():
        pytest.skip("[os] on hosts needs sudo there (apt-get install sudo; .ci/run does)")
    rule = Path(f"/etc/sudoers.d/pglab-test-{ns_hosts.tag}")
    rule.write_text(f"{LOGIN_USER} {ns_hosts.hosts[2].address}=(root) NOPASSWD: ALL\n")
    rule.chmod(0o440)
    try:
        with ns_hosts.hosts[2].hard_nofile(HARD):
            yield
    finally:
        rule.unlink()


def campaign(tmp_path: Path, ns_hosts, name: str, server: str = "gen3", duration: int = 3) -> Path:
    known = ns_hosts.known_hosts(tmp_path / "known_hosts")
    hosts = ""
    for h in ns_hosts.hosts:
        user = "root" if h.name == "gen1" else LOGIN_USER
        bindir = f'bindir = "{embedded_bindir()}"\n' if h.name == "gen1" else ""
        hosts += (f'[hosts.{h.name}]\nssh = "{user}@{h.address}"\nidentity = "{ns_hosts.key}"\n'
                  f'known_hosts = "{known}"\nsudo = true\n{bindir}')  # fmt: skip
    path = tmp_path / f"{name}.toml"
    path.write_text(f"""
name = "{name}"
[server]
host = "{server}"
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 2
duration = {duration}
generators = ["gen1"]
[os]
sysctl = {{ "net.core.somaxconn" = {ASKED} }}
limits = {{ nofile = {NOFILE} }}
cpus = 1
drop_caches = true
{hosts}""")
    return path


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


def sysctl(host) -> str:
    return host.run("cat", SYSCTL).stdout.strip()


def nofile(host, name: str) -> set[str]:
    """The nofile limits ("soft hard") of the host's processes called ``name``."""
    found = set()
    for pid in host.processes(name):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
                if line.startswith("Max open files"):
                    found.add(" ".join(line.split()[3:5]))
    return found


def cpus(host, name: str) -> set[str]:
    """The CPUs the host's processes called ``name`` may run on (their Cpus_allowed_list)."""
    found = set()
    for pid in host.processes(name):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("Cpus_allowed_list:"):
                    found.add(line.split()[1])
    return found


def journals(host, home: str) -> list[str]:
    return host.glob(f"{home}/.local/state/pglab/os/*.json")


def test_os_on_a_server_host_and_a_generator_host(ns_hosts, sudo_on_gen3, lab, tmp_path, capsys):
    gen1, db = ns_hosts.hosts[0], ns_hosts.hosts[2]
    here = Path(SYSCTL).read_text().strip()
    before = {h.name: sysctl(h) for h in ns_hosts.hosts}
    assert ASKED not in (here, *before.values())
    assert nofile(db, "sshd") == {f"{HARD} {HARD}"}  # what gen3's SSH sessions start with
    store, err = tmp_path / "r.sqlite", tmp_path / "err.txt"
    path = campaign(tmp_path, ns_hosts, "os-on-hosts", duration=30)
    with pglab_run_in_background(path, lab.home, store, err) as proc:
        wait_for(lambda: bool(gen1.processes("pgbench")), proc, err, "pgbench on gen1")
        # applied on both hosts, and only there
        assert sysctl(db) == ASKED and sysctl(gen1) == ASKED
        assert sysctl(ns_hosts.hosts[1]) == before["gen2"]
        assert Path(SYSCTL).read_text().strip() == here
        assert nofile(db, "postgres") == {f"{NOFILE} {NOFILE}"}  # set through sudo
        assert nofile(gen1, "pgbench") == {f"{NOFILE} {NOFILE}"}
        assert cpus(db, "postgres") == {"0"}  # every server process, on the first CPU
        assert journals(db, f"/home/{LOGIN_USER}") and journals(gen1, "/root")
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    # killed: left as it was set, with its journals
    assert sysctl(db) == ASKED and sysctl(gen1) == ASKED
    # the next pglab run puts both back first, then runs (and puts back its own at the end)
    capsys.readouterr()
    short = campaign(tmp_path, ns_hosts, "os-on-hosts", duration=3)
    assert cli("run", str(short), lab=lab, store=store) == 0
    said = capsys.readouterr()
    for name in ("gen1", "gen3"):
        assert (f"put back kernel settings an earlier, killed pglab had changed on {name}: "
                f"{SYSCTL}") in said.out + said.err, said  # fmt: skip
    assert {h.name: sysctl(h) for h in ns_hosts.hosts} == before
    assert not journals(db, f"/home/{LOGIN_USER}") and not journals(gen1, "/root")
    with open_store(str(store)) as s:
        (row,) = s.list_runs("os-on-hosts")
        run = s.get_run(row.id)
    assert run is not None and run.ok, row
    fp = run.fingerprint
    assert fp["os"]["asked"] == {"sysctl": {"net.core.somaxconn": ASKED}, "drop_caches": True,
                                 "limits": {"nofile": NOFILE}, "cpus": 1}  # fmt: skip
    assert fp["os"]["read"] == {SYSCTL: ASKED}
    assert fp["os"]["hosts"] == {"gen3": {SYSCTL: ASKED}, "gen1": {SYSCTL: ASKED}}
    assert fp["server_limits"] == {"nofile": f"{NOFILE} {NOFILE}"}
    assert fp["cpu_affinity"] == {"server": [0], "client": [], "shared": False}
    assert run.started_at < fp["dropped_caches"] < run.phases[0].started_at  # a cold run
    assert "vm.swappiness" in fp["os_state"] and "vm.swappiness" in fp["generators"]["gen1"][
        "os_state"]  # fmt: skip


def test_a_host_whose_user_may_not_sudo_is_refused_before_anything_runs(
    ns_hosts, sudo_on_gen3, lab, tmp_path, capsys
):
    gen2 = ns_hosts.hosts[1]
    before = sysctl(gen2)
    path = campaign(tmp_path, ns_hosts, "os-no-sudo", server="gen2")
    assert cli("run", str(path), lab=lab, store=tmp_path / "r.sqlite") != 0
    text = " ".join(capsys.readouterr().err.split())
    assert f"[os] is applied on gen2 ({LOGIN_USER}@{gen2.address}) through sudo, and `sudo -n " \
           f"true` failed there as {LOGIN_USER}" in text, text  # fmt: skip
    assert f'"{LOGIN_USER} ALL=(root) NOPASSWD: ALL"' in text and "[hosts.gen2]" in text
    assert sysctl(gen2) == before and not gen2.processes("postgres")
    assert not journals(gen2, f"/home/{LOGIN_USER}")
