"""What pglab reads of a host (one of the campaign's ``[hosts.NAME]``, or this machine as
"local"): the same keys from ``ssh.Remote.facts`` and ``local.LocalHost.facts``.

A :class:`HostFacts` is what the checks before a run look at (pgbench answers there, the RAM a
server on the host may use) and what a run's fingerprint keeps of its generator hosts
(``Fingerprint.generators``, name -> facts) and of the host of a server pglab made there.
"""

from __future__ import annotations

from typing import TypedDict


class HostFacts(TypedDict):
    """A host as a run's fingerprint records it."""

    host: str  # its name in the campaign ("local": this machine)
    address: str
    hostname: str  # uname -n
    kernel: str  # uname -sr
    cpus: int | None
    ram_bytes: int | None
    pgbench: str | None  # what its pgbench --version said (None: none answered)
