"""The storage parts of a campaign file: ``[targets.NAME]`` (filesystems pglab makes, or
existing directories), ``[storage]`` (where PGDATA and pg_wal live, also per variant and as
matrix axes) and ``[storage_bench]`` (pg_test_fsync and fio before the first run)."""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Any

from pglab.campaign import declared, schema
from pglab.campaign.checks import Problems
from pglab.campaign.schema import STORAGE_BENCH_KEYS, STORAGE_KEYS, TARGET_KEYS
from pglab.campaign.spec import (
    TARGET_KINDS,
    StorageBenchSpec,
    StorageSpec,
    TargetKind,
    TargetSpec,
)
from pglab.jsonish import TomlTable

MIN_SIZE = {"tmpfs": 16 * 2**20, "loop": 64 * 2**20, "xfs": 300 * 2**20, "btrfs": 128 * 2**20}


def targets(table: TomlTable, p: Problems) -> dict[str, TargetSpec | None]:
    """``[targets.NAME]`` tables, each checked against the keys its kind takes (a target with
    problems maps to None: references to it are not reported again)."""
    return {str(name): _target(str(name), t, p) for name, t in table.items()}


def _target(name: str, t: Any, p: Problems) -> TargetSpec | None:
    where = f"[targets.{name}]"
    if not isinstance(t, dict):
        p.add(where, "must be a table (kind = ..., ...)")
        return None
    vals = declared.check(schema.TARGETS, t, p, where)
    if "kind" in t and "kind" not in vals:
        return None  # said
    # without kind: a path is a path, a filesystem type a loop device
    kind = vals.get("kind", "path" if "path" in t else "loop" if "fstype" in t else None)
    if kind is None:
        p.add(where, f"kind = None: give kind = one of {', '.join(TARGET_KINDS)}")
        return None
    _keys_of_kind(where, kind, t, p)
    missing = [k for k in schema.TARGET_REQUIRED[kind] if k not in t]
    for key in missing:
        p.add(
            where,
            f"{key} = None: a {kind} target needs {key}, "
            f"{declared.expected(schema.key(schema.TARGETS, key))}",
        )
    if missing or any(k in t and k not in vals for k in TARGET_KEYS[kind]):
        return None  # said
    if kind == "path":
        return TargetSpec(name=name, kind=kind, path=vals["path"])
    upd = _filesystem(where, kind, vals, p)
    return None if upd is None else TargetSpec(name=name, kind=kind, **upd)


def _keys_of_kind(where: str, kind: TargetKind, t: TomlTable, p: Problems) -> None:
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


def _filesystem(where: str, kind: str, vals: TomlTable, p: Problems) -> TomlTable | None:
    """A loop device's or tmpfs's keys (their values checked) as ``TargetSpec`` fields; None
    when the size is too small for the filesystem."""
    fstype = "tmpfs" if kind == "tmpfs" else vals["fstype"]
    low = max(MIN_SIZE[kind], MIN_SIZE.get(str(fstype), 0))
    if vals["size"] < low:
        p.add(
            where,
            f"size = {vals['size']} bytes is too small for {fstype}: at least {low // 2**20} MB",
        )
        return None
    upd = {k: v for k, v in vals.items() if k not in ("kind", "fstype")}
    for key, sep in (("mkfs_options", None), ("mount_options", ",")):
        if isinstance(upd.get(key), str):  # one string: split at spaces (mount: commas)
            upd[key] = tuple(x for x in upd[key].split(sep) if x)
    return {**upd, "fstype": fstype}


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
    table: TomlTable,
    base: StorageSpec,
    targets: dict[str, TargetSpec | None],
    p: Problems,
    where: str,
) -> StorageSpec:
    declared.check(schema.STORAGE, table, p, where, allowed=STORAGE_KEYS)
    upd = {}
    for key in ("data", "wal"):
        if key in table:
            upd[key] = target_ref(table[key], targets, p, f"{where} {key}")
    return replace(base, **upd)


def storage_bench(table: TomlTable, present: bool, p: Problems) -> StorageBenchSpec:
    found = declared.check(
        schema.STORAGE_BENCH, table, p, "[storage_bench]", allowed=STORAGE_BENCH_KEYS
    )
    return StorageBenchSpec(**{"enabled": present, **found})
