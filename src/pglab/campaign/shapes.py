"""The kinds of value of a campaign file that are more than one TOML type (a script: a built-in
name, a file or a table; a size: bytes or "2GB"; …): how each reads and its JSON Schema. Part of
``schema``, which refers to them by name in its keys' ``type``; ``declared`` reads a value of
each with its ``read`` (the same rules as its JSON Schema, and the value as pglab takes it:
bytes, seconds)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pglab.jsonish import JsonObject
from pglab.script import BUILTIN_SCRIPTS
from pglab.units import (
    DURATION_FORMS,
    DURATION_PATTERN,
    SIZE_PATTERN,
    parse_duration,
    parse_size,
)
from pglab.workloads.work import ACCOUNT_COLUMNS, SCALE_FACTORS, SCALE_FACTORS_SAID


@dataclass(frozen=True)
class Shape:
    """A kind of value that is more than one TOML type: its words in the docs (``text``), its
    JSON Schema, and ``read``: the value as pglab takes it, or None when it is not one (then
    ``expect`` says what is: "size = 'lots': expected …"). Without ``read`` the table's own code
    reads it (a script file, settings: more than their form)."""

    text: str
    schema: JsonObject
    read: Callable[[Any], Any] | None = None
    expect: str = ""


def whole(val: Any) -> int | None:
    """``val`` as a whole number: an integer, or a float with no fraction (``4.0``, which JSON
    Schema's "integer" also takes); None for anything else (booleans included)."""
    if isinstance(val, bool):
        return None
    if isinstance(val, int):
        return val
    return int(val) if isinstance(val, float) and val.is_integer() else None


def _whole(val: Any, low: int, high: float = float("inf")) -> bool:
    n = whole(val)
    return n is not None and low <= n <= high


def _strings(val: Any, unique: bool = False) -> bool:
    """A non-empty array of non-empty strings (each once when ``unique``)."""
    ok = isinstance(val, list) and bool(val) and all(isinstance(v, str) and v for v in val)
    return ok and (not unique or len(set(val)) == len(val))


# a think time: 0 or more, in ms or s (a bare number: seconds), as the parser and the JSON
# Schema read it (ECMA-262 and Python alike)
THINK_TIME_PATTERN = r"^\s*[0-9]+(?:\.[0-9]+)?\s*(?:ms|s)\s*$"


def _think_time(val: Any) -> float | None:
    """``think_time`` in seconds: ``"100ms"``, ``"12s"``, or a number of seconds ≥ 0."""
    if isinstance(val, bool):
        return None
    if isinstance(val, int | float):
        return float(val) if 0 <= val < float("inf") else None
    if not isinstance(val, str) or re.fullmatch(THINK_TIME_PATTERN, val) is None:
        return None
    text = val.strip()
    unit = "ms" if text.endswith("ms") else "s"
    return float(text.removesuffix(unit).strip()) / (1000.0 if unit == "ms" else 1.0)


def _threads(val: Any) -> Any:
    return val if val == "auto" else whole(val) if _whole(val, 1) else None


def _seed(val: Any) -> Any:
    if val in RANDOM_SEEDS:
        return val
    return whole(val) if _whole(val, 0, 2**64 - 1) else None


def _size(val: Any) -> int | None:
    if _whole(val, 1):
        return int(val)
    return parse_size(val) if isinstance(val, str) else None


def _options(val: Any) -> Any:
    if isinstance(val, str):
        return val
    ok = isinstance(val, list) and all(isinstance(v, str) and v for v in val)
    return tuple(val) if ok else None


def _columns(val: Any) -> tuple[str, ...] | None:
    cols = [val] if isinstance(val, str) else val
    ok = _strings(cols, unique=True) and all(c in ACCOUNT_COLUMNS for c in cols)
    return tuple(cols) if ok else None


def _major(val: Any) -> str | None:
    if _whole(val, 1):
        return str(whole(val))
    if isinstance(val, str) and val.isdigit() and val.isascii():
        return val
    return None


def _scale(val: Any) -> Any:
    if isinstance(val, float) and SCALE_FACTORS[0] <= val <= SCALE_FACTORS[1]:
        return int(val) if val.is_integer() else val
    return whole(val) if _whole(val, *SCALES) else None


def _queries(val: Any) -> tuple[int, ...] | None:
    ok = isinstance(val, list) and val and all(_whole(q, 1, 22) for q in val)
    found = tuple(int(q) for q in val) if ok else ()
    return found if ok and len(set(found)) == len(found) else None


def _path(val: Any) -> str | None:
    return val if isinstance(val, str) and val.startswith("/") else None


def _host_names(val: Any) -> tuple[str, ...] | None:
    names = [val] if isinstance(val, str) else val
    return tuple(names) if _strings(names, unique=True) else None


def _enqueue(val: Any) -> Any:
    """Settings tried first: tables of NAME = a plain value."""
    ok = isinstance(val, list) and all(isinstance(run, dict) for run in val)
    return val if ok and all(_scalar(v) for run in val for v in run.values()) else None


def _scalar(val: Any) -> bool:
    return isinstance(val, str | int | float | bool)


def _target_names(val: Any) -> tuple[str, ...] | None:
    ok = isinstance(val, list) and bool(val) and all(isinstance(v, str) for v in val)
    return tuple(val) if ok else None


def _reference(val: Any) -> dict[str, Any] | None:
    return dict(val) if isinstance(val, dict) and all(_scalar(v) for v in val.values()) else None


_SCALAR = {"type": ["string", "number", "boolean"]}
# [dataset] scale: a whole number (pgbench's, a kit's unit), or a fraction: the scale factor
# of the kind that declares one (SCALE_FACTORS)
SCALES = (1, 1_000_000)
RANDOM_SEEDS = ("time", "rand")  # pgbench --random-seed's words (else an unsigned integer)
SHAPES: dict[str, Shape] = {
    "script": Shape(
        "built-in name, .sql file or table",
        {
            "anyOf": [
                {"enum": list(BUILTIN_SCRIPTS)},
                {
                    "type": "string",
                    "pattern": r"\.",
                    "description": "a script file (relative to the campaign file)",
                },
                {
                    "type": "object",
                    "description": "{builtin = NAME or file = PATH, weight = N}",
                    "properties": {
                        "builtin": {
                            "enum": list(BUILTIN_SCRIPTS),
                            "description": "a built-in script",
                        },
                        "file": {
                            "type": "string",
                            "description": "a script file, relative to the campaign file",
                        },
                        "weight": {
                            "type": "integer",
                            "minimum": 0,
                            "default": 1,
                            "description": "its share of transactions (pgbench -b NAME@W)",
                        },
                    },
                    "anyOf": [{"required": ["builtin"]}, {"required": ["file"]}],
                },
            ]
        },
    ),  # read by workload
    "scripts": Shape(
        "array of scripts", {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/script"}}
    ),
    "threads": Shape(
        'integer ≥ 1 or "auto"',
        {"anyOf": [{"type": "integer", "minimum": 1}, {"const": "auto"}]},
        _threads,
        'a whole number ≥ 1 (at most clients), or "auto"',
    ),
    "seed": Shape(
        'integer ≥ 0, "time" or "rand"',
        {
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": 2**64 - 1},
                {"enum": list(RANDOM_SEEDS)},
            ]
        },
        _seed,
        'an unsigned integer, "time" or "rand" (pgbench --random-seed)',
    ),
    "settings": Shape("table NAME = value", {"type": "object", "additionalProperties": _SCALAR}),
    # its keys name a variant or axes of the file: checked by campaign/questions.resolve
    "reference": Shape(
        "table variant = NAME, AXIS = value",
        {
            "type": "object",
            "additionalProperties": _SCALAR,
            "properties": {"variant": {"type": "string", "description": "the reference variant"}},
        },
        _reference,
        "a table of variant = NAME and AXIS = value",
    ),
    "axis_settings": Shape(
        "table NAME = [values]",
        {
            "type": "object",
            "additionalProperties": {"type": "array", "minItems": 1, "items": _SCALAR},
        },
    ),
    "size": Shape(
        'bytes or "300MB", "2GB"',
        {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": SIZE_PATTERN}]},
        _size,
        'a size such as "300MB" or "2GB" (units of 1024)',
    ),
    "options": Shape(
        "array of strings, or one string",
        {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string", "minLength": 1}},
            ]
        },
        _options,
        "an array of strings, or one string",
    ),
    "columns": Shape(
        "column name or array of them",
        {
            "anyOf": [
                {"enum": list(ACCOUNT_COLUMNS)},
                {
                    "type": "array",
                    "minItems": 1,
                    "uniqueItems": True,
                    "items": {"enum": list(ACCOUNT_COLUMNS)},
                },
            ]
        },
        _columns,
        f"distinct columns of pgbench_accounts ({', '.join(ACCOUNT_COLUMNS)})",
    ),
    "major": Shape(
        'a major version: "16" or 16',
        {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "pattern": "^[0-9]+$"}]},
        _major,
        'a major version, e.g. "16"',
    ),
    "repeats": Shape(
        'integer ≥ 1 or "auto"',
        {"anyOf": [{"type": "integer", "minimum": 1}, {"const": "auto"}]},
        lambda v: v if v == "auto" else whole(v) if _whole(v, 1) else None,
        'an integer ≥ 1, or "auto" (rounds until each comparison is decided)',
    ),
    "scale": Shape(
        "integer ≥ 1, or a TPC-H scale factor such as 0.01",
        {
            "anyOf": [
                {"type": "integer", "minimum": SCALES[0], "maximum": SCALES[1]},
                {"type": "number", "minimum": SCALE_FACTORS[0], "maximum": SCALE_FACTORS[1]},
            ]
        },
        _scale,
        f"a whole number from {SCALES[0]} to {SCALES[1]} (or {SCALE_FACTORS_SAID}, "
        f"{SCALE_FACTORS[0]:g} to {SCALE_FACTORS[1]:g})",
    ),
    "queries": Shape(
        "array of query numbers, 1 to 22",
        {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"type": "integer", "minimum": 1, "maximum": 22},
        },
        _queries,
        "distinct TPC-H query numbers, 1 to 22 (leave it out for all 22)",
    ),
    "path": Shape("absolute path", {"type": "string", "pattern": "^/"}, _path, "an absolute path"),
    "duration": Shape(
        'seconds or "90min", "2h", "1h30min"',
        {
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0},
                {"type": "string", "pattern": DURATION_PATTERN},
            ]
        },
        parse_duration,
        DURATION_FORMS,
    ),
    "think_time": Shape(
        '"100ms", "12s" or seconds ≥ 0',
        {
            "anyOf": [
                {"type": "number", "minimum": 0},
                {"type": "string", "pattern": THINK_TIME_PATTERN},
            ]
        },
        _think_time,
        'a time of 0 or more such as "100ms" or "12s" (a bare number: seconds)',
    ),
    "target_name": Shape("target name", {"type": "string"}),  # read by storage: a reference
    "host_names": Shape(
        'array of [hosts] names, or "local"',
        {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {
                    "type": "array",
                    "minItems": 1,
                    "uniqueItems": True,
                    "items": {"type": "string", "minLength": 1},
                },
            ]
        },
        _host_names,
        'an array of [hosts] names (or "local"), each once',
    ),
    "target_names": Shape(
        "array of target names",
        {"type": "array", "minItems": 1, "items": {"type": "string"}},
        _target_names,
        "an array of target names",
    ),
    "sysctl": Shape(
        "table NAME = value",
        {"type": "object", "additionalProperties": {"type": ["string", "integer"]}},
    ),
    "limits": Shape(
        "table nofile/nproc = N",
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                k: {"type": "integer", "minimum": 1, "description": d}
                for k, d in (
                    ("nofile", "open files (RLIMIT_NOFILE)"),
                    ("nproc", "processes (RLIMIT_NPROC)"),
                )
            },
        },
    ),
    # each [os] key's values as an axis: its JSON Schema made from [os]'s declarations
    # (json_schema._os_axes), its values read as [os] reads them (os_table.matrix_axes)
    "os_axes": Shape("table KEY = [values]", {"type": "object"}),
    "storage_choice": Shape(
        "target name or {data, wal}", {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/storage"}]}
    ),
    # [tune]'s (tune/spec.py reads the knobs)
    "enqueue": Shape(
        "array of tables NAME = value",
        {"type": "array", "items": {"type": "object", "additionalProperties": _SCALAR}},
        _enqueue,
        'an array of tables of settings: [{shared_buffers = "1GB"}]',
    ),
    "knobs": Shape(
        "table NAME = {min, max, log} or [choices]",
        {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "oneOf": [
                    {"type": "array", "minItems": 1, "items": _SCALAR, "description": "choices"},
                    {
                        "type": "object",
                        "description": "a range",
                        "properties": {
                            "min": {"type": ["string", "number"], "description": "lowest value"},
                            "max": {"type": ["string", "number"], "description": "highest value"},
                            "log": {"type": "boolean", "description": "sampled on a log scale"},
                        },
                        "required": ["min", "max"],
                        "additionalProperties": False,
                    },
                ]
            },
        },
        lambda v: v if isinstance(v, dict) else None,
        "a table of NAME = {min, max, log} or [choices]",
    ),
}
