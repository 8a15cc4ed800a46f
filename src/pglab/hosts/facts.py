"""What pglab reads of a host (one of the campaign's ``[hosts.NAME]``, or this machine as
"local"): the same keys from ``ssh.Remote.facts`` and ``local.LocalHost.facts``.

A :class:`HostFacts` is what the checks before a run look at (pgbench answers there, the RAM a
server on the host may use) and what a run's fingerprint keeps of its generator hosts
(``Fingerprint.generators``, name -> facts) and of the host of a server pglab made there.
"""

from __future__ import annotations

from pglab.fingerprints import HostFacts as HostFacts  # core: a fingerprint keeps them
