"""The small tables of a campaign file, checked as the others are (every problem in one
message): ``[fleet]``, ``repeats = "auto"`` with ``[sequential]``, ``[analysis]`` and
``[telemetry]``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pglab.campaign import schema
from pglab.campaign.checks import Problems, choice, get, number_in, table_of
from pglab.campaign.schema import (
    ANALYSIS_KEYS,
    FLEET_KEYS,
    SEQUENTIAL_KEYS,
    SPREADS,
    TELEMETRY_KEYS,
)
from pglab.campaign.spec import DEFAULT_EFFECT_PCT, TelemetrySpec
from pglab.stats.sequential import SequentialSpec


def fleet(table: dict[str, Any], order: str, p: Problems) -> str:
    """``[fleet] spread``: "coordinates" (a job per matrix coordinate) or "rounds" (a job per
    coordinate and round: needs interleaved rounds)."""
    p.unknown_keys("[fleet]", table, FLEET_KEYS)
    spread = choice(table, "spread", SPREADS, "coordinates", p, "[fleet]")
    if spread == "rounds" and order != "interleaved":
        p.add("[fleet]", 'spread = "rounds" needs order = "interleaved": a round is every point '
              "of a coordinate once, and comparisons are made within rounds")  # fmt: skip
    return spread


def sequential(doc: dict[str, Any], order: str, p: Problems) -> SequentialSpec | None:
    """``repeats = "auto"`` and its ``[sequential]`` table (min, max, precision)."""
    table = table_of(doc, "sequential", p, "")
    where = "[sequential]"
    p.unknown_keys(where, table, SEQUENTIAL_KEYS)
    if doc.get("repeats") != "auto":
        if "sequential" in doc:
            p.add(where, 'applies to repeats = "auto" only: set it, or remove the table')
        return None
    spec = SequentialSpec()
    found: dict[str, Any] = {}
    for key in ("min", "max"):
        val = table.get(key, getattr(spec, key))
        low, high = schema.bounds(schema.SEQUENTIAL, key)
        if isinstance(val, bool) or not isinstance(val, int) or not low <= val <= high:
            p.add(where, f"{key} = {val!r}: expected an integer from {low:g} to {high:g}")
        else:
            found[key] = val
    if "max" not in table and found.get("min", spec.min) > spec.max:
        found["max"] = found["min"]  # max: 20, or min when that is more
    if "min" not in table and found.get("max", spec.max) < spec.min:
        found["min"] = found["max"]  # min: 3, or max when that is less
    if found.get("min", spec.min) > found.get("max", spec.max):
        p.add(where, f"min = {found['min']} is above max = {found.get('max', spec.max)}: "
              "the first look comes after min rounds, the last at max")  # fmt: skip
        found.pop("min")
    if "precision" in table:
        val = table["precision"]
        if not number_in(val, 0, 100, low_open=True):
            p.add(where, f"precision = {val!r}: expected the half-width of Δ% wanted, in "
                  "points of % (above 0, at most 100; e.g. 2 for ±2%)")  # fmt: skip
        else:
            found["precision"] = float(val)
    if order != "interleaved":
        p.add("", 'repeats = "auto" needs order = "interleaved": a point is judged against '
              "the baseline's runs of the same rounds")  # fmt: skip
    return replace(spec, **found)


def analysis(table: dict[str, Any], p: Problems) -> tuple[float, float | None]:
    """``[analysis]``: ``effect``, the smallest TPS difference (in %) worth finding (a comparison
    that could not have found it is "?", not "~"; the plan says how many repeats would), and
    ``equivalence``, the margin (in %) of an "=" verdict (None: the effect)."""
    where = "[analysis]"
    p.unknown_keys(where, table, ANALYSIS_KEYS)
    found: list[float | None] = []
    for key, default in (("effect", DEFAULT_EFFECT_PCT), ("equivalence", None)):
        val = table.get(key, default)
        low, high = schema.bounds(schema.ANALYSIS, key)
        if val is not None and not number_in(val, low, high):
            p.add(where, f"{key} = {val!r}: expected a percentage from {low:g} to {high:g} "
                  "(e.g. 5 for 5%)")  # fmt: skip
            val = default
        found.append(None if val is None else float(val))
    return found[0] or DEFAULT_EFFECT_PCT, found[1]


def telemetry(table: dict[str, Any], p: Problems) -> TelemetrySpec:
    where = "[telemetry]"
    p.unknown_keys(where, table, TELEMETRY_KEYS)
    spec = TelemetrySpec()
    upd: dict[str, Any] = {}
    if "enabled" in table:
        upd["enabled"] = get(table, "enabled", bool, True, p, where)
    for key in ("stats_interval", "waits_hz", "buffers_interval"):
        if key not in table:
            continue
        low, high = schema.bounds(schema.TELEMETRY, key)
        val = table[key]
        if not number_in(val, low, high):
            p.add(where, f"{key} = {val!r}: expected a number from {low:g} to {high:g}")
        else:
            upd[key] = float(val)
    return replace(spec, **upd)
