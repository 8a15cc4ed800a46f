"""A captured workload's replay as a phase's runner."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from pglab.campaign.spec import LOCAL, PhaseSpec
from pglab.records import PhaseResult
from pglab.telemetry.watch import PhaseWatch
from pglab.workloads.interface import NothingAfter, PhaseContext
from pglab.workloads.replay import engine, on_hosts
from pglab.workloads.replay import phase as replay
from pglab.workloads.replay.work import ReplayWork


@dataclass
class Replay(NothingAfter):
    """A captured workload replayed by pgreplay on the variant's server (``replay/phase``):
    its sessions connect as their users to their databases, which the dataset restored;
    with generator hosts, their sessions split between them (``on_hosts``)."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack

    def run(self, watch: PhaseWatch) -> PhaseResult:
        del watch  # pgreplay's pid is not told: its CPU is counted with the machine's
        c = self.context
        offset = c.server.log_size()
        env = c.server.client_env()
        players = None
        if self.phase.remote:  # the sessions split between the generator hosts

            def players(host: str, port: int) -> list[engine.Player]:
                return [
                    on_hosts.here(host, port, speed_of(self.phase), env)
                    if name == LOCAL  # "local" among them: this machine's pgreplay
                    else on_hosts.player(c.hosts.ssh(name), host, port, speed_of(self.phase), env)
                    for name in self.phase.generators
                ]

        return replay.run_phase(
            self.phase,
            self.iteration,
            c.server.client_conninfo,
            env,
            c.workdir / f"{self.phase.name}-{self.iteration}-replay",
            lambda: c.server.log_since(offset),
            players,
        )


def speed_of(phase: PhaseSpec) -> float:
    """pgreplay's speed of a replaying phase."""
    assert isinstance(phase.work, ReplayWork), "a replaying phase"
    return phase.work.speed
