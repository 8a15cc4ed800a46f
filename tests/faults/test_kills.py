"""Faults injected into real campaigns: processes killed under pglab, pglab killed under them.

Each case checks the three promises: a message that names what went wrong, a store holding whole
runs only (a failed run with its reason and the server log, or nothing), and no postgres or
pgbench left running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import assert_stopped_cleanly, lab_processes, pglab_in_background, wait_for

from pglab.campaign import parse as campaign
from pglab.lab import Lab
from pglab.run import campaign_run
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store

pytestmark = pytest.mark.integration

THREE_RUNS = """
name = "{name}"
repeats = 3
order = "sequential"
on_error = "{on_error}"
[dataset]
scale = 1
reset = "{reset}"
[workload]
script = "tpcb-like"
clients = 2
duration = 4
latency_log = "aggregate"
"""


class KillDuringFirstRun(QuietEvents):
    """Kills a process once the first run's pgbench has reported two seconds of progress."""

    def __init__(self, target: str):
        self.target = target  # "postmaster" or "pgbench"
        self.executor: Executor | None = None
        self.samples = 0
        self.killed: int | None = None

    def progress(self, sample) -> None:
        self.samples += 1
        if self.samples != 2 or self.killed is not None:
            return
        assert self.executor is not None and self.executor.cluster is not None
        if self.target == "postmaster":
            pid = self.executor.cluster.proc.pid
        else:
            pid = next(
                p.pid for p in lab_processes(self.executor.lab.home) if p.name() == "pgbench"
            )
        os.kill(pid, signal.SIGKILL)
        self.killed = pid


def _campaign(tmp_path: Path, name: str, on_error: str = "continue", reset: str = "run"):
    path = tmp_path / f"{name}.toml"
    path.write_text(THREE_RUNS.format(name=name, on_error=on_error, reset=reset))
    return campaign.load(path)


@pytest.mark.parametrize("reset", ["run", "never"])
def test_postmaster_killed_mid_phase(tmp_path: Path, lab: Lab, no_leftovers, reset: str) -> None:
    """The run is stored as failed with the reason and the server log; the next runs get a
    working server again (a fresh copy, or the same data directory restarted)."""
    events = KillDuringFirstRun("postmaster")
    with open_store(str(tmp_path / "r.sqlite")) as store:
        ex = Executor(lab, store, events)
        events.executor = ex
        out = campaign_run.run_campaign(ex, _campaign(tmp_path, f"pm-{reset}", reset=reset))
        runs = [store.get_run(i) for i in out.run_ids]
    assert events.killed is not None
    assert [r.status for r in runs] == ["failed", "ok", "ok"], [r.error for r in runs]
    first = runs[0]
    assert "server was not running" in first.error, first.error
    assert first.tps is None and first.metrics == {}
    # the server log of the run shows the crash as PostgreSQL saw it (or at least its start)
    assert first.server_log.strip(), "the failed run keeps the server log"
    assert all(r.tps > 0 for r in runs[1:])


def test_pgbench_killed_mid_phase(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    events = KillDuringFirstRun("pgbench")
    with open_store(str(tmp_path / "r.sqlite")) as store:
        ex = Executor(lab, store, events)
        events.executor = ex
        out = campaign_run.run_campaign(ex, _campaign(tmp_path, "pgbench-killed"))
        runs = [store.get_run(i) for i in out.run_ids]
    assert [r.status for r in runs] == ["failed", "ok", "ok"], [r.error for r in runs]
    assert "pgbench" in runs[0].error and "signal 9" in runs[0].error, runs[0].error


def test_on_error_stop_ends_the_campaign_at_the_first_failure(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    events = KillDuringFirstRun("pgbench")
    with open_store(str(tmp_path / "r.sqlite")) as store:
        ex = Executor(lab, store, events)
        events.executor = ex
        out = campaign_run.run_campaign(ex, _campaign(tmp_path, "stop-early", on_error="stop"))
        runs = store.list_runs("stop-early")
    assert out.stopped_early and out.failed == 1 and out.ok == 0
    assert [r.status for r in runs] == ["failed"]


INIT_SLOW = """
name = "{name}"
[dataset]
scale = 20
[workload]
clients = 1
duration = 1
"""


@pytest.mark.parametrize(
    "sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name
)
def test_pglab_killed_during_dataset_init_then_same_command(
    tmp_path: Path, lab: Lab, no_leftovers, sig: signal.Signals
) -> None:
    """Kill pglab while pgbench -i fills a new dataset: nothing is left running, no half
    dataset is ever used, and the same command then makes it and runs."""
    name = f"init-{sig.name.lower()}"
    path = tmp_path / "c.toml"
    # a scale no other test uses, so that this test's pglab really is the one initializing it
    path.write_text(INIT_SLOW.format(name=name).replace("scale = 20", f"scale = {20 + sig}"))
    store_path = tmp_path / "r.sqlite"
    argv = [
        sys.executable, "-m", "pglab", "run", str(path),
        "--lab-dir", str(lab.home), "--store", str(store_path),
    ]  # fmt: skip
    err_path = tmp_path / "stderr"
    with pglab_in_background(argv, err_path) as proc:
        wait_for(lambda: _init_running(lab.home), proc, err_path, "pgbench -i")
        time.sleep(0.5)
        proc.send_signal(sig)
        proc.wait(timeout=60)
    assert_stopped_cleanly(proc, sig, lab.home, err_path)
    with open_store(str(store_path)) as store:
        assert store.list_runs(name) == []  # nothing half-stored
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    with open_store(str(store_path)) as store:
        runs = store.list_runs(name)
    assert [r.status for r in runs] == ["ok"]


def _init_running(home: Path) -> bool:
    """Whether this lab's pgbench -i runs (only this lab's: other tests' processes, even
    zombies, are none of this test's business)."""
    for p in lab_processes(home):
        try:
            if p.info["name"] == "pgbench" and "-i" in (p.info["cmdline"] or []):
                return True
        except psutil.Error:
            continue
    return False
