"""The server module against real PostgreSQL servers it starts itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pglab.campaign.spec import ServerSpec
from pglab.errors import ServerError
from pglab.lab import Lab
from pglab.postgres import dataset, server
from pglab.postgres.server import Cluster, initdb
from pglab.postgres.sources import resolve

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def binaries(lab: Lab):
    return resolve(ServerSpec(), lab)


@pytest.fixture
def cluster(lab: Lab, binaries, no_leftovers, request):
    name = f"t-{request.node.name[:20]}-{os.getpid()}"
    datadir = lab.clusters / name
    initdb(binaries, lab, datadir)
    c = Cluster(binaries, lab, datadir, name)
    yield c
    c.stop()


def test_embedded_is_postgresql_18_and_runs_unprivileged(cluster: Cluster, binaries) -> None:
    assert binaries.major == 18
    cluster.start()
    with cluster.connect() as conn:
        assert (
            conn.execute("SELECT current_setting('server_version_num')::int / 10000").fetchone()[0]
            == 18
        )
        assert conn.execute("SHOW listen_addresses").fetchone()[0] == ""
    st = os.stat(cluster.socket_dir)
    assert st.st_mode & 0o777 == 0o700
    if os.geteuid() == 0:
        import psutil

        assert psutil.Process(cluster.proc.pid).username() != "root"


def test_reload_when_enough_restart_when_needed(cluster: Cluster, lab: Lab, binaries) -> None:
    catalog = dataset.load_catalog(lab, binaries)
    cluster.start({"work_mem": "4MB"})
    pid = cluster.proc.pid
    assert cluster.apply({"work_mem": "64MB"}, catalog) == "reload"
    assert cluster.proc.pid == pid
    with cluster.connect() as conn:
        assert conn.execute("SHOW work_mem").fetchone()[0] == "64MB"
    assert cluster.apply({"work_mem": "64MB"}, catalog) == "none"
    assert cluster.apply({"work_mem": "64MB", "shared_buffers": "64MB"}, catalog) == "restart"
    assert cluster.proc.pid != pid
    with cluster.connect() as conn:
        assert conn.execute("SHOW shared_buffers").fetchone()[0] == "64MB"
    # removing a setting reverts it to its default, by reload
    assert cluster.apply({"shared_buffers": "64MB"}, catalog) == "reload"
    with cluster.connect() as conn:
        assert conn.execute("SHOW work_mem").fetchone()[0] == "4MB"


def test_reload_takes_any_spelling_and_reverts_to_postgresql_conf(
    cluster: Cluster, lab: Lab, binaries
) -> None:
    catalog = dataset.load_catalog(lab, binaries)
    cluster.start()
    # names as PostgreSQL accepts them: any case; max_wal_size is also set by initdb's file
    wanted = {"timezone": "Europe/Paris", "MAX_WAL_SIZE": "2GB", "DateStyle": "German, DMY"}
    assert cluster.apply(wanted, catalog) == "reload"
    with cluster.connect() as conn:
        shown = [conn.execute(f"SHOW {n}").fetchone()[0] for n in ("TimeZone", "max_wal_size")]
    assert shown == ["Europe/Paris", "2GB"]
    # dropping them brings back postgresql.conf's values, not a wait for pglab.conf's
    assert cluster.apply({}, catalog) == "reload"
    with cluster.connect() as conn:
        assert conn.execute("SHOW max_wal_size").fetchone()[0] == "1GB"
        assert conn.execute("SHOW DateStyle").fetchone()[0] == "ISO, MDY"


def test_a_server_that_will_not_start_says_why(cluster: Cluster) -> None:
    # valid names and values, but a combination the server rejects at start
    with pytest.raises(ServerError) as err:
        cluster.start({"wal_level": "minimal", "max_wal_senders": "5"})
    assert "did not start" in str(err.value)
    assert "wal_level" in str(err.value), "the server log tail must be in the message"
    assert not cluster.running


def _owner_script(lab: Lab, datadir: Path, name: str, detach: bool) -> str:
    """A stand-in pglab process that starts a server and then waits to be killed."""
    return textwrap.dedent(f"""
        import os, subprocess, time
        from pathlib import Path
        from pglab import procs
        from pglab.lab import Lab
        from pglab.postgres.server import Cluster
        from pglab.postgres.sources import resolve
        from pglab.campaign.spec import ServerSpec
        lab = Lab.open(Path({str(lab.home)!r}))
        c = Cluster(resolve(ServerSpec(), lab), lab, Path({str(datadir)!r}), {name!r})
        if {detach!r}:
            # a postmaster that does not die with its owner (as if started without setpriv)
            procs._wrap = lambda argv, run_as, **_: (
                ["setpriv", f"--reuid={{run_as.uid}}", f"--regid={{run_as.gid}}",
                 "--clear-groups", "--"]
                if run_as else []) + [str(a) for a in argv]
        c.start()
        print(c.proc.pid, flush=True)
        time.sleep(600)
    """)


@pytest.mark.parametrize("detach", [False, True], ids=["dies-with-owner", "swept-by-next-pglab"])
def test_no_server_outlives_a_killed_pglab(lab: Lab, binaries, no_leftovers, detach: bool) -> None:
    name = f"orphan-{os.getpid()}-{int(detach)}"
    datadir = lab.clusters / name
    initdb(binaries, lab, datadir)
    child = subprocess.Popen(
        [sys.executable, "-c", _owner_script(lab, datadir, name, detach)],
        stdout=subprocess.PIPE,
        text=True,
    )
    pid = int(child.stdout.readline())
    assert server.postmaster_of(datadir).pid == pid
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    if not detach:
        deadline = time.monotonic() + 10
        while server.postmaster_of(datadir) is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.postmaster_of(datadir) is None
        return
    time.sleep(0.5)
    assert server.postmaster_of(datadir) is not None, "the detached postmaster should survive"
    stopped = server.stop_leftovers(lab)
    assert any(f"pid {pid}" in s for s in stopped), stopped
    assert server.postmaster_of(datadir) is None
