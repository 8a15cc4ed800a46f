"""``[os]``: the operating system under the server as part of a point (issue 39): kernel
settings (``sysctl``), the block device's queue under the storage (``io_scheduler``,
``read_ahead_kb``, ``nr_requests``), ``transparent_hugepages`` and ``drop_caches`` before each
run; at the top level, per variant (``[variants.NAME] os = {...}``) and as ``[matrix.os]`` axes
(``os.io_scheduler``, ``os.sysctl.vm.dirty_bytes``); the CPUs the server and pgbench may use
(``cpus``, ``client_cpus``: their processes' affinity, ``run/affinity``); the server's memory
limit, page cache included (``memory``: a cgroup, ``run/memory_limit``). Checked here as far
as the file and the kernel's own tree tell; the devices under the storage are checked before
the first run (``planning/devices.problem``), applied and put back by ``run/os_state``."""

from __future__ import annotations

import resource
from dataclasses import replace
from typing import Any

from pglab.campaign import declared, os_checks, schema
from pglab.campaign.checks import Problems
from pglab.campaign.os_spec import OsSpec
from pglab.campaign.shapes import whole
from pglab.jsonish import TomlTable


def os_table(table: Any, base: OsSpec, p: Problems, where: str) -> OsSpec:
    """An [os] table (or a variant's os = {...}) over ``base``."""
    if not isinstance(table, dict):
        p.add(where, 'os must be a table, e.g. os = { io_scheduler = "none" }')
        return base
    vals = declared.check(schema.OS, table, p, where, allowed=schema.OS_KEYS)
    upd: TomlTable = {k: v for k, v in vals.items() if k not in ("sysctl", "limits")}
    if "sysctl" in table:
        said = os_checks.check_sysctls(table["sysctl"], p, where)
        upd["sysctl"] = tuple(sorted({**dict(base.sysctl), **said}.items()))
    if "io_scheduler" in upd:
        upd["io_scheduler"] = upd["io_scheduler"].strip()
    if "limits" in table:
        upd["limits"] = _limits(table["limits"], base, p, where)
    spec = replace(base, **upd)
    for key in ("cpus", "client_cpus"):
        if key in upd:
            os_checks.check_cpus(key, upd[key], p, where)
    if "memory" in upd:
        os_checks.check_memory(upd["memory"], p, where)
    return spec


def matrix_axes(table: Any, p: Problems) -> list[tuple[str, tuple[Any, ...]]]:
    """``[matrix.os]``: axes named ``os.KEY`` and ``os.sysctl.NAME``, each value checked."""
    where = "[matrix.os]"
    if not isinstance(table, dict):
        p.add(where, "must be a table of KEY = [values] (sysctl = { NAME = [values] })")
        return []
    p.unknown_keys(where, table, schema.OS_KEYS)
    axes = []
    flat = [(k, v) for k, v in table.items() if k != "sysctl"]
    sysctl = table.get("sysctl", {})
    if not isinstance(sysctl, dict):
        p.add(where, "sysctl must be a table of NAME = [values]")
        sysctl = {}
    flat += [(f"sysctl.{name}", v) for name, v in sysctl.items()]
    for key, values in flat:
        if not isinstance(values, list) or not values:
            p.add(where, f"{key} must be a non-empty array of values")
            continue
        for v in values:  # kept as written (the points' labels), checked here
            with_axis(OsSpec(), f"os.{key}", v, p)
        axes.append((f"os.{key}", tuple(values)))
    return axes


def with_axis(spec: OsSpec, name: str, value: Any, p: Problems | None = None) -> OsSpec:
    """``spec`` with the [matrix.os] axis ``name`` (os.KEY, os.sysctl.NAME) set to ``value``."""
    key = name.removeprefix("os.")
    if key.startswith("sysctl."):
        table: TomlTable = {"sysctl": {key.removeprefix("sysctl."): value}}
    else:
        table = {key: value}
    return os_table(table, spec, p or Problems(), f"[matrix.os] {key}")


LIMITS = {"nofile": resource.RLIMIT_NOFILE, "nproc": resource.RLIMIT_NPROC}


def _limits(val: Any, base: OsSpec, p: Problems, where: str) -> tuple[tuple[str, int], ...]:
    """Limits up to the kernel's where pglab may set hard ones (CAP_SYS_RESOURCE, as root),
    else soft ones up to this process's hard ones."""
    if not isinstance(val, dict):
        p.add(where, "limits must be a table, e.g. limits = { nofile = 4096, nproc = 4096 }")
        return base.limits
    p.unknown_keys(f"{where} limits", val, set(LIMITS))
    out = dict(base.limits)
    for key, which in LIMITS.items():
        if key not in val:
            continue
        n, hard = whole(val[key]), resource.getrlimit(which)[1]
        top = os_checks.limit_ceiling(key, hard)
        if n is None or not 1 <= n <= top:
            why = (
                "the kernel's most"
                if os_checks.can_raise_limits()
                else "the hard limit "
                "pglab runs under: raise it with ulimit -H first, or run pglab as root"
            )
            p.add(
                where,
                f"limits {key} = {val[key]!r}: expected a whole number from 1 to {top} ({why})",
            )
        else:
            out[key] = n
    return tuple(sorted(out.items()))
