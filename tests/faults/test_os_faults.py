"""[os] when pglab is stopped mid-run (root): on Ctrl-C or SIGTERM it puts every file back
before it exits; SIGKILLed, the kernel keeps what it set and its journal stays, and the next
pglab that starts puts every file back byte for byte, then runs."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from conftest import assert_stopped_cleanly, lab_processes, pglab_in_background, wait_for
from os_helpers import kernel_state
from storage_helpers import NOTHING, made_under, need_root_and_tools, undo_storage  # noqa: F401

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


def _argv(path: Path, lab: Lab, store: Path) -> list[str]:
    return [sys.executable, "-m", "pglab", "run", str(path),
            "--lab-dir", str(lab.home), "--store", str(store)]  # fmt: skip


def _pgbench_running(home: Path) -> bool:
    for p in lab_processes(home):
        try:
            if p.name() == "pgbench" and "-i" not in p.cmdline():
                return True
        except psutil.Error:
            continue
    return False


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
    with pglab_in_background(_argv(path, lab, store), err_path) as proc:
        wait_for(lambda: _pgbench_running(lab.home), proc, err_path, "a phase")
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
    done = subprocess.run(_argv(path, lab, store), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "put back kernel settings an earlier, killed pglab had changed" in done.stdout
    assert kernel_state() == before
    assert not list((lab.home / "os").glob("*.json"))
    assert made_under(lab.home) == NOTHING
