"""A single client's commit rate against the fsync rate of the WAL's storage.

With one client and synchronous commit, every commit waits for its WAL flush: the commit rate
cannot beat the rate at which the WAL's storage completes the ``wal_sync_method`` in effect
(``pg_test_fsync``'s one-8kB-write figure). A ratio near 1 says the run was bound by the sync;
well below 1, by something else (CPU, the client); above 1, the storage does not really sync
(or the run's storage is not the one measured). ``commit_vs_fsync`` gives a ``VsFsync``
(printed as it is by ``pglab show RUN --json``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

from pglab.fingerprints import mount_options
from pglab.records import StorageRow
from pglab.rows import RunRow, StoredRun
from pglab.targets.output import sync_rate

DEFAULT_SYNC_METHOD = "fdatasync"  # PostgreSQL's default on Linux
READ_ONLY = {"select-only"}


class RunStorage(StorageRow):
    """A stored storage result on the storage runs used: as which (``roles``: data, WAL), by
    which points' runs, and how it was matched (``device`` or ``path``)."""

    roles: set[str]
    points: set[str]
    matched_by: str


class VsFsync(TypedDict):
    """A run's single-client commits against its WAL storage's syncs."""

    commits_per_s: float  # the mean TPS of its single-client write phases
    method: str  # the wal_sync_method in effect
    fsync_per_s: float  # pg_test_fsync's rate of that method
    ratio: float  # commits_per_s / fsync_per_s
    storage_id: int | None  # the pg_test_fsync result's id (pglab storage)
    matched_by: str  # "device" (device, fs and mount options) or "path"
    storage_path: str  # where it measured


def commit_vs_fsync(run: RunRow, storage: list[StorageRow]) -> VsFsync | None:
    """The ``VsFsync`` of a stored run (``Store.get_run``) with single-client write phases
    and synchronous commit, given stored pg_test_fsync results (``list_storage_results``);
    None when the run is not such a run or no result matches the WAL's storage."""
    if not isinstance(run, StoredRun) or not run.ok:
        return None
    fp = run.fingerprint
    settings = {k: v.get("setting") for k, v in (fp.get("settings") or {}).items()}
    if settings.get("synchronous_commit") == "off" or settings.get("fsync") == "off":
        return None
    alone = {
        p["name"]
        for p in run.spec.get("phases", [])
        if _single_client_write(p.get("clients"), {s.get("builtin") for s in p.get("scripts", [])})
    }
    rates = [ph.tps for ph in run.phases if ph.measured and ph.tps and ph.name in alone]
    if not rates:
        return None
    mount = fp.get("pg_wal_mount") or fp.get("pgdata_mount") or {}
    found = match_storage(mount, fp.get("pgdata"), storage, before=run.finished_at)
    if found is None:
        return None
    row, matched_by = found
    method = settings.get("wal_sync_method") or DEFAULT_SYNC_METHOD
    fsync_per_s = sync_rate(row["results"], method)
    if not fsync_per_s:
        return None
    commits = sum(rates) / len(rates)
    return VsFsync(
        commits_per_s=commits,
        method=method,
        fsync_per_s=fsync_per_s,
        ratio=commits / fsync_per_s,
        storage_id=row["id"],
        matched_by=matched_by,
        storage_path=row["target_path"],
    )


def _single_client_write(clients: object, builtins: set[str | None]) -> bool:
    """A phase of one client whose scripts write (a custom script counts as writing)."""
    return clients == 1 and not builtins <= READ_ONLY


def match_storage(
    mount: Mapping[str, object],
    pgdata: str | None,
    storage: list[StorageRow],
    before: float | None = None,
    tool: str = "pg_test_fsync",
) -> tuple[StorageRow, str] | None:
    """The ``tool`` result on the same device, filesystem and mount options as ``mount``;
    else one whose directory holds ``pgdata`` (or is held by it). Of several, the latest
    measured ``before`` (the run's end: a loop device is reused by later filesystems), else
    the latest."""
    fsync_rows = [r for r in storage if r.get("tool") == tool]
    # as stored: mount and superblock options together where the fingerprint has them
    key = (
        mount.get("device"),
        mount.get("fstype"),
        mount_options(mount),
    )
    if all(key):
        same = [r for r in fsync_rows if (r["device"], r["fstype"], r["mount_options"]) == key]
        if same:
            return _latest(same, before), "device"
    if pgdata:
        near = [r for r in fsync_rows if _related(r["target_path"], pgdata)]
        if near:
            return _latest(near, before), "path"
    return None


def _latest(rows: list[StorageRow], before: float | None) -> StorageRow:
    earlier = [r for r in rows if before is None or r["measured_at"] <= before]
    return max(earlier or rows, key=lambda r: r["measured_at"])


def _related(a: str, b: str) -> bool:
    a, b = a.rstrip("/") + "/", b.rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


def storage_of_runs(runs: Sequence[StoredRun], storage: list[StorageRow]) -> list[RunStorage]:
    """The stored storage results (pg_test_fsync, fio) measured on the storage that stored
    runs (``Store.get_run``) kept their data or WAL on, oldest first: each result row with
    ``roles`` ({"data", "WAL"}), ``points`` (the labels of the runs on it) and ``matched_by``."""
    found: dict[int, RunStorage] = {}
    for run in runs:
        if not run.ok:
            continue
        fp = run.fingerprint
        for role, mount, path in (
            ("data", fp.get("pgdata_mount"), fp.get("pgdata")),
            ("WAL", fp.get("pg_wal_mount"), fp.get("pg_wal")),
        ):
            if not mount:
                continue
            for tool in ("pg_test_fsync", "fio"):
                hit = match_storage(mount, path, storage, run.finished_at, tool)
                if hit is None:
                    continue
                row, how = hit
                assert row["id"] is not None  # a stored result
                use = found.setdefault(
                    row["id"], RunStorage(**row, roles=set(), points=set(), matched_by=how)
                )
                use["roles"].add(role)
                use["points"].add(run.label)
    return [found[i] for i in sorted(found)]
