"""A short campaign on filesystems the lab makes itself (root): the stored runs carry the
filesystem type and mount options of PGDATA and pg_wal, and nothing made is left behind."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from helpers.storage_helpers import NOTHING, made_under, need_root_and_tools, undo_storage  # noqa: F401

from pglab.campaign import parse as campaign
from pglab.lab import Lab
from pglab.run import campaign_run
from pglab.run.executor import Executor
from pglab.store import open_store

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("undo_storage")]

TWO_EXT4 = """
name = "two-ext4"
order = "sequential"

[targets.ordered]
kind = "loop"
fstype = "ext4"
size = "300MB"
mkfs_options = ["-J", "size=8"]
mount_options = ["noatime", "data=ordered"]

[targets.writeback]
kind = "loop"
fstype = "ext4"
size = "300MB"
mount_options = ["noatime", "data=writeback"]
direct_io = true

[targets.wal]
kind = "tmpfs"
size = "200MB"

[storage]
wal = "wal"

[server.settings]
max_wal_size = "128MB"  # pg_wal's room on the 200 MB tmpfs (pglab checks it before running)

[dataset]
scale = 1

[workload]
script = "tpcb-like"
clients = 2
duration = 2
latency_log = "off"

[matrix]
storage = ["ordered", "writeback"]
"""


def test_a_campaign_on_two_made_filesystems(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    need_root_and_tools("mkfs.ext4")
    path = tmp_path / "c.toml"
    path.write_text(TWO_EXT4)
    before = made_under(lab.home)
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        runs = [store.get_run(i) for i in out.run_ids]
    assert [r.status for r in runs] == ["ok", "ok"], [r.error for r in runs]
    for run, mode in zip(runs, ("ordered", "writeback"), strict=True):
        fp = run.fingerprint
        data, wal = fp["pgdata_mount"], fp["pg_wal_mount"]
        assert data["fstype"] == "ext4" and data["device"].startswith("/dev/loop"), data
        assert "noatime" in data["options"].split(","), data
        assert f"data={mode}" in data["options"].split(","), data
        assert data["scheduler"], data  # the loop device's queue
        assert data["block_device"].startswith("7:"), data  # loop devices are major 7
        assert data["loop_backing_file"].startswith(str(lab.home)), data
        assert data["loop_backing"]["fstype"], data  # and the disk under the loop file
        assert data["loop_direct_io"] is (mode == "writeback"), data
        assert wal["fstype"] == "tmpfs" and "size=204800k" in wal["options"], wal
        assert wal["mountpoint"] != data["mountpoint"]
        assert fp["storage"]["data"]["name"] == mode and fp["storage"]["wal"]["name"] == "wal"
        assert fp["storage"]["data"]["mkfs"][0] == "mkfs.ext4"
        owner = lab.run_as.uid if lab.run_as else os.getuid()
        assert fp["storage"]["data"]["root_owner_uid"] == owner
        assert fp["storage"]["wal"]["root_owner_uid"] == owner
        assert run.spec["storage"]["data"]["mount_options"] == ["noatime", f"data={mode}"]
        assert run.tps > 0
    assert "-J" in runs[0].fingerprint["storage"]["data"]["mkfs"]
    assert (
        runs[0].fingerprint["pgdata_mount"]["mountpoint"]
        != (runs[1].fingerprint["pgdata_mount"]["mountpoint"])
    )
    assert made_under(lab.home) == before == NOTHING


def test_a_path_target_gets_its_own_directory_and_leaves_nothing(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    """kind = "path": PGDATA in a directory of the lab's own inside the given one; pg_wal on
    another (given) directory through the symlink; both removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="pglab-path-", dir="/tmp"))  # reachable by the server
    base.chmod(0o755)
    data_dir, wal_dir = base / "data", base / "wal"
    for d in (data_dir, wal_dir):
        d.mkdir(mode=0o755)
    path = tmp_path / "c.toml"
    path.write_text(
        f"""
name = "path-target"
[targets.d]
path = "{data_dir}"
[targets.w]
path = "{wal_dir}"
[storage]
data = "d"
wal = "w"
[dataset]
scale = 1
[workload]
clients = 1
duration = 1
latency_log = "off"
"""
    )
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        (run,) = [store.get_run(i) for i in out.run_ids]
    assert run.status == "ok", run.error
    fp = run.fingerprint
    assert fp["pgdata"].startswith(f"{data_dir}/pglab-")
    assert fp["pg_wal"].startswith(f"{wal_dir}/pglab-")
    assert list(data_dir.iterdir()) == [] and list(wal_dir.iterdir()) == []
    shutil.rmtree(base)


XFS_BTRFS = """
name = "xfs-btrfs"
[targets.xfs]
kind = "loop"
fstype = "xfs"
size = "300MB"
mount_options = ["noatime", "logbufs=8"]
[targets.btrfs]
kind = "loop"
fstype = "btrfs"
size = "300MB"
mkfs_options = ["-m", "single"]
mount_options = ["noatime", "nodatacow"]
[server.settings]
max_wal_size = "128MB"  # a copy and room for pg_wal on 300 MB (checked before running)
[dataset]
scale = 1
[workload]
clients = 1
duration = 1
latency_log = "off"
[matrix]
storage = ["xfs", "btrfs"]
"""


def test_xfs_and_btrfs(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    """Both other filesystems, with their own options; btrfs reports an anonymous device number
    for its mount, so the block device is found by name (and the disk sampler still works)."""
    need_root_and_tools("mkfs.xfs", "mkfs.btrfs")
    path = tmp_path / "c.toml"
    path.write_text(XFS_BTRFS)
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        runs = {store.get_run(i).label: store.get_run(i) for i in out.run_ids}
    for fs, option in (("xfs", "logbufs=8"), ("btrfs", "nodatacow")):
        run = runs[f"storage={fs}"]
        assert run.status == "ok", run.error
        mount = run.fingerprint["pgdata_mount"]
        assert mount["fstype"] == fs and option in mount["options"].split(","), mount
        assert run.fingerprint["pg_wal_mount"]["fstype"] == fs  # pg_wal inside PGDATA
        assert mount["block_device"].startswith("7:"), mount
        kinds = {k for per_phase in run.series.values() for k in per_phase}
        assert any("os.disk" in k for k in kinds), (fs, kinds)
    assert made_under(lab.home) == NOTHING
