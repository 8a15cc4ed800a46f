"""One checker for every key of a campaign file, driven by its declaration in ``schema``: the
key is one the table has ("did you mean" when it is not), and its value has the declared type,
is one of its choices, lies in its range, matches its pattern and reads in its units (a size in
bytes, a duration in seconds: ``shapes``). The JSON Schema of ``pglab schema`` is made from the
same declarations, so both refuse the same values.

Only the rules between keys (a key valid only with another, a kit's keys, references to other
tables, files) are written by hand, in ``parse`` and the modules it calls, on the values this
returns."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from typing import Any

from pglab.campaign.checks import Problems
from pglab.campaign.schema import BY_NAME, SHAPES, Key, Table
from pglab.campaign.shapes import whole
from pglab.jsonish import TomlTable

_NOUNS = {
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "string": "a string",
}


class _Bad:
    """A value that breaks its key's declaration (None is a value some keys read to)."""

    def __repr__(self) -> str:
        return "BAD"


BAD: Any = _Bad()


def check(
    table: Table,
    doc: TomlTable,
    p: Problems,
    where: str,
    *,
    keys: Iterable[Key] = (),
    allowed: set[str] | None = None,
) -> TomlTable:
    """The keys of ``doc`` that ``table`` (and ``keys``, another table's that it takes too)
    declares, each value as pglab takes it; a problem added for each unknown key (not in
    ``allowed`` when given: ``None`` checks no names) and each value its declaration refuses."""
    declared = {k.name: k for k in (*table.keys, *keys)}
    if allowed is not None:
        p.unknown_keys(where, doc, allowed)
    out: TomlTable = {}
    for name, val in doc.items():
        k = declared.get(name)
        if k is None:
            continue
        got = read(k, val)
        if got is BAD:
            p.add(where, problem(k, val))
        else:
            out[name] = got
    return out


def names(table: Table, *more: Table) -> set[str]:
    """The keys a table takes (with those of ``more``): the names ``check`` allows."""
    return {k.name for t in (table, *more) for k in t.keys}


def read(k: Key, val: Any) -> Any:
    """``val`` as pglab takes it, or ``BAD`` when it breaks the declaration of ``k``."""
    if k.type in SHAPES:
        shape = SHAPES[k.type]
        if shape.read is None:
            return val
        got = shape.read(val)
        return BAD if got is None else got
    if k.type in BY_NAME:  # a table of that table's keys (checked by its own code)
        return val if isinstance(val, dict) else BAD
    if not _typed(k.type, val):
        return BAD
    if k.choices and val not in k.choices:
        return BAD
    if k.pattern is not None and not re.search(k.pattern, val):
        return BAD
    if k.type in ("integer", "number") and not _in_range(k, val):
        return BAD
    if k.type == "integer":
        return whole(val)
    return float(val) if k.type == "number" else val


def problem(k: Key, val: Any) -> str:
    """What is wrong with ``k = val`` and what to give instead."""
    if k.choices and _typed(k.type, val):
        close = difflib.get_close_matches(str(val), [str(c) for c in k.choices], n=1)
        hint = f' — did you mean "{close[0]}"?' if close else ""
        shown = json.dumps(val) if isinstance(val, str) else repr(val)
        return f"{k.name} = {shown}: use one of {', '.join(map(str, k.choices))}{hint}"
    if k.type in BY_NAME:
        return f"{k.name} must be a table ([{k.type}] keys)"
    return f"{k.name} = {val!r}: expected {expected(k)}"


def expected(k: Key) -> str:
    """A value of ``k`` in words: "a whole number from 1 to 100", "true or false", …"""
    if k.type in SHAPES and not k.what:
        return SHAPES[k.type].expect or SHAPES[k.type].text
    noun = k.what or _NOUNS.get(k.type, k.type)
    if k.type not in ("integer", "number"):
        return noun
    low, high, above = k.minimum, k.maximum, k.above
    if low is not None and high is not None:
        return f"{noun} from {_num(low)} to {_num(high)}"
    if above is not None and high is not None:
        return f"{noun} above {_num(above)}, at most {_num(high)}"
    if low is not None:
        return f"{noun} ≥ {_num(low)}"
    if above is not None:
        return f"{noun} > {_num(above)}"
    return noun


def _typed(kind: str, val: Any) -> bool:
    if kind == "boolean":
        return isinstance(val, bool)
    if isinstance(val, bool):
        return False
    if kind == "integer":
        return whole(val) is not None
    if kind == "number":
        return isinstance(val, int | float)
    return isinstance(val, str)


def _in_range(k: Key, val: float) -> bool:
    """Within the declared range (NaN never is: every comparison with it is false)."""
    return (
        (k.minimum is None or val >= k.minimum)
        and (k.maximum is None or val <= k.maximum)
        and (k.above is None or val > k.above)
    )


def _num(x: float) -> str:
    return f"{x:g}" if not float(x).is_integer() else str(int(x))
