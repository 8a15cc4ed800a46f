"""A workload kit's scripts, run by pgbench, as a phase's runner."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace

from pglab.campaign.spec import PhaseSpec
from pglab.records import PhaseResult
from pglab.telemetry.watch import PhaseWatch
from pglab.workloads.interface import PhaseContext
from pglab.workloads.kits import load as kit_load
from pglab.workloads.kits.work import KitWork
from pglab.workloads.kits.work.kits import KITS
from pglab.workloads.pgbench import runner as pgbench


@dataclass
class KitPgbench:
    """A workload kit's scripts, run by pgbench here or on the generator hosts. Before the
    watching, the kit's refreshed SQL (``Kit.refresh``); around pgbench, its counters
    (``load.COUNTERS_TABLE``: TPC-C's orders written, from which NOPM); after the watching,
    its consistency conditions checked on its data (``load.CONSISTENCY_TABLE``: it reads
    every order line, so it is neither measured nor sampled)."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext

    @property
    def kit(self) -> str:
        assert isinstance(self.phase.work, KitWork), "a kit's phase"
        return self.phase.work.kit

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack
        if KITS[self.kit].refresh:
            with self.context.server.connect() as conn:
                kit_load.refresh(conn, self.kit)

    def run(self, watch: PhaseWatch) -> PhaseResult:
        c = self.context
        runner = pgbench.runner(self.phase, self.iteration, c)
        if not KITS[self.kit].has("counters"):
            return runner.run(watch)
        with c.server.connect() as conn:
            before = kit_load.counters(conn, self.kit)
        result = runner.run(watch)
        with c.server.connect() as conn:
            after = kit_load.counters(conn, self.kit)
        table = kit_load.counters_table(before, after)
        return replace(result, tables={**result.tables, kit_load.COUNTERS_TABLE: table})

    def finish(self, result: PhaseResult) -> PhaseResult:
        if not KITS[self.kit].has("consistency"):
            return result
        with self.context.server.connect() as conn:
            table = kit_load.check(conn, self.kit)
        return replace(result, tables={**result.tables, kit_load.CONSISTENCY_TABLE: table})
