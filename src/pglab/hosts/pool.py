"""A campaign's hosts by name (its ``[hosts.NAME]`` tables, and "local": this machine),
connected on first use and kept until closed; pgbench found on each and its facts read once.
What the checks before a campaign (``planning/preflight``) reach its hosts through; the
executor's ``run/remote.Hosts`` adds the phases run there and the leftovers removed."""

from __future__ import annotations

from collections.abc import Sequence

from pglab.campaign.spec import LOCAL, HostSpec
from pglab.errors import HostError
from pglab.hosts.facts import HostFacts
from pglab.hosts.local import LocalHost
from pglab.hosts.ssh import Remote


class HostPool:
    def __init__(self, specs: Sequence[HostSpec], local_pgbench: str = "pgbench"):
        self.specs = {h.name: h for h in specs}
        self.remotes: dict[str, Remote | LocalHost] = {}
        self.facts: dict[str, HostFacts] = {}
        self.local_pgbench = local_pgbench  # "local" among generators: the run's own pgbench

    def remote(self, name: str) -> Remote | LocalHost:
        if name not in self.remotes:
            self.remotes[name] = LocalHost() if name == LOCAL else Remote(self.specs[name]).open()
        return self.remotes[name]

    def ssh(self, name: str) -> Remote:
        """A host over SSH (not "local")."""
        found = self.remote(name)
        assert isinstance(found, Remote), name
        return found

    def pgbench_of(self, name: str) -> str:
        if name == LOCAL:
            return self.local_pgbench
        spec = self.specs[name]
        return f"{spec.bindir.rstrip('/')}/pgbench" if spec.bindir else "pgbench"

    def check(self, names: Sequence[str]) -> dict[str, HostFacts]:
        """Connect to each host, and read its facts (pgbench must answer --version there)."""
        for name in names:
            if name in self.facts:
                continue
            facts = self.remote(name).facts(self.pgbench_of(name))
            if not (facts.get("pgbench") or "").startswith("pgbench"):
                raise HostError(
                    f"no pgbench at {self.pgbench_of(name)} on {self.remote(name).spec.label}",
                    hint="install PostgreSQL's client programs there, or give bindir = "
                    '"/path/to/bin" in [hosts.NAME]',
                )
            self.facts[name] = facts
        return {n: self.facts[n] for n in names}

    def close(self) -> None:
        for remote in self.remotes.values():
            remote.close()
        self.remotes.clear()
