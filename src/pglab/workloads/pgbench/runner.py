"""pgbench's runners: here (``LocalPgbench``), or on the phase's generator hosts at once,
merged (``GeneratorPgbench``); ``runner`` picks one by the phase's generators."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace

from pglab.campaign.spec import PhaseSpec
from pglab.pgbench import invoke as pgbench
from pglab.pgbench.generators import TABLE as GENERATORS
from pglab.records import PhaseResult
from pglab.telemetry.watch import PhaseWatch
from pglab.workloads.interface import NothingAfter, PhaseContext, PhaseRunner


def runner(phase: PhaseSpec, iteration: int, context: PhaseContext) -> PhaseRunner:
    """pgbench on the phase's generator hosts when it names some, else here."""
    if phase.remote:
        return GeneratorPgbench(phase, iteration, context)
    return LocalPgbench(phase, iteration, context)


@dataclass
class LocalPgbench(NothingAfter):
    """pgbench on this machine; the watch is told its pid (its CPU is the client's)."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack  # nothing to make first

    def run(self, watch: PhaseWatch) -> PhaseResult:
        c = self.context
        return pgbench.run_phase(
            c.binaries,
            self.phase,
            self.iteration,
            c.server.pgbench_conn_args(),
            c.workdir,
            on_progress=c.on_progress,
            on_spawn=watch.set_client,
            env=c.server.client_env(),
            cpus=c.client_cpus,
            limits=c.client_limits,
        )


@dataclass
class GeneratorPgbench(NothingAfter):
    """pgbench on the phase's generator hosts at once, merged; each host's figures in the
    result's ``generators`` table."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack

    def run(self, watch: PhaseWatch) -> PhaseResult:
        del watch  # pgbench runs elsewhere: no pid of this machine's to watch
        c = self.context
        result, table = c.hosts.run_phase(
            self.phase,
            self.iteration,
            c.server.pgbench_conn_args(),
            c.server.client_env() or {},
            c.workdir / f"{self.phase.name}-{self.iteration}",
            c.on_progress,
            c.client_limits,
        )
        return replace(result, tables={**result.tables, GENERATORS: table})
