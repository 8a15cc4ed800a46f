"""The campaign file as a JSON Schema (draft 2020-12), for editors and validators: derived
from the declarations of ``schema``, with the ``[tune]`` table of a file for ``pglab tune``
(``pglab schema`` prints it)."""

from __future__ import annotations

from typing import Any

from pglab.campaign.schema import (
    BY_NAME,
    DATASET,
    HOSTS,
    MATRIX,
    OS,
    PHASES,
    SHAPES,
    TABLES,
    TARGET_KEYS,
    TARGET_KINDS,
    TARGET_REQUIRED,
    TARGETS,
    TOP,
    TUNE,
    WORKLOAD,
    Key,
    Table,
    def_name,
)
from pglab.campaign.workload import refused_beside
from pglab.jsonish import JsonObject
from pglab.workloads.work import OPERATION_KEYS, OPERATION_OPTIONS, OPERATIONS

SCHEMA_ID = "https://pglab.invalid/campaign.schema.json"


def build() -> JsonObject:
    """The campaign file (and a tune file's [tune]) as a JSON Schema (draft 2020-12), for
    editors and validators."""
    defs: JsonObject = {def_name(t): _table_schema(t) for t in TABLES[1:]}
    assert not defs.keys() & SHAPES.keys()
    defs.update((name, shape.schema) for name, shape in SHAPES.items())
    top = _table_schema(TOP)
    for table in TABLES[1:]:
        if table.form == "sub":  # [server.build]: reached through its key's $ref
            continue
        ref: JsonObject = {"$ref": f"#/$defs/{def_name(table)}"}
        if table.form == "array":
            ref = {"type": "array", "items": ref, **({"minItems": 1} if table is PHASES else {})}
        elif table.form == "named":
            ref = {"type": "object", "additionalProperties": ref}
            if table is HOSTS:  # "local" is pglab's own machine
                ref["propertyNames"] = {"not": {"const": "local"}}
        top["properties"][table.name] = {**ref, "description": table.doc}
    defs["os_axes"] = _os_axes()
    # [tune]: a file for `pglab tune` (a campaign file of one point with it)
    defs["tune"] = _table_schema(TUNE)
    top["properties"]["tune"] = {"$ref": "#/$defs/tune", "description": TUNE.doc}
    top["properties"]["server"] = {
        "allOf": [top["properties"]["server"], _BASE_SERVER],
        "description": top["properties"]["server"]["description"],
    }
    defs["tune"]["not"] = _P99_LIMIT_OF_P99
    top["dependentSchemas"] = _DEPENDENT
    top["allOf"] = _ORDER_RULES
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "pglab campaign file",
        **top,
        "$defs": defs,
    }


def _when(condition: JsonObject, then: JsonObject) -> JsonObject:
    return {"if": condition, "then": then}


def _said(key: str, value: Any) -> JsonObject:
    """The condition "``key`` is given as ``value``"."""
    return {
        "properties": {key: {"const": value, "description": f"{key} = {value!r}"}},
        "required": [key],
    }


# The rules between keys that one document shows (the others are the parser's alone:
# tests/unit/test_refusals.py names them). [sequential] is the settings of repeats = "auto",
# and of nothing else; a tune file tunes one point.
_DEPENDENT = {
    "sequential": {
        "properties": {"repeats": {"const": "auto", "description": "[sequential] needs it"}},
        "required": ["repeats"],
    },
    "tune": {
        "description": "a tune file tunes one point: no [variants], [matrix], repeats or "
        "[storage_bench]",
        "not": {
            "anyOf": [{"required": [k]} for k in ("variants", "matrix", "repeats", "storage_bench")]
        },
    },
}
# repeats = "auto" and [fleet] spread = "rounds" judge within interleaved rounds
_INTERLEAVED = {
    "properties": {
        "order": {"const": "interleaved", "description": "judged within interleaved rounds"}
    }
}
_ORDER_RULES = [
    _when(_said("repeats", "auto"), _INTERLEAVED),
    _when(
        {
            "properties": {"fleet": {**_said("spread", "rounds"), "description": "[fleet]"}},
            "required": ["fleet"],
        },
        _INTERLEAVED,
    ),
]
# the base's [server] (a variant's server inherits from it): a source names its key; manage is
# an existing server's (dsn), database one's on the network (dsn or host)
_BASE_SERVER = {
    "allOf": [
        _when(_said("source", kind), {"required": [kind]})
        for kind in ("bindir", "build", "version")
    ],
    "dependentRequired": {"manage": ["dsn"]},
    "dependentSchemas": {"database": {"anyOf": [{"required": ["dsn"]}, {"required": ["host"]}]}},
}
# p99_limit_ms is the limit of objective = "tps" (the best TPS under that p99)
_P99_LIMIT_OF_P99 = {**_said("objective", "p99"), "required": ["objective", "p99_limit_ms"]}


def _operation_options() -> list[JsonObject]:
    """In one table, the options of operations other than its own are refused."""
    return [
        _when(
            _said("operation", op),
            {
                "properties": {
                    k: {"not": {}, "description": f"not an option of operation = {op!r}"}
                    for k in OPERATION_KEYS
                    if k not in OPERATION_OPTIONS[op]
                }
            },
        )
        for op in OPERATIONS
    ]


def _kind_rules() -> list[JsonObject]:
    """In one table that says a phase's kind (its kit, its generator), the keys that kind
    refuses beside it (``workload.refused_beside``: from the kinds' declarations)."""
    return [
        _when(
            _said(key, value),
            {
                "properties": {
                    k: {"not": {}, "description": f"not taken with {key} = {value!r}"}
                    for k in refused
                }
            },
        )
        for key, value, refused in refused_beside()
    ]


def _os_axes() -> JsonObject:
    """[matrix.os]: each [os] key an axis of its values (sysctl = { NAME = [values] })."""
    props = {
        k.name: {
            "type": "array",
            "minItems": 1,
            "items": _value(k),
            "description": f"axis: {k.doc}",
        }
        for k in OS.keys
        if k.name != "sysctl"
    }
    props["sysctl"] = {
        "type": "object",
        "description": "kernel settings as axes: NAME = [values]",
        "additionalProperties": {
            "type": "array",
            "minItems": 1,
            "items": SHAPES["sysctl"].schema["additionalProperties"],
        },
    }
    return {
        "type": "object",
        "description": SHAPES["os_axes"].text,
        "properties": props,
        "additionalProperties": False,
    }


def _value(k: Key) -> JsonObject:
    """The JSON Schema of one value of ``k``."""
    if k.type in SHAPES:
        out: JsonObject = {"$ref": f"#/$defs/{k.type}"}
    elif k.type in BY_NAME:
        out = {"$ref": f"#/$defs/{def_name(BY_NAME[k.type])}"}
    else:
        out = {"type": k.type}
    if k.choices:
        out["enum"] = list(k.choices)
    for word, val in (
        ("minimum", k.minimum),
        ("maximum", k.maximum),
        ("exclusiveMinimum", k.above),
        ("pattern", k.pattern),
    ):
        if val is not None:
            out[word] = val
    return out


def _table_schema(table: Table) -> JsonObject:
    keys = table.keys + (WORKLOAD.keys if table is PHASES else ())
    props = {k.name: {**_value(k), "description": k.doc} for k in keys}
    for k in keys:
        if k.default is not None and not k.default_doc:
            props[k.name]["default"] = k.default
    if table is MATRIX:
        for k in WORKLOAD.keys + DATASET.keys:
            if k.axis:
                props[k.name] = {
                    "type": "array",
                    "minItems": 1,
                    "items": _value(k),
                    "description": f"axis: {k.doc}",
                }
    out: JsonObject = {
        "type": "object",
        "description": table.doc,
        "properties": props,
        "additionalProperties": False,
    }
    required = [k.name for k in keys if k.required]
    if required:
        out["required"] = required
    if table.exclusive:
        out["allOf"] = [{"not": {"required": list(pair)}} for pair in table.exclusive]
    if table in (WORKLOAD, PHASES):  # an operation takes its own options only; a kind its keys
        out["allOf"] = out.get("allOf", []) + _operation_options() + _kind_rules()
    if table.one_of:
        out["anyOf"] = [{"required": [k]} for k in table.one_of]
    if table is TARGETS:
        out["oneOf"] = [
            {
                "description": f"a {kind} target: {', '.join(sorted(TARGET_KEYS[kind]))}",
                "properties": {"kind": {"const": kind, "description": f"{kind} (see kind)"}},
                "required": list(TARGET_REQUIRED[kind]),
                "propertyNames": {"enum": sorted(TARGET_KEYS[kind] | {"kind"})},
            }
            for kind in TARGET_KINDS
        ]
    return out
