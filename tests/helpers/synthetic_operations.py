"""A synthetic campaign of maintenance operations, stored without any server: CREATE INDEX
with 0 and 1 parallel workers (a `parallel` [matrix] axis), repeats of each, every run with its
figures, metrics and a progress series; for the tests of what a person sees of it."""

from __future__ import annotations

import random
from typing import Any

from pglab.campaign.spec import PhaseSpec
from pglab.records import PgbenchReport, PhaseResult, RunResult
from pglab.store.numbers import metrics_of
from pglab.workloads.maintenance.figures import (
    OPERATION_KIND,
    PROGRESS_COLUMNS,
    figures,
    progress_row,
)
from pglab.workloads.work import OperationWork

T0 = 1_790_000_000.0


def fill_operations(store, name: str, repeats: int = 4, seed: int = 4) -> None:
    """Store the campaign ``name``: ~210 MB/s serial, ~330 MB/s with a worker (±2%)."""
    rng = random.Random(seed)
    doc = {"name": name, "repeats": repeats, "workload": {"operation": "create_index"},
           "matrix": {"parallel": [0, 1]}}  # fmt: skip
    store.ensure_campaign(name, doc, None)
    t = T0
    for rep in range(1, repeats + 1):
        for parallel in (0, 1):
            mb_s = (210.0 if parallel == 0 else 330.0) * rng.gauss(1, 0.02)
            store.save_run(_operation_run(name, parallel, rep, mb_s, t))
            t += 10


def _operation_run(name: str, parallel: int, repeat: int, mb_s: float, t0: float) -> RunResult:
    label, key = f"base parallel={parallel}", f"p{parallel}"
    phase = PhaseSpec("index", OperationWork("create_index", parallel=parallel))
    nbytes = 650_000_000
    elapsed = nbytes / 1e6 / mb_s
    figs = figures(phase, elapsed, nbytes, None, parallel, 65536, 1_000_000, 5_000_000)
    rows: list[list[Any]] = []
    for i in range(5):  # scanning the table at a steady pace, then loading the tree
        row = (
            ("building index: scanning table", 4000 * i, 16000, "blocks")
            if i < 4
            else ("building index: loading tuples in tree", 500_000, 1_000_000, "tuples")
        )
        rows.append(progress_row(t0 + 0.5 * i, row, rows))
    progress = {"columns": PROGRESS_COLUMNS, "rows": rows}
    result = PhaseResult("index", 1, True, t0, elapsed, ("CREATE INDEX ...",),
                         PgbenchReport(tps=mb_s, transactions=0, duration_s=elapsed,
                                       figure="MB/s"),
                         tables={OPERATION_KIND: figs.to_table(),
                                 "progress.create_index": progress})  # fmt: skip
    metrics = {"mb_s": mb_s, "phase.index.mb_s": mb_s,
               "phase.index.elapsed_s": elapsed, "phase.index.wal_bytes": 1e6,
               "phase.index.tuples_s": figs.tuples_s or 0.0,
               "phase.index.workers_launched": float(parallel)}  # fmt: skip
    spec = {"variant": "base", "axes": [["parallel", parallel]], "campaign": name,
            "repeat": repeat, "point_key": key, "phases": [], "derived": []}  # fmt: skip
    return RunResult(campaign=name, run_key=f"{key}/{repeat}", point_key=key, repeat=repeat,
                     variant="base", label=label, spec=spec, status="ok", started_at=t0,
                     finished_at=t0 + elapsed + 1, phases=(result,), metrics=metrics_of(metrics),
                     fingerprint={"server_version": "18.6"})  # fmt: skip
