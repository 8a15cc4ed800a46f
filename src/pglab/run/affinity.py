"""``[os] cpus`` and ``client_cpus``: the CPUs a run's server and load generator may use, as
CPU affinity (``sched_setaffinity``), the portable way: it needs no cgroup hierarchy (a
machine with cgroup v1 mounted, or a container, has no cgroup v2 cpuset to write), and it is
inherited by every process the postmaster forks after it is set.

The server gets the first N CPUs pglab may use, the load generator the last M (by default
those the server does not get; when there are none, the server's: shared, and the plan says
so). pglab's own process is never confined (its telemetry samplers keep every CPU): the
server's processes are confined once it runs (the postmaster first, then those it forked
before, so none is missed), pgbench and sysbench are started under ``taskset``. An affinity
ends with its process, so nothing is left to put back after a run, a failed one or a killed
pglab; a server kept for the next point is given that point's CPUs (every CPU when it asks
none)."""

from __future__ import annotations

import contextlib
import os

import psutil

from pglab.campaign.os_checks import cpu_list, usable_cpus
from pglab.campaign.os_spec import OsSpec
from pglab.fingerprints import CpuFacts


def server_cpus(spec: OsSpec) -> frozenset[int] | None:
    """The CPUs the server is confined to (None: every CPU pglab may use)."""
    if spec.cpus is None:
        return None
    return frozenset(usable_cpus()[: spec.cpus])


def client_cpus(spec: OsSpec) -> frozenset[int] | None:
    """The CPUs pgbench and sysbench are confined to (None: every CPU pglab may use)."""
    usable = usable_cpus()
    if spec.client_cpus is not None:
        return frozenset(usable[-spec.client_cpus :])
    if spec.cpus is None:
        return None
    rest = usable[spec.cpus :]
    return frozenset(rest) if rest else None


def shares(spec: OsSpec) -> bool:
    """Whether the load generator runs on CPUs the server was confined to."""
    server = server_cpus(spec)
    if server is None:
        return False
    client = client_cpus(spec)
    return client is None or bool(client & server)


def plan_words(spec: OsSpec) -> str:
    """What the plan says of a point's CPUs ("" when it confines nothing)."""
    server, client = server_cpus(spec), client_cpus(spec)
    if server is None and client is None:
        return ""
    words = "server on every CPU" if server is None else f"server on {_cpus(server)}"
    if client is None:
        return f"{words}, pgbench shares them (no CPU left over)"
    return f"{words}, pgbench on {_cpus(client)}" + (" (shared)" if shares(spec) else "")


def _cpus(cpus: frozenset[int]) -> str:
    return f"CPU{'s' if len(cpus) > 1 else ''} {cpu_list(cpus)}"


def confine(pid: int, cpus: frozenset[int]) -> None:
    """The process ``pid`` and every process below it confined to ``cpus``: the parent first,
    so that what it forks from now on inherits them, then those it had forked."""
    os.sched_setaffinity(pid, cpus)
    with contextlib.suppress(psutil.NoSuchProcess):
        for child in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess, ProcessLookupError):
                os.sched_setaffinity(child.pid, cpus)


class ServerCpus:
    """The CPUs of the executor's local server: set after its settings are applied (a restart
    starts a new postmaster), and given back when a later point asks for none."""

    def __init__(self) -> None:
        self.confined_pid: int | None = None

    def set(self, pid: int | None, spec: OsSpec) -> CpuFacts | None:
        """The server ``pid`` given the CPUs ``spec`` asks; what its postmaster reads back and
        where pgbench runs (None when nothing is confined)."""
        want = server_cpus(spec)
        client = client_cpus(spec)
        if pid is None:
            return None
        if want is None and self.confined_pid != pid and client is None:
            return None  # never confined: it has every CPU already
        confine(pid, want if want is not None else frozenset(usable_cpus()))
        self.confined_pid = pid if want is not None else None
        return {
            "server": sorted(os.sched_getaffinity(pid)),
            "client": sorted(client) if client is not None else usable_cpus(),
            "shared": shares(spec),
        }
