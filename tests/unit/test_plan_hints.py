"""What a campaign's runs go by from its stored runs, read with the plan (``planning/hints``),
never in the middle of a run: each point's most TPS by phase (its log's sampling rate) and an
operation's progress in the point's latest run that went well (its ETA)."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

from helpers import synthetic_runs

from pglab.planning import hints
from pglab.store import open_store


def test_phase_tps_reads_each_phase_s_tps_from_the_metrics() -> None:
    metrics = {"tps": 9.0, "phase.main.tps": 12.5, "phase.read.tps": 3.0, "phase.x.lat": 1.0}
    assert hints.phase_tps(metrics) == {"main": 12.5, "read": 3.0}


def test_each_point_gets_its_most_tps_and_failed_runs_count_for_nothing(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "r.sqlite")) as store:
        synthetic_runs.fill(store, "h", variants=("base",), scripts=("select-only",),
                            clients=(1, 4), repeats=3, seconds=5, failed=1)  # fmt: skip
        rows = store.list_runs("h")
        got = hints.read(store, "h")
        assert hints.read(store, "another") == {}
    for point in {r.point_key for r in rows}:
        ok = [r.metrics["phase.main.tps"] for r in rows if r.point_key == point and r.ok]
        assert got[point].tps == {"main": max(ok)}
        assert got[point].priors == {}  # no operation phase asked for its progress


def test_an_operation_s_progress_is_its_phase_s_progress_table() -> None:
    phase = synthetic_runs._phase(100.0, 3, 50.0, 1, random.Random(1))
    assert hints.priors_of([phase]) == {}
    rows = [[0.0, 0.1], [1.0, 0.6]]
    table = {"progress.vacuum": {"columns": ["t", "f"], "rows": rows}}
    timed = dataclasses.replace(phase, name="vacuum", tables=table)
    prior = hints.priors_of([timed])[("vacuum", 1)]
    assert prior.rows == rows and prior.ended == phase.started_at + phase.elapsed_s
