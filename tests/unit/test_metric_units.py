"""The key tables of a run's metrics and timings (``pglab.metric_units``): every metric the run
computes has a unit, and the run's figure is named from its headline metrics, never guessed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab import metric_units, workloads
from pglab.campaign.parse import load
from pglab.planning.plan import make_plan
from pglab.records import PgbenchReport, PhaseResult, ProgressSample
from pglab.run.metrics import run_metrics
from pglab.store.numbers import metrics_json
from pglab.workloads.maintenance.figures import OPERATION_KIND, OperationFigures

ROOT = Path(__file__).resolve().parents[2]


def _pgbench(name: str, tps: float) -> PhaseResult:
    progress = tuple(ProgressSample(t=float(t), tps=tps + t % 3) for t in range(30))
    report = PgbenchReport(tps=tps, transactions=int(tps * 30), failed=0, latency_avg_ms=2.0)
    return PhaseResult(name, 1, True, 0.0, 30.0, (), report, progress=progress)


def _operation(name: str) -> PhaseResult:
    figs = OperationFigures("vacuum", 2.0, 10**7, 5.0, 2, 2, 2, 65536, wal_bytes=10**6,
                            tuples=10**5, tuples_s=5e4, leader_cpu_s=1.0, workers_cpu_s=0.5,
                            io_read_bytes=10**6)  # fmt: skip
    report = PgbenchReport(tps=figs.mb_s, transactions=0, duration_s=figs.elapsed_s)
    return PhaseResult(
        name, 1, True, 0.0, 2.0, (), report, tables={OPERATION_KIND: figs.to_table()}
    )


def test_every_metric_of_pgbench_phases_and_of_operations_has_a_unit() -> None:
    run = make_plan(load(ROOT / "examples" / "first-campaign.toml")).runs[0]
    metrics = {**metrics_json(run_metrics(run, [_pgbench("main", 100.0)])),
               **metrics_json(run_metrics(run, [_operation("vacuum")]))}  # fmt: skip
    assert {
        "tps",
        "tps_steady",
        "phase.main.drift_pct",
        "mb_s",
        "phase.vacuum.io_read_mb_s",
    } <= set(metrics)
    assert {name: metric_units.metric_unit(name) for name in metrics if
            metric_units.metric_unit(name) is None} == {}  # fmt: skip
    assert metric_units.metric_unit("phase.main.latency_avg_ms") == "ms"
    assert metric_units.metric_unit("q07_s") == "s"
    assert metric_units.metric_unit("a_derived_ratio") is None


@pytest.mark.parametrize(
    ("metrics", "figure", "value"),
    [
        ({"tps": 100.0}, "tps", 100.0),
        ({"mb_s": 5.0, "phase.vacuum.mb_s": 5.0}, "MB/s", 5.0),
        ({"geomean_s": 1.5, "power": 900.0, "q01_s": 1.0}, "QphH", 900.0),
        ({"geomean_s": 1.5, "throughput": 700.0}, "QthH", 700.0),
        ({"replay.exec_ms": 9.0, "replay.statements_active_s": 80.0}, "statements/active s", 80.0),
        ({"tps": 12.0, "nopm": 300.0}, "tps", 12.0),  # a kit's NOPM: points.figure_of's
        ({}, "tps", None),
    ],
)
def test_the_figure_of_a_run_is_named_by_its_headline_metric(
    metrics: dict[str, float], figure: str, value: float | None
) -> None:
    """Each figure under its own name: a run of MB/s, QphH... has no ``tps`` (issue 52)."""
    assert workloads.figure_of(metrics) == figure  # as the kinds declare them
    assert workloads.figure_value(metrics) == value


def test_timings_are_seconds_but_for_their_flags() -> None:
    assert metric_units.timing_unit("settings_s") == "s"
    assert metric_units.timing_unit("dataset_made_now") == "yes/no"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("tps", metric_units.MetricKey("tps")),
        ("replay.exec_ms", metric_units.MetricKey("replay.exec_ms")),
        ("phase.main.tps", metric_units.MetricKey("tps", "main")),
        ("phase.read.1.tps_steady", metric_units.MetricKey("tps_steady", "read.1")),
        ("phase.r.replay.lag_s", metric_units.MetricKey("replay.lag_s", "r")),
        ("phase.", metric_units.MetricKey("phase.")),  # no phase, no name: the run's, as is
    ],
)
def test_a_metric_key_is_cut_apart_and_made_again_at_the_store_s_edge(
    text: str, key: metric_units.MetricKey
) -> None:
    assert metric_units.MetricKey.parse(text) == key
    assert key.text == text


def test_each_phase_s_metric_of_a_name() -> None:
    metrics = {"tps": 9.0, "phase.a.tps": 1.0, "phase.a.b.tps": 2.0, "phase.a.tps_steady": 3.0}
    assert metric_units.by_phase(metrics, "tps") == {"a": 1.0, "a.b": 2.0}
    assert metric_units.by_phase({"phase.x.tps": None}, "tps") == {}
    assert metric_units.metric_unit("phase.r.replay.lag_s") == "s"
    assert metric_units.phase_metric("w", "nopm") == "phase.w.nopm"
