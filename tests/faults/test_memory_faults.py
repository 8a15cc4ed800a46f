"""[os] memory when pglab is SIGKILLed mid-run (root): the server dies with it and its memory
cgroup stays behind, empty, with its journal; the next pglab removes the group before it runs
(saying so), and its own run's group is gone after it too."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import (
    assert_stopped_cleanly,
    lab_processes,
    pgbench_measuring,
    pglab_in_background,
    pglab_run_argv,
    wait_for,
)

from pglab.campaign import cgroups
from pglab.lab import Lab

pytestmark = pytest.mark.integration

CAMPAIGN = """
name = "memory-killed"
[server.settings]
shared_buffers = "16MB"
[os]
memory = "96MB"
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 2
duration = {duration}
latency_log = "off"
"""


def _memory_group(pid: int) -> str:
    text = Path(f"/proc/{pid}/cgroup").read_text()
    return next(ln.split(":", 2)[2] for ln in text.splitlines()
                if ":memory:" in ln or ln.startswith("0::"))  # fmt: skip


def test_a_killed_pglab_leaves_its_group_for_the_next_to_remove(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    place = cgroups.place()
    assert isinstance(place, cgroups.Place), f"no memory cgroup can be made here: {place}"
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN.replace("{duration}", "60"))
    store, err = tmp_path / "r.sqlite", tmp_path / "stderr"
    with pglab_in_background(pglab_run_argv(path, lab.home, store), err) as proc:
        wait_for(lambda: pgbench_measuring(lab.home), proc, err, "a phase")
        (journal,) = (lab.home / "cgroups").glob("*.json")
        group = Path(json.loads(journal.read_text())["group"])
        assert group.parent == place.parent and group.is_dir()
        server = [p for p in lab_processes(lab.home) if p.name() == "postgres"]
        assert server and {_memory_group(p.pid).rsplit("/", 1)[-1] for p in server} == {
            group.name}  # fmt: skip
        assert _memory_group(proc.pid) != _memory_group(server[0].pid)  # pglab's own: as it was
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    assert_stopped_cleanly(proc, signal.SIGKILL, lab.home, err)
    assert group.is_dir() and journal.exists()  # left as the killed pglab had it
    assert (group / "cgroup.procs").read_text().split() == []  # its server died with it
    path.write_text(CAMPAIGN.replace("{duration}", "1"))
    done = subprocess.run(pglab_run_argv(path, lab.home, store), capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    said = f"removed the memory cgroup an earlier, killed pglab had made: {group}"
    assert said in done.stdout, done.stdout
    assert not group.exists()
    assert not list((lab.home / "cgroups").glob("*.json"))  # the second run's: gone too
