"""The judge of a refused campaign or tune document: is it refused by the JSON Schema of
``pglab schema`` as by the parser? Used by ``tests/unit/test_refusals.py`` over the stored
corpus and by ``helpers.collect_refusals`` over every document the running suite refuses.

A JSON Schema judges one document by its own shape: what needs more than that (another table's
value, a file, this machine, two values compared) is the parser's alone, and
``BEYOND_THE_SCHEMA`` lists those rules by kind."""

from __future__ import annotations

import re
from typing import Any

from jsonschema import Draft202012Validator

from pglab.campaign import json_schema

VALIDATOR = Draft202012Validator(json_schema.build())

# What the declarations check (campaign/declared.py): a key unknown, a value of the wrong type,
# not one of the choices, out of range; the JSON Schema says it too.
DECLARED = re.compile(
    r"unknown key |: expected |: use one of |must be a table|must be a "
    r"non-empty array|= None: "
)

# The rules a JSON Schema of one document cannot state, by kind: why, and a regular expression
# matching the parser's problem.
BEYOND_THE_SCHEMA: dict[str, tuple[str, str]] = {
    "names": ("names another part of the file",
              r"is not a phase name|storage target .* is not defined|is not a \[hosts\.NAME\] "
              r"of the file|phase name .* is used twice|pglab mounts nothing|reference: .*(is "
              r"not a variant of the file|is not a \[matrix\] axis of the file|is the load's "
              r"shape|is not one of the axis's values|the file's variants are its question)"),
    "files": ("reads a file or a git clone", r"script file |git|clone|no such workload file"),
    "formats": ("parses a value as another program does (libpq's connection strings)",
                r"not a valid connection string"),
    "machine": ("asks this machine (root, the kernel, its limits, its devices)",
                r"as root|the kernel|hard limit|block device"),
    "values": ("compares two values", r"is more than clients|generators for \d+ client|"
               r"is below confirm_repeats|is above max|is too small for"),
    "tables": ("a key valid only with another table's key or value (what a phase inherits "
               "from [workload], a variant from the base, a [matrix] axis from the phases)",
               r"but this phase runs|with kit = |with generator = |no phase runs|phases run "
               r"different|measured phases|restore needs|is for an existing server|over the "
               r"network|copies the files of a cluster|\[os\] sets|needs order = |needs "
               r"(bindir|build|version) =|this is a tune file|tunes one point|not run by pglab "
               r"tune|confirmation repeats are|objective = |p99 objective|confirm_max needs|"
               r"kit .* runs in|progress = false|sampling_rate with|has .* as its scale|a "
               r"fraction is a scale factor|the shape of kit|tpch\"'s power run|YCSB|"
               r"with pacing = |has no pacing|no phase has pacing|loads customers in units of|"
               r"replays a captured workload or runs a load|runs on this machine; generator "
               r"hosts"),
}  # fmt: skip


def schema_errors(doc: dict[str, Any]) -> list[Any]:
    return list(VALIDATOR.iter_errors(doc))


def beyond(problem: str) -> str | None:
    """The kind of rule beyond the JSON Schema that ``problem`` is (None: within it)."""
    if DECLARED.search(problem):
        return None
    return next((k for k, (_, rx) in BEYOND_THE_SCHEMA.items() if re.search(rx, problem)), None)


def named_keys(error: Any) -> set[str]:
    """The keys a JSON Schema error is about: the last names of its path, or the keys its
    message quotes (an unknown key, one of two given together)."""
    keys = {p for p in error.absolute_path if isinstance(p, str)}
    return keys | set(re.findall(r"'([A-Za-z_]\w*)'", error.message))


def disagreement(doc: dict[str, Any], said: list[str]) -> str | None:
    """Why the JSON Schema's answer on ``doc`` differs from the parser's problems ``said``
    (None: they agree): a problem within the schema it accepts, or a key it names that the
    parser does not."""
    errors = schema_errors(doc)
    within = [s for s in said if beyond(s) is None]
    if within and not errors:
        return f"the JSON Schema accepts {doc}; the parser says {within}"
    for error in errors:  # the key the JSON Schema names, the parser names too
        keys = named_keys(error)
        if keys and not any(k in " ".join(said) for k in keys):
            return f"the JSON Schema says {error.message!r} of {doc}; the parser says {said}"
    return None
