"""The campaign's hosts, for the executor: connected on first use and kept for the campaign;
load generators' facts read once, their clocks measured before every phase they run; what a
killed pglab left on them removed at the start; all closed when the campaign ends (also on
errors and Ctrl-C)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pglab.campaign.spec import LOCAL, HostSpec, PhaseSpec
from pglab.errors import HostError
from pglab.hosts.local import LocalHost
from pglab.hosts.ssh import Remote
from pglab.lab import Lab
from pglab.pgbench import generators as remote_pgbench
from pglab.pgbench.invoke import ProgressCallback
from pglab.postgres import on_host
from pglab.records import PhaseResult


class Hosts:
    def __init__(self, specs: Sequence[HostSpec], local_pgbench: str = "pgbench"):
        self.specs = {h.name: h for h in specs}
        self.remotes: dict[str, Remote | LocalHost] = {}
        self.facts: dict[str, dict[str, Any]] = {}
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

    def check(self, names: Sequence[str]) -> dict[str, dict[str, Any]]:
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

    def run_phase(
        self,
        phase: PhaseSpec,
        iteration: int,
        conn_args: list[str],
        env: Mapping[str, str],
        workdir: Path,
        on_progress: ProgressCallback | None = None,
    ) -> tuple[PhaseResult, dict[str, Any]]:
        facts = self.check(phase.generators)
        gens = []
        for name in phase.generators:
            offset, uncertainty = self.remote(name).clock_offset()
            gens.append(
                remote_pgbench.Generator(
                    remote=self.remote(name),
                    pgbench=self.pgbench_of(name),
                    cpus=facts[name].get("cpus") or 1,
                    offset_s=offset,
                    uncertainty_s=uncertainty,
                )
            )
        return remote_pgbench.run_phase(
            gens, phase, iteration, conn_args, env, workdir, on_progress=on_progress
        )

    def clean_leftovers(self, lab: Lab) -> list[str]:
        """Servers and directories a killed pglab left on this campaign's hosts (its postmaster
        ended with the SSH link already; stopped here if it did not), removed; a line each."""
        lines = []
        for info in on_host.leftovers(lab):
            host, path = info["host"], info["dir"]
            if host not in self.specs:
                continue
            try:
                self.ssh(host).run(["sh", "-c", _CLEAN, path], check=False)
            except HostError as exc:
                lines.append(f"warning: could not remove {path} on {host}: {exc.message}")
                continue
            on_host.forget(lab, host, path)
            lines.append(f"removed what an earlier pglab left on {host}: {path}")
        return lines

    def close(self) -> None:
        for remote in self.remotes.values():
            remote.close()
        self.remotes.clear()


# a postmaster still running on a cluster in the directory (its pid file names it, its command
# line names the directory) gets QUIT, then the directory (only one make_dir made) goes
_CLEAN = (
    'for f in "$0"/*/postmaster.pid; do p=$(head -n 1 "$f" 2>/dev/null); '
    'if [ -n "$p" ] && grep -q "$0" "/proc/$p/cmdline" 2>/dev/null; then kill -QUIT "$p"; '
    "sleep 1; fi; done; "
    'case "$0" in */pglab-*) rm -rf -- "$0";; esac'
)
