"""``pglab capture --on HOST``: the server's log read on its host over SSH (an SSH host in a
network namespace, ``netns_hosts.py``, running Debian's openssh-server). The server is one the
test starts outside pglab; its stderr log is named by a path only the host has (a link in
the host's own ``/tmp``, which this machine's ``/tmp`` is not): a capture that read it here
would find no file. pgbench's load captured in the window, the settings put back through the
server as for any capture."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import pglab_in_background, wait_for

from pglab.lab import Lab
from pglab.workloads.replay import workload_file

pytestmark = pytest.mark.integration


def test_the_log_is_read_on_the_servers_host(ns_hosts: Any, lab: Lab, lab_home: Path,
                                             tmp_path: Path) -> None:  # fmt: skip
    from helpers.existing_server import OutsideServer

    host = ns_hosts.hosts[0]
    # the server's log where the host's view of the files has it too (/run is not one of
    # the directories each host has of its own), and named by a link in the host's own /tmp
    shared = Path(tempfile.mkdtemp(prefix="pglab-capture-", dir="/run"))
    shared.chmod(0o755)
    source = OutsideServer(lab)
    source.log = shared / "server.log"
    source.start()
    try:
        source.pgbench("-i", "-s", "1", "-q")
        before = (source.settings(), source.auto_conf())
        there = f"/tmp/{shared.name}/server.log"
        made = host.run("sh", "-c", f"mkdir -p /tmp/{shared.name} && "
                        f"ln -s {source.log} {there}")  # fmt: skip
        assert made.returncode == 0, made.stderr
        assert not Path(there).exists()  # not on this machine: only the host has the link
        known = ns_hosts.known_hosts(tmp_path / "known_hosts")
        hosts = tmp_path / "hosts.toml"
        hosts.write_text(f'[hosts.db1]\nssh = "root@{host.address}"\n'
                         f'identity = "{ns_hosts.key}"\nknown_hosts = "{known}"\n')  # fmt: skip
        out, err = tmp_path / "w.json.gz", tmp_path / "err"
        dsn = f"host={source.sock} port={source.port} user=admin dbname=postgres"
        argv = [sys.executable, "-m", "pglab", "capture", "--lab-dir", str(lab_home), dsn,
                "--on", "db1", "--hosts", str(hosts), "--log", there, "--for", "4s",
                "-o", str(out)]  # fmt: skip
        with pglab_in_background(argv, err) as proc:
            wait_for(lambda: "window open" in err.read_text(), proc, err, "the window", 60)
            source.pgbench("-N", "-c", "2", "-T", "2", "-R", "100")
            assert proc.wait(60) == 0, err.read_text()
        assert f"on db1 ({'root@'}{host.address})" in err.read_text()
        workload = workload_file.read(out)
        s = workload.data["summary"]
        assert s["by_kind"]["UPDATE"] > 50 and s["by_kind"]["INSERT"] == s["by_kind"]["UPDATE"]
        assert (source.settings(), source.auto_conf()) == before  # put back
        host.run("rm", "-rf", f"/tmp/{shared.name}")
    finally:
        source.stop()
        shutil.rmtree(shared, ignore_errors=True)


def test_a_host_the_file_does_not_name_is_refused(lab_home: Path, tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('[hosts.gen1]\nssh = "root@10.0.0.1"\n')
    err = tmp_path / "err"
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "pglab", "capture", "--lab-dir", str(lab_home), "host=x",
         "--on", "db1", "--hosts", str(hosts), "--log", "/var/log/pg.log", "--for", "1s"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    err.write_text(done.stderr)
    assert done.returncode == 2, done.stderr
    assert "has no [hosts.db1] (its hosts: gen1)" in done.stderr
