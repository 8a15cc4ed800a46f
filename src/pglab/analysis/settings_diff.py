"""Two sets of runs' settings and environment side by side: what differs between them."""

from __future__ import annotations

from collections.abc import Sequence

from pglab.analysis.comparisons import (
    SettingDiff,
)
from pglab.postgres import build
from pglab.rows import StoredRun

_ENV_KEYS = (
    "server_version",
    "pgbench_version",
    "pgbench_from",
    "source",
    "server",
    "client",
    "kernel",
    "cpu_model",
    "cpus",
    "ram_bytes",
    "governor",
    "thp",
)


# settings that name where the lab put a server, not how it ran: never a difference
_LAB_PLUMBING = frozenset(
    (
        "unix_socket_directories",
        "port",
        "data_directory",
        "hba_file",
        "ident_file",
        "config_file",
        "external_pid_file",
        "listen_addresses",
        "log_directory",
        "log_filename",
    )
)


def settings_diff(runs_a: Sequence[StoredRun], runs_b: Sequence[StoredRun]) -> list[SettingDiff]:
    """What differs between the environments and server settings the two sides' runs reported
    (dicts with a ``fingerprint``): rows of name, a, b; a side whose runs disagree says
    "varies", a setting a side did not report is "default"."""
    ea, eb = _environment(runs_a), _environment(runs_b)
    out = []
    for name in dict.fromkeys([*ea, *eb]):
        va, vb = ea.get(name, "default"), eb.get(name, "default")
        if va != vb:
            out.append(SettingDiff(name=name, a=va, b=vb))
    return out


def _environment(runs: Sequence[StoredRun]) -> dict[str, str]:
    """name -> value for the environment keys and every reported setting, "varies" when the
    runs disagree."""
    per_run = []
    for run in runs:
        fp = run.fingerprint
        env = {k: str(v) for k in _ENV_KEYS if (v := fp.get(k)) is not None}
        env.update(build.facts(fp))
        env.update({k: str(v) for k, v in (fp.get("server_build") or {}).items()})
        if ram := fp.get("ram_bytes"):
            env["ram_bytes"] = f"{ram / 2**30:.1f} GiB"
        mount = fp.get("pgdata_mount") or {}
        if mount.get("fstype"):
            env["pgdata filesystem"] = f"{mount['fstype']} ({mount.get('mount_options', '')})"
        for name, s in sorted((fp.get("settings") or {}).items()):
            if name not in _LAB_PLUMBING:
                env[name] = str(s.get("shown", s.get("setting")))
        per_run.append(env)
    if not per_run:
        return {}
    merged: dict[str, str] = {}
    for name in dict.fromkeys(k for env in per_run for k in env):
        values = {env.get(name, "default") for env in per_run}
        merged[name] = values.pop() if len(values) == 1 else "varies"
    return merged
