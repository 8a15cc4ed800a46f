"""sysbench as a phase's runner."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from pglab.campaign.spec import PhaseSpec
from pglab.records import PhaseResult
from pglab.telemetry.watch import PhaseWatch
from pglab.workloads.interface import NothingAfter, PhaseContext
from pglab.workloads.sysbench import invoke as sysbench
from pglab.workloads.sysbench.load import Target


@dataclass
class Sysbench(NothingAfter):
    """sysbench's OLTP test on this machine, connected where pglab's own session is; the
    watch is told its pid (its CPU is the client's)."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext
    _target: Target | None = None

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack
        with self.context.server.connect() as conn:
            self._target = Target.of(conn)

    def run(self, watch: PhaseWatch) -> PhaseResult:
        assert self._target is not None, "prepare first"
        c = self.context
        return sysbench.run_phase(
            self.phase,
            self.iteration,
            self._target,
            c.workdir / f"{self.phase.name}-sysbench",
            on_progress=c.on_progress,
            on_spawn=watch.set_client,
            cpus=c.client_cpus,
            limits=c.client_limits,
        )
