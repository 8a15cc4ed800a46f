"""A maintenance operation as a phase's runner."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from pglab.campaign.spec import PhaseSpec
from pglab.records import PhaseResult
from pglab.telemetry.watch import PhaseWatch
from pglab.workloads.interface import NothingAfter, PhaseContext
from pglab.workloads.maintenance import clients, operations


@dataclass
class MaintenanceOperation(NothingAfter):
    """A maintenance operation on pgbench's tables, timed on its own session and watched from
    another; prepared (a VACUUM's dirtying) before the phase is watched."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext
    _op: operations.Operation | None = None

    def prepare(self, stack: contextlib.ExitStack) -> None:
        c = self.context
        client = clients.Client(
            pg_dump=c.binaries.exe("pg_dump"),
            pg_restore=c.binaries.exe("pg_restore"),
            pg_basebackup=c.binaries.exe("pg_basebackup"),
            conninfo=c.server.client_conninfo,
            workdir=c.workdir,
            env=dict(c.server.client_env() or {}),
        )
        prior = c.prior(self.phase.name, self.iteration)
        self._op = stack.enter_context(
            operations.Operation(
                c.server.bench_session, self.phase, client, prior, local=c.server.local_processes
            )
        )

    def run(self, watch: PhaseWatch) -> PhaseResult:
        del watch  # the operation watches its own progress views
        assert self._op is not None, "prepare first"
        return self._op.run(self.iteration, self.context.on_operation)
