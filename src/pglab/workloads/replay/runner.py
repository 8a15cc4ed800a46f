"""A captured workload's replay as a phase's runner."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from pglab.campaign.spec import PhaseSpec
from pglab.records import PhaseResult
from pglab.telemetry.watch import PhaseWatch
from pglab.workloads.interface import NothingAfter, PhaseContext
from pglab.workloads.replay import phase as replay


@dataclass
class Replay(NothingAfter):
    """A captured workload replayed by pgreplay on the variant's server (``replay/phase``):
    its sessions connect as their users to their databases, which the dataset restored."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack

    def run(self, watch: PhaseWatch) -> PhaseResult:
        del watch  # pgreplay's pid is not told: its CPU is counted with the machine's
        c = self.context
        offset = c.server.log_size()
        return replay.run_phase(
            self.phase,
            self.iteration,
            c.server.client_conninfo,
            c.server.client_env(),
            c.workdir / f"{self.phase.name}-{self.iteration}-replay",
            lambda: c.server.log_since(offset),
        )
