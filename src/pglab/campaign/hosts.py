"""``[hosts.NAME]`` of a campaign file: machines pglab reaches over SSH to run pgbench there, and
the ``generators`` a phase names (checked to be hosts of the file, or "local")."""

from __future__ import annotations

import re

from pglab.campaign import declared, schema
from pglab.campaign.checks import Problems
from pglab.campaign.schema import HOST_KEYS
from pglab.campaign.spec import LOCAL, HostSpec, PhaseSpec, ServerSpec, StorageSpec
from pglab.campaign.workload import hosts_share_clients
from pglab.jsonish import TomlTable
from pglab.workloads.work import paced

# schema.SSH_PATTERN (what the declaration checks), with its parts named
_SSH = re.compile(r"^(?:(?P<user>[^@\s]+)@)?(?P<address>[^@\s:]+|\[[0-9a-fA-F:.]+\])$")
_SSH_KEY = schema.key(schema.HOSTS, "ssh")


def hosts(table: TomlTable, p: Problems) -> dict[str, HostSpec]:
    out: dict[str, HostSpec] = {}
    for name, t in table.items():
        where = f"[hosts.{name}]"
        if not isinstance(t, dict):
            p.add(where, 'must be a table (ssh = "user@host", ...)')
            continue
        if str(name) == LOCAL:
            p.add(where, f'"{LOCAL}" is pglab\'s own machine: give the host another name')
            continue
        vals = declared.check(schema.HOSTS, t, p, where, allowed=HOST_KEYS)
        if "ssh" not in t:
            p.add(where, f"ssh = None: a host needs ssh, {declared.expected(_SSH_KEY)}")
        m = _SSH.match(vals["ssh"]) if "ssh" in vals else None
        if m is None:
            continue
        out[str(name)] = HostSpec(
            name=str(name),
            address=m["address"].strip("[]"),
            user=m["user"],
            port=vals.get("port", 22),
            identity=vals.get("identity"),
            known_hosts=vals.get("known_hosts"),
            accept_new=vals.get("accept_new", False),
            bindir=vals.get("bindir"),
            sudo=vals.get("sudo", False),
        )
    return out


def check_references(
    phases: list[tuple[str, PhaseSpec]], known: dict[str, HostSpec], p: Problems
) -> None:
    """Every generator a phase names is a host of the file (or "local"), with a client each
    where they share its clients (``workload.hosts_share_clients``)."""
    for where, ph in phases:
        for g in ph.generators:
            if g != LOCAL and g not in known:
                hint = f" (hosts: {', '.join(sorted(known))})" if known else " (no [hosts] given)"
                p.add(where, f'generator "{g}" is not a [hosts.NAME] of the file{hint}')
        # paced terminals: 10 per warehouse, at least 10 (their clients follow from the scale)
        if hosts_share_clients(ph) and len(ph.generators) > (10 if paced(ph.work) else ph.clients):
            p.add(
                where,
                f"{len(ph.generators)} generators for {ph.clients} client(s): each needs one",
            )


def server_host(
    table: TomlTable,
    vals: TomlTable,
    base: ServerSpec,
    dsn: str | None,
    p: Problems,
    where: str,
) -> str | None:
    """``[server] host`` (its value checked by its declaration: ``vals``): a name (checked
    against [hosts] later), not with a dsn; "local" and none are this machine. A variant's own
    dsn drops the base's host."""
    if "host" in table and "host" not in vals:
        return None  # said
    host = vals.get("host", base.host if "dsn" not in table else None)
    if host == LOCAL:
        return None
    if host is not None and dsn is not None:
        p.add(
            where,
            "host and dsn together: a server is made by pglab on a host, or exists "
            "already (dsn), not both",
        )
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
                p.add(
                    where,
                    f'storage target "{target.name}" is a {target.kind}: on host '
                    f'"{server.host}" pglab mounts nothing (its SSH user is not root, as a '
                    'server needs); mount it there and give it as kind = "path"',
                )
