"""The storage parts of a campaign file: ``[targets.NAME]`` (filesystems pglab makes, or
existing directories), ``[storage]`` (where PGDATA and pg_wal live, also per variant and as
matrix axes) and ``[storage_bench]`` (pg_test_fsync and fio before the first run)."""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Any

from pglab.campaign.checks import Problems, get
from pglab.campaign.schema import STORAGE_BENCH_KEYS, STORAGE_KEYS, TARGET_KEYS
from pglab.campaign.spec import (
    FILESYSTEMS,
    TARGET_KINDS,
    StorageBenchSpec,
    StorageSpec,
    TargetSpec,
)
from pglab.units import parse_size

MIN_SIZE = {"tmpfs": 16 * 2**20, "loop": 64 * 2**20, "xfs": 300 * 2**20, "btrfs": 128 * 2**20}


def targets(table: dict[str, Any], p: Problems) -> dict[str, TargetSpec | None]:
    """``[targets.NAME]`` tables, each checked against the keys its kind takes (a target with
    problems maps to None: references to it are not reported again)."""
    return {str(name): _target(str(name), t, p) for name, t in table.items()}


def _target(name: str, t: Any, p: Problems) -> TargetSpec | None:
    where = f"[targets.{name}]"
    if not isinstance(t, dict):
        p.add(where, "must be a table (kind = ..., ...)")
        return None
    kind = t.get("kind", "path" if "path" in t else "loop" if "fstype" in t else None)
    if kind not in TARGET_KINDS:
        p.add(where, f"kind = {kind!r}: use one of {', '.join(TARGET_KINDS)}")
        return None
    _keys_of_kind(where, kind, t, p)
    if kind == "path":
        path = t.get("path")
        if not isinstance(path, str) or not path.startswith("/"):
            p.add(where, f"path = {path!r}: expected an absolute directory path")
            return None
        return TargetSpec(name=name, kind=kind, path=path)
    upd = _filesystem(where, kind, t, p)
    return None if upd is None else TargetSpec(name=name, kind=kind, **upd)


def _keys_of_kind(where: str, kind: str, t: dict[str, Any], p: Problems) -> None:
    """Each key of the table that its kind does not take: another kind's, or unknown."""
    allowed = TARGET_KEYS[kind] | {"kind"}
    for key in t:
        if key not in allowed:
            every = set().union(*TARGET_KEYS.values()) | {"kind"}
            if key in every:
                p.add(
                    where,
                    f'key "{key}" does not apply to kind = "{kind}" '
                    f"(it takes: {', '.join(sorted(allowed))})",
                )
            else:
                p.unknown_keys(where, {key: None}, allowed)


def _filesystem(where: str, kind: str, t: dict[str, Any], p: Problems) -> dict[str, Any] | None:
    """A loop device's or tmpfs's keys as ``TargetSpec`` fields; None when one is wrong."""
    upd: dict[str, Any] = {}
    fstype = "tmpfs" if kind == "tmpfs" else t.get("fstype")
    if kind == "loop" and fstype not in FILESYSTEMS:
        p.add(where, f"fstype = {fstype!r}: use one of {', '.join(FILESYSTEMS)}")
        return None
    upd["fstype"] = fstype
    size = _size(t.get("size"), where, p)
    if size is None:
        return None
    low = max(MIN_SIZE[kind], MIN_SIZE.get(str(fstype), 0))
    if size < low:
        p.add(where, f"size = {t['size']!r} is too small for {fstype}: at least "
              f"{low // 2**20} MB")  # fmt: skip
        return None
    upd["size"] = size
    for key in ("mkfs_options", "mount_options"):
        if key in t:
            opts = _options(t[key], where, key, p)
            if opts is not None:
                upd[key] = opts
    if "dir" in t:
        if not isinstance(t["dir"], str) or not t["dir"].startswith("/"):
            p.add(where, f"dir = {t['dir']!r}: expected an absolute directory path")
        else:
            upd["dir"] = t["dir"]
    if "direct_io" in t:
        upd["direct_io"] = get(t, "direct_io", bool, False, p, where)
    return upd


def _size(val: Any, where: str, p: Problems) -> int | None:
    """Bytes from a whole number or "300MB", "1GB", "512M", "1GiB" (units of 1024)."""
    if isinstance(val, int) and not isinstance(val, bool) and val > 0:
        return val
    if isinstance(val, str) and (size := parse_size(val)) is not None:
        return size
    p.add(where, f'size = {val!r}: expected a size such as "300MB" or "2GB" (units of 1024)')
    return None


def _options(val: Any, where: str, key: str, p: Problems) -> tuple[str, ...] | None:
    """A list of strings, or one string: mount options split at commas, mkfs options at spaces."""
    if isinstance(val, str):
        return tuple(x for x in val.split("," if key == "mount_options" else None) if x)
    if isinstance(val, list) and all(isinstance(x, str) and x for x in val):
        return tuple(val)
    p.add(where, f"{key} = {val!r}: expected a list of strings")
    return None


def target_ref(
    name: Any, targets: dict[str, TargetSpec | None], p: Problems, where: str
) -> TargetSpec | None:
    if isinstance(name, str) and name in targets:
        return targets[name]  # None when the target has problems of its own
    close = difflib.get_close_matches(str(name), sorted(targets), n=1)
    hint = f' — did you mean "{close[0]}"?' if close else ""
    known = ", ".join(sorted(targets)) or "none: define one as [targets.NAME]"
    p.add(where, f"storage target {name!r} is not defined{hint} (targets: {known})")
    return None


def storage(
    table: dict[str, Any],
    base: StorageSpec,
    targets: dict[str, TargetSpec | None],
    p: Problems,
    where: str,
) -> StorageSpec:
    p.unknown_keys(where, table, STORAGE_KEYS)
    upd = {}
    for key in ("data", "wal"):
        if key in table:
            upd[key] = target_ref(table[key], targets, p, f"{where} {key}")
    return replace(base, **upd)


def storage_bench(table: dict[str, Any], present: bool, p: Problems) -> StorageBenchSpec:
    where = "[storage_bench]"
    p.unknown_keys(where, table, STORAGE_BENCH_KEYS)
    return StorageBenchSpec(
        enabled=get(table, "enabled", bool, present, p, where),
        seconds=get(table, "seconds", int, 1, p, where, minimum=1),
        fio=get(table, "fio", bool, False, p, where),
    )
