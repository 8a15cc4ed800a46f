"""The small tables of a campaign file, checked as the others are (every problem in one
message): ``[fleet]``, ``repeats = "auto"`` with ``[sequential]``, ``[analysis]`` and
``[telemetry]``. Their keys' values are checked by their declarations (``declared``); the rules
between keys are here."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pglab.campaign import declared, schema
from pglab.campaign.checks import Problems, table_of
from pglab.campaign.schema import (
    ANALYSIS_KEYS,
    FLEET_KEYS,
    SEQUENTIAL_KEYS,
    TELEMETRY_KEYS,
)
from pglab.campaign.spec import DEFAULT_EFFECT_PCT, TelemetrySpec
from pglab.jsonish import TomlTable
from pglab.stats.sequential import SequentialSpec


def fleet(table: TomlTable, order: str, p: Problems) -> str:
    """``[fleet] spread``: "coordinates" (a job per matrix coordinate) or "rounds" (a job per
    coordinate and round: needs interleaved rounds)."""
    spread = declared.check(schema.FLEET, table, p, "[fleet]", allowed=FLEET_KEYS).get(
        "spread", "coordinates"
    )
    if spread == "rounds" and order != "interleaved":
        p.add(
            "[fleet]",
            'spread = "rounds" needs order = "interleaved": a round is every point '
            "of a coordinate once, and comparisons are made within rounds",
        )
    return str(spread)


def sequential(doc: TomlTable, order: str, p: Problems) -> SequentialSpec | None:
    """``repeats = "auto"`` and its ``[sequential]`` table (min, max, precision)."""
    table = table_of(doc, "sequential", p, "")
    where = "[sequential]"
    found = declared.check(schema.SEQUENTIAL, table, p, where, allowed=SEQUENTIAL_KEYS)
    if doc.get("repeats") != "auto":
        if "sequential" in doc:
            p.add(where, 'applies to repeats = "auto" only: set it, or remove the table')
        return None
    spec = SequentialSpec()
    if "max" not in table and found.get("min", spec.min) > spec.max:
        found["max"] = found["min"]  # max: 20, or min when that is more
    if "min" not in table and found.get("max", spec.max) < spec.min:
        found["min"] = found["max"]  # min: 3, or max when that is less
    if found.get("min", spec.min) > found.get("max", spec.max):
        p.add(
            where,
            f"min = {found['min']} is above max = {found.get('max', spec.max)}: "
            "the first look comes after min rounds, the last at max",
        )
        found.pop("min")
    if order != "interleaved":
        p.add(
            "",
            'repeats = "auto" needs order = "interleaved": a point is judged against '
            "the baseline's runs of the same rounds",
        )
    return replace(spec, **found)


def analysis(table: TomlTable, p: Problems) -> tuple[float, float | None, dict[str, Any]]:
    """``[analysis]``: ``effect``, the smallest TPS difference (in %) worth finding (a comparison
    that could not have found it is "?", not "~"; the plan says how many repeats would),
    ``equivalence``, the margin (in %) of an "=" verdict (None: the effect), and ``reference``
    as written (what it names is checked against the variants and axes:
    ``questions.resolve``)."""
    found = declared.check(schema.ANALYSIS, table, p, "[analysis]", allowed=ANALYSIS_KEYS)
    return (
        found.get("effect", DEFAULT_EFFECT_PCT),
        found.get("equivalence"),
        found.get("reference") or {},
    )


def telemetry(table: TomlTable, p: Problems) -> TelemetrySpec:
    found = declared.check(schema.TELEMETRY, table, p, "[telemetry]", allowed=TELEMETRY_KEYS)
    return replace(TelemetrySpec(), **found)
