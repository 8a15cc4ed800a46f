"""The profiler's faults: pglab SIGKILLed while perf records a phase leaves no perf running and
the next run works; perf missing or forbidden stops a profiled campaign with a clear message
before anything runs."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import assert_stopped_cleanly, pglab_in_background, pglab_run_argv, wait_for

from pglab.lab import Lab, find_run_user
from pglab.store import open_store

pytestmark = pytest.mark.integration

needs_perf = pytest.mark.skipif(shutil.which("perf") is None, reason="no perf (linux-perf)")

PROFILED = """name = "{name}"
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 2
duration = {duration}
latency_log = "off"
[profile]
"""


def _perf_of(home: Path) -> list[psutil.Process]:
    """perf processes recording into the lab's work directories."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        try:
            args = proc.info["cmdline"] or []
            if (
                "record" in args
                and any(a.endswith("perf") for a in args[:4])
                and any(str(home) in a for a in args)
            ):
                found.append(proc)
        except psutil.Error:
            continue
    return found


@needs_perf
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=lambda s: s.name)
def test_pglab_killed_while_perf_records(
    tmp_path: Path, lab: Lab, no_leftovers, sig: signal.Signals
) -> None:
    """SIGKILL: perf dies with pglab (its parent-death signal) and the next run sweeps its
    files; Ctrl-C: pglab stops perf itself and removes them. Either way the next run works."""
    path = tmp_path / "c.toml"
    path.write_text(PROFILED.format(name="prof-kill", duration=30))
    store = tmp_path / "r.sqlite"
    err = tmp_path / "stderr"
    with pglab_in_background(pglab_run_argv(path, lab.home, store), err) as proc:
        wait_for(lambda: bool(_perf_of(lab.home)), proc, err, "perf record")
        time.sleep(1)
        proc.send_signal(sig)
        proc.wait(timeout=90)
    assert_stopped_cleanly(proc, sig, lab.home, err)
    assert not _perf_of(lab.home), "perf outlived pglab"
    if sig == signal.SIGINT:  # pglab removed them as it stopped
        assert not list((lab.home / "work").glob("*/perf-*"))
    path.write_text(PROFILED.format(name="prof-kill", duration=2))
    done = subprocess.run(pglab_run_argv(path, lab.home, store), capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    if sig == signal.SIGKILL:
        assert "perf file(s) of a dead pglab" in done.stdout, done.stdout  # swept first
    assert not list((lab.home / "work").glob("*/perf-*"))
    with open_store(str(store)) as s:
        (row,) = s.list_runs("prof-kill")
        run = s.get_run(row.id)
    assert run.status == "ok" and "profile" in run.series["0"], run.error
    assert not _perf_of(lab.home)


def test_perf_missing_stops_before_anything_runs(tmp_path: Path, lab: Lab) -> None:
    path = tmp_path / "c.toml"
    path.write_text(PROFILED.format(name="prof-missing", duration=2))
    store = tmp_path / "r.sqlite"
    before = set(lab.clusters.iterdir())
    env = {**os.environ, "PGLAB_PERF": str(tmp_path / "no-such-perf")}
    done = subprocess.run(pglab_run_argv(path, lab.home, store), capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip
    assert done.returncode != 0
    said = done.stderr + done.stdout
    assert "profiling needs Linux perf" in said and "no-such-perf" in said, said
    assert "apt-get install linux-perf" in said, said
    assert set(lab.clusters.iterdir()) == before  # no server made or started
    with open_store(str(store)) as s:
        assert s.list_runs("prof-missing") == []


@needs_perf
def test_perf_forbidden_is_said_with_what_to_do(tmp_path: Path) -> None:
    """The real perf, run by an unprivileged account with the kernel's perf_event_paranoid
    above 0: refused, and said so in words (not perf's page of settings)."""
    paranoid = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text())
    account = find_run_user()
    if account is None or paranoid <= 0:
        pytest.skip("needs root (to switch to an unprivileged account) and paranoid > 0")
    code = "from pglab.profile import perf; e = perf.problem(); print(e.message); print(e.hint)"
    done = subprocess.run(
        ["setpriv", f"--reuid={account.uid}", f"--regid={account.gid}", "--clear-groups", "--",
         sys.executable, "-c", code],
        capture_output=True, text=True, timeout=120, cwd="/",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"kernel.perf_event_paranoid is {paranoid}" in done.stdout, done.stdout
    assert "run pglab as root" in done.stdout, done.stdout
