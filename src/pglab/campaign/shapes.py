"""The kinds of value of a campaign file that are more than one TOML type (a script: a built-in
name, a file or a table; a size: bytes or "2GB"; …): how each reads and its JSON Schema. Part of
``schema``, which refers to them by name in its keys' ``type``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pglab.campaign.spec import ACCOUNT_COLUMNS, BUILTIN_SCRIPTS


@dataclass(frozen=True)
class Shape:
    """A kind of value that is more than one TOML type: how it reads and its JSON Schema."""

    text: str
    schema: dict[str, Any]


_SIZE = r"^(?=[^1-9]*[1-9])\s*([0-9]+\.?[0-9]*|\.[0-9]+)\s*([kKmMgGtT]?[iI]?[bB]?)\s*$"
_SCALAR = {"type": ["string", "number", "boolean"]}
SCALES = (1, 1_000_000)  # [dataset] scale: a whole number (pgbench's, a kit's unit)
SCALE_FACTORS = (0.01, 1000.0)  # or a fraction: kit = "tpch"'s scale factor
RANDOM_SEEDS = ("time", "rand")  # pgbench --random-seed's words (else an unsigned integer)
SHAPES: dict[str, Shape] = {
    "script": Shape("built-in name, .sql file or table", {"anyOf": [
        {"enum": list(BUILTIN_SCRIPTS)},
        {"type": "string", "pattern": r"\.", "description": "a script file (relative to the "
         "campaign file)"},
        {"type": "object", "description": "{builtin = NAME or file = PATH, weight = N}",
         "properties": {
             "builtin": {"enum": list(BUILTIN_SCRIPTS), "description": "a built-in script"},
             "file": {"type": "string", "description": "a script file, relative to the "
                      "campaign file"},
             "weight": {"type": "integer", "minimum": 0, "default": 1,
                        "description": "its share of transactions (pgbench -b NAME@W)"}},
         "anyOf": [{"required": ["builtin"]}, {"required": ["file"]}]}]}),
    "scripts": Shape("array of scripts",
                     {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/script"}}),
    "threads": Shape('integer ≥ 1 or "auto"', {"anyOf": [{"type": "integer", "minimum": 1},
                                                        {"const": "auto"}]}),
    "seed": Shape('integer ≥ 0, "time" or "rand"', {"anyOf": [
        {"type": "integer", "minimum": 0, "maximum": 2**64 - 1}, {"enum": list(RANDOM_SEEDS)}]}),
    "settings": Shape("table NAME = value", {"type": "object", "additionalProperties": _SCALAR}),
    "axis_settings": Shape("table NAME = [values]", {"type": "object", "additionalProperties": {
        "type": "array", "minItems": 1, "items": _SCALAR}}),
    "size": Shape('bytes or "300MB", "2GB"', {"anyOf": [{"type": "integer", "minimum": 1},
                                                        {"type": "string", "pattern": _SIZE}]}),
    "options": Shape("array of strings, or one string", {"anyOf": [
        {"type": "string"}, {"type": "array", "items": {"type": "string", "minLength": 1}}]}),
    "columns": Shape("column name or array of them", {"anyOf": [
        {"enum": list(ACCOUNT_COLUMNS)},
        {"type": "array", "minItems": 1, "uniqueItems": True,
         "items": {"enum": list(ACCOUNT_COLUMNS)}}]}),
    "major": Shape('a major version: "16" or 16', {"anyOf": [
        {"type": "integer", "minimum": 1}, {"type": "string", "pattern": "^[0-9]+$"}]}),
    "repeats": Shape('integer ≥ 1 or "auto"', {"anyOf": [{"type": "integer", "minimum": 1},
                                                         {"const": "auto"}]}),
    "scale": Shape("integer ≥ 1, or a TPC-H scale factor such as 0.01", {"anyOf": [
        {"type": "integer", "minimum": SCALES[0], "maximum": SCALES[1]},
        {"type": "number", "minimum": SCALE_FACTORS[0], "maximum": SCALE_FACTORS[1]}]}),
    "queries": Shape("array of query numbers, 1 to 22", {
        "type": "array", "minItems": 1, "uniqueItems": True,
        "items": {"type": "integer", "minimum": 1, "maximum": 22}}),
    "path": Shape("absolute path", {"type": "string", "pattern": "^/"}),
    "duration": Shape('seconds or "90min", "2h", "1h30min"', {"anyOf": [
        {"type": "number", "exclusiveMinimum": 0},
        {"type": "string", "pattern": r"^\s*([0-9]+(\.[0-9]+)?\s*(s|sec|min|h|d)?\s*)+$"}]}),
    "target_name": Shape("target name", {"type": "string"}),
    "host_names": Shape('array of [hosts] names, or "local"',
                        {"anyOf": [{"type": "string", "minLength": 1},
                                   {"type": "array", "minItems": 1, "uniqueItems": True,
                                    "items": {"type": "string", "minLength": 1}}]}),
    "target_names": Shape("array of target names",
                          {"type": "array", "minItems": 1, "items": {"type": "string"}}),
    "sysctl": Shape("table NAME = value", {"type": "object", "additionalProperties": {
        "type": ["string", "integer"]}}),
    "limits": Shape("table nofile/nproc = N", {"type": "object", "additionalProperties": False,
        "properties": {k: {"type": "integer", "minimum": 1, "description": d} for k, d in (
            ("nofile", "open files (RLIMIT_NOFILE)"), ("nproc", "processes (RLIMIT_NPROC)"))}}),
    "os_axes": Shape("table KEY = [values]", {"type": "object", "properties": {
        "sysctl": {"type": "object", "description": "kernel settings as axes: NAME = [values]",
                   "additionalProperties": {"type": "array", "minItems": 1}}},
        "additionalProperties": {"type": "array", "minItems": 1}}),
    "storage_choice": Shape("target name or {data, wal}",
                            {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/storage"}]}),
}  # fmt: skip
