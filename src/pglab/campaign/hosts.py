"""``[hosts.NAME]`` of a campaign file: machines pglab reaches over SSH to run pgbench there, and
the ``generators`` a phase names (checked to be hosts of the file, or "local")."""

from __future__ import annotations

import re
from typing import Any

from pglab.campaign.checks import Problems, get
from pglab.campaign.schema import HOST_KEYS
from pglab.campaign.spec import LOCAL, HostSpec, PhaseSpec, ServerSpec, StorageSpec

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


def server_host(
    table: dict[str, Any], base: ServerSpec, dsn: str | None, p: Problems, where: str
) -> str | None:
    """``[server] host``: a name (checked against [hosts] later), not with a dsn; "local" and
    none are this machine. A variant's own dsn drops the base's host."""
    host = table.get("host", base.host if "dsn" not in table else None)
    if host is not None and not (isinstance(host, str) and host):
        p.add(where, 'host must be the name of a [hosts.NAME] table, e.g. host = "db1"')
        return None
    if host == LOCAL:
        return None
    if host is not None and dsn is not None:
        p.add(where, "host and dsn together: a server is made by pglab on a host, or exists "
              "already (dsn), not both")  # fmt: skip
    return host


def check_server_hosts(
    variants: list[tuple[str, ServerSpec, StorageSpec]], known: dict[str, HostSpec], p: Problems
) -> None:
    """A server's ``host`` is a host of the file; its storage targets are paths there (a
    filesystem the host has mounted: pglab mounts nothing on a host)."""
    for where, server, storage in variants:
        if server.host is None:
            continue
        if server.host not in known:
            hint = f" (hosts: {', '.join(sorted(known))})" if known else " (no [hosts] given)"
            p.add(where, f'host = "{server.host}" is not a [hosts.NAME] of the file{hint}')
        for target in (storage.data, storage.wal):
            if target is not None and target.kind != "path":
                p.add(where, f'storage target "{target.name}" is a {target.kind}: on host '
                      f'"{server.host}" pglab mounts nothing (its SSH user is not root, as a '
                      'server needs); mount it there and give it as kind = "path"')  # fmt: skip
