"""SSH to real hosts (sshd in network namespaces, ``netns_hosts.py``): commands, files, clocks,
the host key policy, and that nothing pglab started there outlives its link."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pglab.campaign.spec import HostSpec
from pglab.errors import HostError
from pglab.hosts.ssh import Remote

pytestmark = pytest.mark.integration


def spec(ns_hosts, tmp_path: Path, i: int = 0, **more) -> HostSpec:
    h = ns_hosts.hosts[i]
    known = more.pop("known_hosts", None) or str(ns_hosts.known_hosts(tmp_path / "known_hosts"))
    identity = more.pop("identity", str(ns_hosts.key))
    return HostSpec(name=h.name, address=h.address, user="root", identity=identity,
                    known_hosts=known, **more)  # fmt: skip


def test_a_command_its_files_and_its_clock(ns_hosts, tmp_path: Path):
    remote = Remote(spec(ns_hosts, tmp_path)).open()
    try:
        done = remote.run(["sh", "-c", "ip -4 -o addr show eth0; echo err >&2; exit 3"],
                          check=False)  # fmt: skip
        assert done.returncode == 3 and ns_hosts.hosts[0].address in done.stdout
        assert done.stderr == "err"
        with pytest.raises(HostError, match=r"failed on gen1 .* \(exit 3\)"):
            remote.run(["sh", "-c", "exit 3"])
        workdir = remote.make_dir()
        remote.write(f"{workdir}/secret", b"s3cret\n")
        assert remote.run(["stat", "-c", "%a", f"{workdir}/secret"]).stdout.strip() == "600"
        got = remote.fetch(workdir, "sec", tmp_path / "got")
        assert [p.read_bytes() for p in got] == [b"s3cret\n"]
        remote.remove_dir(workdir)
        assert remote.run(["test", "-e", workdir], check=False).returncode == 1
        offset, uncertainty = remote.clock_offset()
        # one machine, one clock: 0 within the uncertainty stated (half the shortest round
        # trip, which a loaded machine lengthens)
        assert abs(offset) <= uncertainty + 0.001 and 0 < uncertainty < 1
        facts = remote.facts("true")
        assert facts["cpus"] == os.cpu_count() and facts["ram_bytes"] > 0
    finally:
        remote.close()


def test_hosts_share_no_files_with_this_machine(ns_hosts, lab, tmp_path: Path):
    """The test hosts see their own /tmp, /var/tmp, /root and /home: the lab's directory and
    the tests' files are not there, and what a host writes in its /tmp is not here."""
    (lab.home / "only-here").write_text("x")
    (tmp_path / "only-here").write_text("x")
    host = ns_hosts.hosts[0]
    for path in (lab.home / "only-here", tmp_path / "only-here", lab.home):
        assert path.exists() and not host.has(path), path
    remote = Remote(spec(ns_hosts, tmp_path)).open()
    try:
        there = remote.make_dir()
        assert host.has(there) and not Path(there).exists()
        assert remote.home() == "/root"
        remote.remove_dir(there)
    finally:
        remote.close()


def test_a_file_copied_in_by_content_once_and_removed_on_close(ns_hosts, tmp_path: Path):
    script = tmp_path / "update.sql"
    script.write_text("select 1;\n")
    same = tmp_path / "other"
    same.mkdir()
    (same / "update.sql").write_text("select 1;\n")
    host = ns_hosts.hosts[0]
    remote = Remote(spec(ns_hosts, tmp_path)).open()
    try:
        there = remote.copy_in(script)
        assert there.endswith("/update.sql") and not Path(there).exists()
        assert host.run("cat", there).stdout == "select 1;\n"
        assert remote.copy_in(same / "update.sql") == there  # same content: not copied again
        script.write_text("select 2;\n")
        changed = remote.copy_in(script)
        assert changed != there and host.run("cat", changed).stdout == "select 2;\n"
    finally:
        remote.close()
    assert not host.has(there) and not host.has(changed)


def test_a_command_longer_than_the_heartbeat_timeout_lives_while_pglab_does(
    ns_hosts, tmp_path: Path
):
    from pglab.hosts.ssh import HEARTBEAT_TIMEOUT

    remote = Remote(spec(ns_hosts, tmp_path)).open()
    try:
        done = remote.run(["sleep", str(HEARTBEAT_TIMEOUT + 2)], timeout=60, check=False)
        assert done.returncode == 0, done  # kept alive by the heartbeat, not killed at 5 s
    finally:
        remote.close()


def test_an_unknown_host_key_is_refused_unless_accept_new(ns_hosts, tmp_path: Path):
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    with pytest.raises(HostError, match="is not in .*empty_known_hosts") as err:
        Remote(spec(ns_hosts, tmp_path, known_hosts=str(empty))).open()
    assert "accept_new" in (err.value.hint or "")
    Remote(spec(ns_hosts, tmp_path, known_hosts=str(empty), accept_new=True)).open().close()
    assert empty.read_text() == ns_hosts.hosts[0].host_key() + "\n"  # recorded on first use
    Remote(spec(ns_hosts, tmp_path, known_hosts=str(empty))).open().close()  # then known


def test_a_changed_host_key_is_always_refused(ns_hosts, tmp_path: Path):
    other = ns_hosts.hosts[1].host_key().split()[1:]  # another host's key, under this address
    changed = tmp_path / "changed"
    changed.write_text(f"{ns_hosts.hosts[0].address} {' '.join(other)}\n")
    for accept_new in (False, True):
        with pytest.raises(HostError, match="has CHANGED") as err:
            Remote(spec(ns_hosts, tmp_path, known_hosts=str(changed),
                        accept_new=accept_new)).open()  # fmt: skip
        assert "ssh-keygen -R" in (err.value.hint or "")
    assert changed.read_text().count("\n") == 1  # never rewritten


def test_a_refused_login_and_an_unreachable_host_are_named(ns_hosts, tmp_path: Path):
    with pytest.raises(HostError, match="refused the login"):
        Remote(spec(ns_hosts, tmp_path, identity=str(ns_hosts.hosts[0].dir / "host_key"))).open()
    nowhere = HostSpec(name="gone", address=f"10.231.{ns_hosts.subnet}.99", port=22,
                       known_hosts=str(tmp_path / "kh"))  # fmt: skip
    with pytest.raises(HostError, match="cannot reach gone"):
        Remote(nowhere).open()


CHILD = """
import sys, time
from pglab.campaign.spec import HostSpec
from pglab.hosts.ssh import Remote
from pglab.hosts.loop import call
spec = HostSpec(name="gen1", address=sys.argv[1], user="root", identity=sys.argv[2],
                known_hosts=sys.argv[3])
remote = Remote(spec).open()
call(remote.start(["sleep", "321"]))
print("started", flush=True)
time.sleep(600)
"""


def test_nothing_outlives_a_sigkilled_pglab_on_the_host(ns_hosts, tmp_path: Path):
    h = ns_hosts.hosts[0]
    known = ns_hosts.known_hosts(tmp_path / "known_hosts")
    child = subprocess.Popen([sys.executable, "-c", CHILD, h.address, str(ns_hosts.key),
                              str(known)], stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 10
        while not h.processes("sleep") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert h.processes("sleep"), "the remote command never started"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    deadline = time.monotonic() + 10
    while h.processes("sleep") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not h.processes("sleep"), "the remote command outlived pglab"
