"""[os] when pglab is stopped mid-run (root): on Ctrl-C or SIGTERM it puts every file back
before it exits; SIGKILLed, the kernel keeps what it set and its journal stays, and the next
pglab that starts puts every file back byte for byte, then runs."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest
from conftest import (
    assert_stopped_cleanly,
    pgbench_measuring,
    pglab_in_background,
    pglab_run_argv,
    wait_for,
)
from helpers.os_helpers import kernel_state
from helpers.storage_helpers import NOTHING, made_under, need_root_and_tools, undo_storage  # noqa: F401

from pglab.lab import Lab

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("undo_storage")]

CAMPAIGN = """
name = "os-killed"
[targets.disk]
kind = "loop"
fstype = "ext4"
size = "300MB"
[storage]
data = "disk"
[server.settings]
max_wal_size = "64MB"
[os]
sysctl = { "vm.dirty_bytes" = "80MB", "vm.swappiness" = 13 }
io_scheduler = "mq-deadline"
nr_requests = 32
[dataset]
scale = 1
[workload]
clients = 1
duration = {duration}
latency_log = "off"
"""


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name
)
def test_stopped_mid_run_puts_back_now_or_at_the_next_start(
    tmp_path: Path, lab: Lab, no_leftovers, sig: signal.Signals
) -> None:
    """Ctrl-C and SIGTERM: pglab puts everything back before it exits. SIGKILL: it cannot;
    the journal stays, and the next start puts it back."""
    need_root_and_tools("mkfs.ext4")
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN.replace("{duration}", "20"))
    store = tmp_path / "r.sqlite"
    before = kernel_state()
    err_path = tmp_path / "stderr"
    with pglab_in_background(pglab_run_argv(path, lab.home, store), err_path) as proc:
        wait_for(lambda: pgbench_measuring(lab.home), proc, err_path, "a phase")
        assert Path("/proc/sys/vm/swappiness").read_text() == "13\n"
        assert Path("/proc/sys/vm/dirty_bytes").read_text() == f"{80 * 2**20}\n"
        proc.send_signal(sig)
        proc.wait(timeout=120)
    assert_stopped_cleanly(proc, sig, lab.home, err_path)
    if sig != signal.SIGKILL:
        assert kernel_state() == before
        assert not list((lab.home / "os").glob("*.json"))
        assert made_under(lab.home) == NOTHING
        return
    assert kernel_state() != before  # left as the killed pglab set it
    assert list((lab.home / "os").glob("*.json"))  # with its journal
    path.write_text(CAMPAIGN.replace("{duration}", "1"))
    done = subprocess.run(
        pglab_run_argv(path, lab.home, store), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "put back kernel settings an earlier, killed pglab had changed" in done.stdout
    assert kernel_state() == before
    assert not list((lab.home / "os").glob("*.json"))
    assert made_under(lab.home) == NOTHING
