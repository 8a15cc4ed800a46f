"""A run's metrics and timings as the store keeps them, and back: each a JSON object of name ->
number. A metric's name is its key's dotted text (``phase.NAME.KEY`` a phase's:
``metric_units.MetricKey``); a timing's is its field's, where a yes/no flag is 1.0 or 0.0 and
each step of the dataset's making is ``dataset_init.STEP_s`` (its spaces as underscores). In
memory they are a ``records.RunMetrics`` and a ``records.Timings``: the names are made and read
here only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from pglab.metric_units import TIMING_FLAGS, MetricKey
from pglab.records import RunMetrics, Timings

STEP = "dataset_init."  # a step of the dataset's making: "dataset_init.primary_keys_s"
_STEPS, _OTHER = "dataset_init_steps", "other"  # the fields that hold several names
# the fields stored under their own names, in the order a run's timings are stored
_NAMED = tuple(f.name for f in fields(Timings) if f.name not in (_STEPS, _OTHER))


def timings_json(timings: Timings) -> dict[str, float]:
    """The stored object: each timing taken under its name (a flag as 1.0 or 0.0), the
    dataset's steps after whether it was made now, then what another pglab stored."""
    out: dict[str, float] = {}
    for name in _NAMED:
        value = getattr(timings, name)
        if value is not None:
            out[name] = float(value)
        if name == "dataset_made_now":
            for step, seconds in timings.dataset_init_steps.items():
                out[f"{STEP}{step.replace(' ', '_')}_s"] = seconds
    for name, value in timings.other.items():
        out.setdefault(name, value)
    return out


def timings_of(stored: Mapping[str, Any]) -> Timings:
    """A run's timings from its stored object: a step's name as stored (underscores for its
    spaces), the names this pglab does not make kept in ``other``."""
    timings = Timings()
    for name, value in stored.items():
        if name in _NAMED:
            setattr(timings, name, bool(value) if name in TIMING_FLAGS else float(value))
        elif name.startswith(STEP) and name.endswith("_s") and len(name) > len(STEP) + 2:
            timings.dataset_init_steps[name[len(STEP) : -2]] = float(value)
        else:
            timings.other[name] = value
    return timings


def metrics_json(metrics: RunMetrics) -> dict[str, float]:
    """The stored object: each metric under its key's text, in the order they were made."""
    return {key.text: value for key, value in metrics.values.items()}


def metrics_of(stored: Mapping[str, float]) -> RunMetrics:
    """A run's metrics from its stored object (``MetricKey.parse`` of each name)."""
    return RunMetrics({MetricKey.parse(name): value for name, value in stored.items()})
