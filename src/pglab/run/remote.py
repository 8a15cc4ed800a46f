"""The campaign's hosts, for the executor: the pool of ``hosts/pool.py`` (connected on first
use and kept for the campaign; load generators' facts read once), their clocks measured before
every phase they run; what a killed pglab left on them removed at the start; all closed when
the campaign ends (also on errors and Ctrl-C)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pglab.campaign.spec import PhaseSpec
from pglab.errors import HostError
from pglab.hosts.pool import HostPool
from pglab.lab import Lab
from pglab.pgbench import generators as remote_pgbench
from pglab.pgbench.invoke import ProgressCallback
from pglab.postgres import on_host
from pglab.records import PhaseResult, TableJson
from pglab.run import os_hosts


class Hosts(HostPool):
    """The pool, and what the executor does on its hosts."""

    def run_phase(
        self,
        phase: PhaseSpec,
        iteration: int,
        conn_args: list[str],
        env: Mapping[str, str],
        workdir: Path,
        on_progress: ProgressCallback | None = None,
        limits: Mapping[str, int] | None = None,
    ) -> tuple[PhaseResult, TableJson]:
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
            gens,
            phase,
            iteration,
            conn_args,
            env,
            workdir,
            on_progress=on_progress,
            rlimits=limits,
        )

    def clean_leftovers(self, lab: Lab) -> list[str]:
        """Servers and directories a killed pglab left on this campaign's hosts (its postmaster
        ended with the SSH link already; stopped here if it did not), removed, and the kernel
        settings it set on those with sudo = true put back; a line each."""
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
        # [os] a killed pglab set on hosts it may act on as root: put back
        return lines + os_hosts.put_back_leftovers(
            self, [n for n, s in self.specs.items() if s.sudo]
        )


# a postmaster still running on a cluster in the directory (its pid file names it, its command
# line names the directory) gets QUIT, then the directory (only one make_dir made) goes
_CLEAN = (
    'for f in "$0"/*/postmaster.pid; do p=$(head -n 1 "$f" 2>/dev/null); '
    'if [ -n "$p" ] && grep -q "$0" "/proc/$p/cmdline" 2>/dev/null; then kill -QUIT "$p"; '
    "sleep 1; fi; done; "
    'case "$0" in */pglab-*) rm -rf -- "$0";; esac'
)
