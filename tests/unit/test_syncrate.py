"""The single-client commit rate against the fsync rate of the WAL's storage (pure function)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pglab.analysis.syncrate import commit_vs_fsync, match_storage
from pglab.rows import PhaseRow, StoredRun
from pglab.targets.output import parse_pg_test_fsync

DATA = Path(__file__).resolve().parents[1] / "data" / "storage"
DISK = parse_pg_test_fsync((DATA / "pg18_test_fsync_disk.txt").read_text())
TMPFS = parse_pg_test_fsync((DATA / "pg18_test_fsync_tmpfs.txt").read_text())
VDA = {"fstype": "ext4", "device": "/dev/vda", "mount_options": "rw,relatime"}


def storage_row(i: int, results: dict, at: float, path: str = "/var/tmp", **mount) -> dict:
    m = {**VDA, **mount}
    return {"id": i, "tool": "pg_test_fsync", "measured_at": at, "target_path": path,
            "results": results, **m}  # fmt: skip


def phase(idx: int, name: str, measured: bool, tps: float) -> PhaseRow:
    return PhaseRow(idx, name, 1, measured, 0.0, 10.0, [], tps, None, None, None, None, None,
                    {}, "")  # fmt: skip


def run(clients: int = 1, script: str = "tpcb-like", settings: dict | None = None,
        finished_at: float = 1e12, **kw) -> StoredRun:  # fmt: skip
    fp = {
        "pgdata": "/var/lib/pglab/clusters/w1",
        "pgdata_mount": {"mountpoint": "/", **VDA},
        "settings": {k: {"setting": v} for k, v in (settings or {}).items()},
        **kw,
    }
    return StoredRun(
        id=1, campaign="c", run_key="p/1", point_key="p", variant="v", label="v", repeat=1,
        status="ok", tps=3079.4, started_at=0.0, finished_at=finished_at, error=None,
        fingerprint=fp,
        spec={"phases": [
            {"name": "warm", "clients": 4, "scripts": [{"builtin": "select-only"}]},
            {"name": "main", "clients": clients, "scripts": [{"builtin": script}]},
        ]},
        phases=(phase(0, "warm", False, 9000.0), phase(1, "main", True, 3079.4)),
    )  # fmt: skip


STORED = [
    storage_row(1, DISK, 100.0),
    storage_row(2, TMPFS, 200.0, path="/mnt/t", fstype="tmpfs", device="tmpfs"),
    storage_row(3, DISK, 50.0),  # older, same device
]


def test_commit_rate_against_fdatasync_of_the_same_device() -> None:
    got = commit_vs_fsync(run(), STORED)
    assert got == {
        "commits_per_s": 3079.4,
        "method": "fdatasync",
        "fsync_per_s": 6158.737,
        "ratio": pytest.approx(0.5, rel=1e-4),
        "storage_id": 1,
        "matched_by": "device",
        "storage_path": "/var/tmp",
    }


def test_the_wal_sync_method_in_effect_and_pg_wal_elsewhere() -> None:
    got = commit_vs_fsync(run(settings={"wal_sync_method": "open_datasync"}), STORED)
    assert got["method"] == "open_datasync" and got["fsync_per_s"] == 6520.857
    on_tmpfs = run(pg_wal_mount={**VDA, "fstype": "tmpfs", "device": "tmpfs"})
    got = commit_vs_fsync(on_tmpfs, STORED)
    assert got["storage_id"] == 2 and got["fsync_per_s"] == 725964.481


@pytest.mark.parametrize(
    "r",
    [
        run(clients=4),
        run(script="select-only"),
        run(settings={"synchronous_commit": "off"}),
        run(settings={"fsync": "off"}),
        replace(run(), status="failed"),
        run(pgdata_mount={"fstype": "xfs", "device": "/dev/sdb", "mount_options": "rw"}),
    ],
    ids=["4 clients", "read-only", "async commit", "fsync off", "failed", "no storage result"],
)
def test_not_comparable(r: StoredRun) -> None:
    assert commit_vs_fsync(r, STORED) is None


def test_superblock_options_tell_apart_two_filesystems_on_one_loop_device() -> None:
    loop = {"fstype": "ext4", "device": "/dev/loop0", "mount_options": "rw,noatime"}
    rows = [
        storage_row(1, DISK, 1.0, device="/dev/loop0", mount_options="rw,noatime,data=journal"),
        storage_row(2, TMPFS, 2.0, device="/dev/loop0", mount_options="rw,noatime,data=ordered"),
    ]
    found = match_storage({**loop, "options": "rw,noatime,data=journal"}, None, rows)
    assert found is not None and found[0]["id"] == 1
    assert match_storage({**loop, "options": "rw,noatime,data=writeback"}, None, rows) is None


def test_the_result_measured_before_the_run_wins_over_a_later_one() -> None:
    rows = [storage_row(1, DISK, 100.0), storage_row(2, DISK, 300.0), storage_row(3, DISK, 900.0)]
    assert match_storage(VDA, None, rows, before=500.0)[0]["id"] == 2
    assert match_storage(VDA, None, rows, before=50.0)[0]["id"] == 3  # none before: the latest
    assert match_storage(VDA, None, rows)[0]["id"] == 3
    assert commit_vs_fsync(run(finished_at=150.0), rows)["storage_id"] == 1


def test_match_by_path_when_the_mount_facts_differ() -> None:
    rows = [storage_row(7, DISK, 1.0, path="/var/lib/pglab", mount_options="rw,noatime")]
    found = match_storage(VDA, "/var/lib/pglab/clusters/w1", rows)
    assert found is not None and found[1] == "path" and found[0]["id"] == 7
    assert match_storage(VDA, "/srv/other", rows) is None
    assert match_storage(VDA, "/var/lib/pglabx", rows) is None  # a prefix is not a parent
