"""Faults around storage targets the lab makes (root): pglab interrupted (SIGINT) or killed
(SIGKILL) half-way through a campaign on made filesystems, and a missing mkfs tool. Nothing the
lab made may stay: no mount, no loop device, no backing file, no record; and nothing is made
when a tool is missing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import pytest
from conftest import (
    assert_stopped_cleanly,
    pgbench_measuring,
    pglab_in_background,
    pglab_run_argv,
    wait_for,
)
from helpers.storage_helpers import NOTHING, made_under, need_root_and_tools, undo_storage  # noqa: F401

from pglab.campaign import parse as campaign
from pglab.errors import LabError
from pglab.lab import Lab
from pglab.run import campaign_run
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("undo_storage")]

CAMPAIGN = """
name = "{name}"
order = "sequential"
[targets.journal]
kind = "loop"
fstype = "ext4"
size = "300MB"
mount_options = ["data=journal"]
[targets.wal]
kind = "loop"
fstype = "ext4"
size = "300MB"
mkfs_options = ["-J", "size=4"]
[storage]
wal = "wal"
[server.settings]
max_wal_size = "128MB"  # pg_wal's room on a 300 MB target (pglab checks it before running)
[dataset]
scale = 1
[workload]
clients = 2
duration = {duration}
latency_log = "off"
[matrix]
storage = ["journal"]
clients = [1, 2]
"""


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name
)
def test_pglab_stopped_half_way_leaves_no_storage_behind(
    tmp_path: Path, lab: Lab, no_leftovers, sig: signal.Signals
) -> None:
    """SIGINT or SIGTERM: pglab tears down before it exits. SIGKILL: it cannot, and its record
    says what it made; the next start undoes it, never anything it did not make."""
    need_root_and_tools("mkfs.ext4")
    name = f"storage-{sig.name.lower()}"
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN.format(name=name, duration=6))
    store = tmp_path / "r.sqlite"
    assert made_under(lab.home) == NOTHING
    err_path = tmp_path / "stderr"
    with pglab_in_background(pglab_run_argv(path, lab.home, store), err_path) as proc:
        wait_for(lambda: pgbench_measuring(lab.home), proc, err_path, "a phase")
        during = made_under(lab.home)
        assert len(during["mounts"]) == 2 and len(during["loops"]) == 2, during
        time.sleep(1)
        proc.send_signal(sig)
        proc.wait(timeout=120)
    assert_stopped_cleanly(proc, sig, lab.home, err_path)
    if sig != signal.SIGKILL:
        assert made_under(lab.home) == NOTHING
    else:
        assert made_under(lab.home) == during  # recorded, to be undone at the next start
        for img in (lab.home / "storage").glob("*.img"):
            img.unlink()  # even a backing file deleted while attached does not hide its device
        # a next run that stops early (here: a store path that is a directory) still undoes them
        done = subprocess.run(
            pglab_run_argv(path, lab.home, tmp_path), capture_output=True, text=True
        )
        assert done.returncode == 2 and "not a file" in done.stderr, done.stderr
        assert "tore down a leftover of an earlier pglab" in done.stdout
        assert made_under(lab.home) == NOTHING
    path.write_text(CAMPAIGN.format(name=name, duration=1))
    done = subprocess.run(
        pglab_run_argv(path, lab.home, store),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert made_under(lab.home) == NOTHING
    with open_store(str(store)) as s:
        assert {r.status for r in s.list_runs(name)} == {"ok"}


def test_a_missing_mkfs_tool_stops_before_anything_is_made(
    tmp_path: Path, lab: Lab, no_leftovers, monkeypatch
) -> None:
    """mkfs.xfs hidden from the PATH: an error naming the Debian package before any run, and
    not even the ext4 target listed before it is made."""
    need_root_and_tools("mkfs.ext4")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for d in os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").split(":"):
        if not Path(d).is_dir():
            continue
        for exe in Path(d).iterdir():
            link = bindir / exe.name
            if exe.name != "mkfs.xfs" and not link.exists():
                link.symlink_to(exe)
    monkeypatch.setenv("PATH", str(bindir))
    path = tmp_path / "c.toml"
    path.write_text(
        CAMPAIGN.format(name="no-xfs", duration=1).replace(
            'storage = ["journal"]', 'storage = ["journal", "xfs"]'
        )
        + '[targets.xfs]\nkind = "loop"\nfstype = "xfs"\nsize = "300MB"\n'
    )
    with open_store(str(tmp_path / "r.sqlite")) as store:
        with pytest.raises(LabError) as info:
            campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        assert store.list_runs("no-xfs") == []
    text = str(info.value)
    assert 'storage target "xfs" (loop): mkfs.xfs is not installed' in text, text
    assert "apt-get install xfsprogs" in text, text
    assert "nothing was made" in (info.value.hint or "")
    assert made_under(lab.home) == NOTHING
    assert not (lab.home / "mnt").exists() or list((lab.home / "mnt").iterdir()) == []


def test_a_mount_option_the_kernel_rejects_undoes_what_was_made(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    """The second target fails to mount: the error carries mount's words, no run starts, and
    the first target (made) and the second (half made) are both torn down."""
    need_root_and_tools("mkfs.ext4")
    path = tmp_path / "c.toml"
    path.write_text(
        CAMPAIGN.format(name="bad-option", duration=1).replace(
            'mkfs_options = ["-J", "size=4"]',
            'mkfs_options = ["-J", "size=4"]\nmount_options = ["data=bogus"]',
        )
    )
    with open_store(str(tmp_path / "r.sqlite")) as store:
        with pytest.raises(LabError) as info:
            campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        assert store.list_runs("bad-option") == []
    assert "mount of storage target wal failed" in str(info.value), str(info.value)
    assert "torn down" in (info.value.hint or "")
    assert made_under(lab.home) == NOTHING


class Statuses(QuietEvents):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def status(self, message: str) -> None:
        self.lines.append(message)


def test_never_touches_what_it_did_not_make(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    """A loop device and a tmpfs of someone else's stay as they are through a campaign on made
    filesystems; a dead pglab's record whose mount point now holds someone else's mount is
    reported, and that mount left alone."""
    need_root_and_tools("mkfs.ext4")
    foreign_file = tmp_path / "foreign.img"
    foreign_file.write_bytes(b"\0" * 2**20)
    foreign_dir = tmp_path / "foreign-mnt"
    foreign_dir.mkdir()
    ghost_root = lab.home / "mnt" / "999999-ghost"
    ghost_root.mkdir(parents=True)
    record = lab.home / "storage" / "999999-ghost.json"
    record.parent.mkdir(exist_ok=True)
    record.write_text(json.dumps({
        "owner": {"pid": 999999, "create_time": 0.0}, "name": "ghost", "kind": "tmpfs",
        "root": str(ghost_root), "backing": None, "device": None, "tag": "pglab-999999-ghost",
    }))  # fmt: skip
    run = partial(subprocess.run, capture_output=True, text=True, check=True)
    dev = run(["losetup", "--find", "--show", str(foreign_file)]).stdout.strip()
    try:
        run(["mount", "-t", "tmpfs", "-o", "size=1m", "someone", str(foreign_dir)])
        run(["mount", "-t", "tmpfs", "-o", "size=1m", "someone-else", str(ghost_root)])
        path = tmp_path / "c.toml"
        path.write_text(CAMPAIGN.format(name="not-mine", duration=1))
        events = Statuses()
        with open_store(str(tmp_path / "r.sqlite")) as store:
            out = campaign_run.run_campaign(Executor(lab, store, events), campaign.load(path))
        assert out.ok == 2 and out.failed == 0
        assert any("could not tear down" in line and "ghost" in line and "did not make" in line
                   for line in events.lines), events.lines  # fmt: skip
        mounts = Path("/proc/self/mounts").read_text()
        assert f"someone {foreign_dir} tmpfs" in mounts
        assert f"someone-else {ghost_root} tmpfs" in mounts
        assert str(foreign_file) in run(["losetup", "-a"]).stdout
        assert made_under(lab.home)["loops"] == []
    finally:
        subprocess.run(["umount", str(foreign_dir)], check=False)
        subprocess.run(["umount", str(ghost_root)], check=False)
        subprocess.run(["losetup", "-d", dev], check=False)
        record.unlink(missing_ok=True)
        ghost_root.rmdir()


def test_not_root_stops_before_anything_is_made(tmp_path: Path, lab: Lab) -> None:
    """pglab run as the unprivileged server account: an error saying root is needed, before any
    run, and nothing made (no record, no mount point, no dataset)."""
    if os.geteuid() != 0 or lab.run_as is None:
        pytest.skip("needs root to run pglab as another, unprivileged account")
    home = Path(tempfile.mkdtemp(prefix="pglab-notroot-", dir="/tmp"))
    os.chown(home, lab.run_as.uid, lab.run_as.gid)
    path = home / "c.toml"
    path.write_text(CAMPAIGN.format(name="not-root", duration=1))
    os.chmod(path, 0o644)
    argv = ["setpriv", f"--reuid={lab.run_as.uid}", f"--regid={lab.run_as.gid}",
            "--clear-groups", sys.executable, "-m", "pglab", "run", str(path),
            "--lab-dir", str(home / "lab"), "--store", str(home / "r.sqlite")]  # fmt: skip
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=300, env={**os.environ, "HOME": str(home)}
        )
        if "No module named" in done.stderr or "Permission denied" in done.stderr:
            pytest.skip(f"pglab cannot run as {lab.run_as.user} here: {done.stderr[-200:]}")
        assert done.returncode == 2, done.stderr + done.stdout
        assert (
            'storage target "journal" (loop): pglab makes and mounts it itself, which needs root'
            in done.stderr
        )
        assert "nothing was made" in done.stderr
        assert not (home / "lab" / "storage").exists() and not (home / "lab" / "mnt").exists()
        assert list((home / "lab" / "datasets").iterdir()) == []
        with open_store(str(home / "r.sqlite")) as store:
            assert store.list_runs("not-root") == []
    finally:
        shutil.rmtree(home, ignore_errors=True)
