"""The TPC-H-like kit's power run as a phase's runner."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace

from pglab.campaign.spec import PhaseSpec
from pglab.records import PhaseResult, TableJson
from pglab.telemetry.watch import PhaseWatch
from pglab.workloads.interface import NothingAfter, PhaseContext
from pglab.workloads.tpch import phase as tpch
from pglab.workloads.tpch.plans import TABLE as PLANS


@dataclass
class TpchPower(NothingAfter):
    """kit = "tpch": each query's plan from one extra execution (before the watching, so not
    timed), then the power run on a session as pgbench's are (the run's session settings)."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext
    _seed: int = 0
    _plans: TableJson | None = None

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack
        self._seed = tpch.seed_of(self.phase)
        self.context.on_operation(f"tpch: the plans of {len(tpch.queries_of(self.phase))} queries")
        self._plans = tpch.explain(self.context.server.bench_session, self.phase, self._seed)

    def run(self, watch: PhaseWatch) -> PhaseResult:
        del watch  # the queries run in the server: no client process of pglab's to watch
        assert self._plans is not None, "prepare first"
        c = self.context
        result = tpch.run_phase(
            c.server.bench_session, self.phase, self.iteration, self._seed, c.on_operation
        )
        return replace(result, tables={**result.tables, PLANS: self._plans})
