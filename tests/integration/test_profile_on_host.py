"""CPU profiles of a server pglab makes on another host (sshd in a network namespace, gen3 of
``netns_hosts.py``, logged in as an unprivileged user): that host's perf records it over SSH,
as the host's user (kernel.perf_event_paranoid 2 here: its own processes, user space only);
the recording is folded into the same ``profile`` table; a pglab killed during a profiled
phase leaves no perf and no perf file there; perf missing there is said before anything runs.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from conftest import pglab_run_in_background, wait_for
from test_server_on_host import campaign, cli, nothing_left

from pglab.lab import Lab
from pglab.profile import folded
from pglab.store import open_store

pytestmark = pytest.mark.integration

PROFILED = "[profile]\nfrequency = 199\n"


def _recording(db) -> list[int]:
    """perf processes recording a phase on the host (not the checks' short probe)."""
    found = []
    for pid in db.processes("perf"):
        try:
            if "--control" in Path(f"/proc/{pid}/cmdline").read_text():
                found.append(pid)
        except OSError:
            pass
    return found


def _perf_files(db) -> list[str]:
    return db.glob("/tmp/pglab-*/perf.data") + db.glob("/tmp/pglab-*/ctl")


def _gone(check, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not check():
            return True
        time.sleep(0.2)
    return False


def test_a_server_on_a_host_is_profiled_there(ns_hosts, lab: Lab, tmp_path: Path, capsys):
    """Killed during a profiled phase, pglab leaves no perf and no perf file on gen3; run again,
    a select-only phase's profile is stored, naming the executor's functions, and shown."""
    db = ns_hosts.hosts[2]
    store = tmp_path / "r.sqlite"
    killed = campaign(tmp_path, ns_hosts, "prof-host-killed", duration=30, generators=("local",),
                      extra=PROFILED)  # fmt: skip
    err = tmp_path / "err.txt"
    with pglab_run_in_background(killed, lab.home, store, err) as proc:
        wait_for(lambda: bool(_recording(db)), proc, err, "perf recording on gen3")
        time.sleep(1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert _gone(lambda: db.processes("perf")), "perf still runs on gen3"
    assert _gone(lambda: _perf_files(db)), _perf_files(db)
    assert nothing_left(db)

    path = campaign(tmp_path, ns_hosts, "prof-host", duration=3, generators=("local",),
                    extra=PROFILED)  # fmt: skip
    capsys.readouterr()
    assert cli("run", str(path), lab=lab, store=store) == 0, capsys.readouterr()
    said = capsys.readouterr()
    assert "the server on host gen3 sampled there by its perf at 199 Hz" in said.out + said.err
    with open_store(str(store)) as s:
        (row,) = s.list_runs("prof-host")
        run = s.get_run(row.id)
    assert run is not None and run.ok, row.error
    stacks = folded.stacks_of(run.series["0"])
    assert stacks.get("backend", {}) and sum(stacks["backend"].values()) > 50, stacks.keys()
    names = {f for s in stacks["backend"] for f in s.split(";")}
    assert {"PostgresMain", "exec_simple_query", "standard_ExecutorRun"} <= names, sorted(names)
    assert "pgbench" not in stacks  # it ran here, not on the server's host
    assert "hardware_counters" not in run.fingerprint  # this machine's CPU, not gen3's
    notes = [r[-1] for r in run.series["0"].get(folded.NOTES, {}).get("rows", [])]
    assert any("user space only on gen3" in n for n in notes), notes
    assert not db.processes("perf") and not _perf_files(db)
    assert cli("show", str(row.id), "--profile", "5", lab=lab, store=store) == 0
    shown = capsys.readouterr().out
    assert "hot functions by CPU samples" in shown and "backend" in shown, shown


def test_perf_missing_on_the_host_is_said_before_anything_runs(ns_hosts, lab, tmp_path, capsys):
    """gen3 without perf (an empty file over it, in its mount namespace only): the dry run
    stops naming the host and what to do."""
    db = ns_hosts.hosts[2]
    path = campaign(tmp_path, ns_hosts, "prof-host-noperf", generators=("local",),
                    extra=PROFILED)  # fmt: skip
    hidden = db.run("mount", "--bind", "/dev/null", "/usr/bin/perf")
    assert hidden.returncode == 0, hidden.stderr
    try:
        capsys.readouterr()
        assert cli("run", str(path), "--dry-run", lab=lab, store=tmp_path / "r.sqlite") == 2
        err = " ".join(capsys.readouterr().err.split())
    finally:
        db.run("umount", "/usr/bin/perf")
    assert "profiling the server on gen3" in err and "perf is not found on gen3" in err, err
    assert "install it on gen3 (Debian: apt-get install linux-perf)" in err, err
