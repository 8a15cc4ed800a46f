"""``[hosts.NAME]`` of a campaign file: machines pglab reaches over SSH to run pgbench there, and
the ``generators`` a phase names (checked to be hosts of the file, or "local")."""

from __future__ import annotations

import re
from typing import Any

from pglab.campaign.checks import Problems, get
from pglab.campaign.schema import HOST_KEYS
from pglab.campaign.spec import LOCAL, HostSpec, PhaseSpec

_SSH = re.compile(r"^(?:(?P<user>[^@\s]+)@)?(?P<address>[^@\s:]+|\[[0-9a-fA-F:.]+\])$")


def hosts(table: dict[str, Any], p: Problems) -> dict[str, HostSpec]:
    out: dict[str, HostSpec] = {}
    for name, t in table.items():
        where = f"[hosts.{name}]"
        if not isinstance(t, dict):
            p.add(where, 'must be a table (ssh = "user@host", ...)')
            continue
        if str(name) == LOCAL:
            p.add(where, f'"{LOCAL}" is pglab\'s own machine: give the host another name')
            continue
        p.unknown_keys(where, t, HOST_KEYS)
        ssh = t.get("ssh")
        m = _SSH.match(ssh) if isinstance(ssh, str) else None
        if m is None:
            p.add(where, f'ssh = {ssh!r}: expected "user@host" or "host" (the port: port = N)')
            continue
        port = get(t, "port", int, 22, p, where, minimum=1)
        if port > 65535:
            p.add(where, f"port = {port}: expected 1 to 65535")
        paths = {}
        for key in ("identity", "known_hosts", "bindir"):
            val = t.get(key)
            if val is not None and (not isinstance(val, str) or not val.startswith("/")):
                p.add(where, f"{key} = {val!r}: expected an absolute path")
                val = None
            paths[key] = val
        out[str(name)] = HostSpec(
            name=str(name),
            address=m["address"].strip("[]"),
            user=m["user"],
            port=port,
            identity=paths["identity"],
            known_hosts=paths["known_hosts"],
            accept_new=get(t, "accept_new", bool, False, p, where),
            bindir=paths["bindir"],
        )
    return out


def generators(value: Any, p: Problems, where: str) -> tuple[str, ...] | None:
    """A phase's ``generators``: host names (or "local"), each once; None when wrong."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        p.add(where, 'generators must be an array of [hosts] names (or "local")')
        return None
    if len(set(value)) != len(value):
        p.add(where, f"generators = {value}: a host is named twice")
        return None
    if LOCAL in value and len(value) > 1:
        p.add(where, f'generators = {value}: "{LOCAL}" together with other hosts is not '
              "supported yet; name hosts only, or local alone")  # fmt: skip
        return None
    return tuple(value)


def check_references(
    phases: list[tuple[str, PhaseSpec]], known: dict[str, HostSpec], p: Problems
) -> None:
    """Every generator a phase names is a host of the file (or "local"), with a client each."""
    for where, ph in phases:
        for g in ph.generators:
            if g != LOCAL and g not in known:
                hint = f" (hosts: {', '.join(sorted(known))})" if known else " (no [hosts] given)"
                p.add(where, f'generator "{g}" is not a [hosts.NAME] of the file{hint}')
        if len(ph.generators) > ph.clients:
            p.add(
                where,
                f"{len(ph.generators)} generators for {ph.clients} client(s): each needs one",
            )
