"""A run's timings typed in memory (``records.Timings``: seconds, flags as booleans) and stored
as they always were (``store/numbers``: one JSON object of name -> number, flags 1.0/0.0, the
dataset's steps ``dataset_init.STEP_s``), the only place that knows the stored names."""

from __future__ import annotations

import typing

from pglab.metric_units import TIMING_FLAGS
from pglab.records import Timings
from pglab.store.numbers import timings_json, timings_of


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
