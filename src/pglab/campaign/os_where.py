"""Where a campaign's ``[os]`` applies, checked when the file is read: on this machine under a
server pglab makes here (as root); on a server's host and the generator hosts of its phases
through ``sudo -n`` (``[hosts.NAME] sudo = true``) for ``sysctl`` and ``limits`` (and
``drop_caches`` on a server's host), and ``cpus`` on a server's host (its processes' affinity:
no sudo) (``run/os_hosts``); never under an existing server (dsn), whose machine pglab does
not reach.

``limits`` alone need no sudo: they are pgbench's then (here, and on generator hosts up to the
hard limits of their SSH user); with ``sudo = true`` a server's host gives them to the server
too, and hard limits are raised there as root."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pglab.campaign import os_checks
from pglab.campaign.checks import Problems
from pglab.campaign.os_spec import OsSpec
from pglab.campaign.spec import LOCAL, HostSpec, PhaseSpec, RunSpec, ServerSpec

ON_HOSTS = ("sysctl", "limits", "cpus", "drop_caches")  # what [os] does on a server's host
PLACES = ("cpus", "client_cpus", "memory")  # the processes pglab starts here: theirs


def asked(spec: OsSpec, axes: Iterable[str] = ()) -> set[str]:
    """The [os] keys a variant asks for, with its [matrix.os] axes (os.KEY, os.sysctl.NAME)."""
    keys = set(spec.identity())
    for axis in axes:
        keys.add(axis.removeprefix("os.").split(".")[0])
    return keys


def generator_hosts(phases: Iterable[PhaseSpec]) -> list[str]:
    """The hosts the phases run pgbench on (not this machine)."""
    return sorted({g for ph in phases if ph.remote for g in ph.generators if g != LOCAL})


def hosts_of(run: RunSpec) -> list[str]:
    """The hosts whose kernel a run sets: its server's host and its generator hosts."""
    if not run.os.sysctl or run.server.host is None:
        return []
    return list(dict.fromkeys([run.server.host, *generator_hosts(run.phases)]))


def sudo_hosts(run: RunSpec, hosts: Mapping[str, HostSpec]) -> list[str]:
    """The hosts a run acts on as root: those whose kernel it sets, and those with sudo =
    true that start its server or pgbench under its limits."""
    found = hosts_of(run)
    if run.os.drop_caches and run.server.host is not None:
        found.append(run.server.host)
    if run.os.limits and run.server.host is not None:
        found += [
            h
            for h in [run.server.host, *generator_hosts(run.phases)]
            if h in hosts and hosts[h].sudo
        ]
    return list(dict.fromkeys(found))


def check(
    variants: Sequence[tuple[str, ServerSpec, OsSpec, tuple[PhaseSpec, ...]]],
    axes: Sequence[str],
    hosts: Mapping[str, HostSpec],
    p: Problems,
) -> None:
    """Each variant's [os] where it can apply: (name, server, os, phases) each; pglab is root
    where it writes this machine's kernel (a server here), said once."""
    here = False
    for name, server, spec, phases in variants:
        keys = asked(spec, axes)
        if not server.over_network:
            here = here or bool(keys - set(PLACES))  # the kernel's files: as root
            continue
        if not keys - {"limits"}:
            continue
        where = f"[variants.{name}]" if name != "base" else "[os]"
        if server.host is None and keys <= {"limits", *PLACES}:
            p.add(
                where,
                "[os] sets the CPUs and memory of the processes pglab starts on "
                "this machine, and this server runs elsewhere: leave cpus, client_cpus "
                "and memory out for it (confine it there yourself: taskset, a "
                "cgroup)",
            )
            continue
        if server.host is None:
            p.add(
                where,
                "[os] sets this machine's kernel as root, and this server runs "
                "elsewhere: an existing server's (dsn) machine is not pglab's; set them "
                "there yourself (the runs record the host's kernel) and leave [os] out for "
                "it",
            )
            continue
        others = sorted(keys - set(ON_HOSTS))
        if others:
            p.add(
                where,
                f"[os] sets {', '.join(others)} only under a server on this machine; "
                f'on host "{server.host}" pglab applies sysctl, limits and drop_caches (through '
                "sudo) and cpus: leave the others out for it (the runs record the host's "
                "kernel)",
            )
        root = [server.host] if "drop_caches" in keys else []
        root += [server.host, *generator_hosts(phases)] if "sysctl" in keys else []
        for host in dict.fromkeys(root):
            found = hosts.get(host)
            if found is not None and not found.sudo:
                role = "the server's host" if host == server.host else "a load generator"
                p.add(
                    where,
                    f'[os] sets the kernel of host "{host}" ({role}) through sudo, '
                    f"which [hosts.{host}] does not allow: give sudo = true there (its SSH "
                    "user must be allowed to run sudo -n without a password; "
                    "docs/guides/os.md says which commands)",
                )
    if here:
        os_checks.check_root(p, "[os]")
