"""The toy kind's runner: ``SELECT count(*) FROM pgbench_accounts`` on pglab's own session,
again and again for the phase's duration."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from pglab.campaign.spec import PhaseSpec
from pglab.records import PgbenchReport, PhaseResult
from pglab.telemetry.watch import PhaseWatch
from pglab.workloads.interface import NothingAfter, PhaseContext

TABLE = "toy.counts"


@dataclass
class ToyCount(NothingAfter):
    phase: PhaseSpec
    iteration: int
    context: PhaseContext

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack

    def run(self, watch: PhaseWatch) -> PhaseResult:
        del watch  # no client process: the counts run in the server
        started, t0 = time.time(), time.perf_counter()
        counts, rows = 0, 0
        with self.context.server.bench_session() as conn:
            while time.perf_counter() - t0 < (self.phase.duration or 1):
                found = conn.execute("SELECT count(*) FROM pgbench_accounts").fetchone()
                rows = int(found[0]) if found else 0
                counts += 1
        elapsed = time.perf_counter() - t0
        report = PgbenchReport(
            tps=counts / elapsed, transactions=counts, failed=0,
            latency_avg_ms=1000 * elapsed / counts, transaction_type="toy counts",
            duration_s=elapsed,
        )  # fmt: skip
        return PhaseResult(
            name=self.phase.name, iteration=self.iteration, measured=self.phase.measured,
            started_at=started, elapsed_s=elapsed, argv=("toy", "count"), report=report,
            tables={TABLE: {"columns": ["counts", "rows"], "rows": [[counts, rows]]}},
        )  # fmt: skip
