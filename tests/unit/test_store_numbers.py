"""A run's metrics and timings typed in memory (``records.RunMetrics``: each figure under its
``MetricKey``; ``records.Timings``: seconds, flags as booleans) and stored as they always were
(``store/numbers``: JSON objects of name -> number, a phase's metric ``phase.NAME.KEY``, flags
1.0/0.0, the dataset's steps ``dataset_init.STEP_s``), the only place that knows the names."""

from __future__ import annotations

import typing
from types import SimpleNamespace
from typing import cast

from hypothesis import given
from hypothesis import strategies as st

from pglab.campaign.spec import DerivedSpec, RunSpec
from pglab.metric_units import TIMING_FLAGS, MetricKey
from pglab.records import PgbenchReport, PhaseResult, ProgressSample, RunMetrics, Timings
from pglab.run.metrics import run_metrics
from pglab.store.numbers import metrics_json, metrics_of, timings_json, timings_of


def test_a_run_s_timings_are_stored_under_the_names_and_numbers_they_always_had() -> None:
    # as a lease on this machine fills them in (postgres/lease.py), then the executor
    made = Timings(
        dataset_init_s=12.5,
        dataset_made_now=True,
        dataset_init_steps={"client-side generate": 9.0, "primary keys": 2.5},
        reset_s=1.25,
        reset_ahead=True,
        settings_s=0.75,
        restarted=False,
        fingerprint_s=0.125,
        telemetry_s=0.5,
    )
    stored = timings_json(made)
    assert list(stored.items()) == [
        ("dataset_init_s", 12.5),
        ("dataset_made_now", 1.0),
        ("dataset_init.client-side_generate_s", 9.0),
        ("dataset_init.primary_keys_s", 2.5),
        ("reset_s", 1.25),
        ("reset_ahead", 1.0),
        ("settings_s", 0.75),
        ("restarted", 0.0),
        ("fingerprint_s", 0.125),
        ("telemetry_s", 0.5),
    ]
    assert all(type(v) is float for v in stored.values())  # 1.0 and 0.0, never true/false
    assert timings_json(Timings()) == {}  # nothing timed: nothing stored


def test_stored_timings_read_back_typed_flags_as_booleans() -> None:
    stored = {"reset_s": 0.5, "reloaded": 1.0, "restarted": 0.0, "dataset_init.vacuum_s": 0.25}
    got = timings_of(stored)
    assert got == Timings(
        reset_s=0.5, reloaded=True, restarted=False, dataset_init_steps={"vacuum": 0.25}
    )
    assert timings_json(got) == stored  # the same object again (its order: the fields')


def test_names_this_pglab_does_not_make_are_kept_as_read() -> None:
    """An older or newer pglab's timing stays what it was, read and written again."""
    stored = {"start_s": 0.5, "reset_s": 1.0, "dataset_init._s": 2.0}
    got = timings_of(stored)
    assert got.other == {"start_s": 0.5, "dataset_init._s": 2.0} and got.reset_s == 1.0
    assert timings_json(got) == stored


def test_a_step_s_spaces_come_back_as_the_underscores_they_are_stored_as() -> None:
    made = Timings(dataset_made_now=False, dataset_init_steps={"primary keys": 1.5})
    assert timings_of(timings_json(made)).dataset_init_steps == {"primary_keys": 1.5}


def test_the_flags_are_the_boolean_timings() -> None:
    hints = typing.get_type_hints(Timings)
    flags = {name for name, kind in hints.items() if kind == bool | None}
    assert flags == set(TIMING_FLAGS)


def _phase(name: str, tps: float, seconds: int = 0, measured: bool = True) -> PhaseResult:
    report = PgbenchReport(tps=tps, transactions=10, latency_avg_ms=2.0, failed=1)
    progress = tuple(ProgressSample(t=i + 1.0, tps=tps + i) for i in range(seconds))
    return PhaseResult(name, 1, measured, 0.0, 1.0, ("x",), report, progress=progress)


def test_a_run_s_metrics_are_stored_under_the_keys_and_in_the_order_they_always_had() -> None:
    """Each phase's, then the run's over its measured phases, then ``[[derived]]``'s."""
    spec = SimpleNamespace(derived=(DerivedSpec("ratio", "ratio", "warm", "read.1"),), phases=())
    phases = [_phase("warm", 100.0, measured=False), _phase("read.1", 50.0, seconds=20)]
    made = run_metrics(cast(RunSpec, spec), phases)
    stored = metrics_json(made)
    assert list(stored) == [
        "phase.warm.tps",
        "phase.warm.latency_avg_ms",
        "phase.read.1.tps",
        "phase.read.1.tps_steady",
        "phase.read.1.drift_pct",
        "phase.read.1.latency_avg_ms",
        "tps",
        "latency_avg_ms",
        "failed",
        "tps_steady",
        "ratio",
    ]
    assert (stored["tps"], stored["failed"], stored["ratio"]) == (50.0, 1.0, 0.5)
    assert stored["phase.read.1.drift_pct"] > 0  # its per-second TPS rose
    assert made.get("tps", "read.1") == 50.0 and made.get("tps", "cold") is None
    assert made.by_phase("tps") == {"warm": 100.0, "read.1": 50.0}
    assert list(made.of_run()) == ["tps", "latency_avg_ms", "failed", "tps_steady", "ratio"]
    assert metrics_of(metrics_json(made)) == made  # read back as it was made


def test_a_metric_added_afterwards_goes_last_or_where_it_was() -> None:
    metrics = RunMetrics({MetricKey("tps", "main"): 1.0, MetricKey("tps"): 1.0})
    assert list(metrics_json(metrics.with_value("latency_p99_ms", 9.0))) == [
        "phase.main.tps",
        "tps",
        "latency_p99_ms",
    ]
    assert metrics_json(metrics.with_value("tps", 2.0)) == {"phase.main.tps": 1.0, "tps": 2.0}
    assert not RunMetrics() and metrics


@given(st.text(alphabet="phase.rly_tsx1", max_size=24))
def test_any_stored_metric_name_is_read_and_written_again_as_it_was(name: str) -> None:
    """Whatever a store holds (another version's names, a phase named with dots, a replay's
    ``phase.NAME.replay.KEY``): the same name and number written back."""
    stored = {name: 1.5, "tps": 2.0}
    assert metrics_json(metrics_of(stored)) == stored
