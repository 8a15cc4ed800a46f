"""Words made from the declarations: a key's type and default, the annotated layout of
``pglab run --help`` and the table of the documentation's campaign file reference."""

from __future__ import annotations

import json
import textwrap
import tomllib
from typing import Any

from pglab.campaign.schema.model import Key, Table
from pglab.campaign.schema.tables import BY_NAME, TABLES
from pglab.campaign.shapes import SHAPES
from pglab.campaign.spec import TARGET_KINDS

# -- words: the type, the default ------------------------------------------------------------


def type_text(k: Key) -> str:
    if k.choices:
        return " | ".join(json.dumps(c) for c in k.choices)
    if k.type in SHAPES:
        return SHAPES[k.type].text
    if k.type in BY_NAME:
        return f"table of [{k.type}] keys"
    text = k.type
    if k.minimum is not None and k.maximum is not None:
        return f"{text} {_num(k.minimum)}–{_num(k.maximum)}"
    if k.minimum is not None:
        return f"{text} ≥ {_num(k.minimum)}"
    if k.above is not None and k.maximum is not None:
        return f"{text} > {_num(k.above)}, ≤ {_num(k.maximum)}"
    if k.above is not None:
        return f"{text} > {_num(k.above)}"
    return text


def default_text(k: Key) -> str:
    if k.default_doc:
        return k.default_doc
    if k.default is None or k.default == "":
        return ""
    return _toml(k.default)


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:g}"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else str(value)


# -- the layout of `pglab run --help` ----------------------------------------------------------

WIDTH, COMMENT_AT = 88, 30
_INTRO = """\
A campaign file is TOML, and every key is optional. Each table with all its keys (a
value is the default unless the comment gives one; a commented key is an alternative to
the one above it; `pglab schema` prints all this as a JSON Schema for editors):
"""
TUNE_INTRO = """\
A tune file is a campaign file of one point ([server], [dataset], [workload] or [[phases]];
no [variants], [matrix] or repeats) with a [tune] table; every key is optional (a value is
the default unless the comment gives one):
"""


def help_layout(tables: tuple[Table, ...] = TABLES, intro: str = _INTRO) -> str:
    """The file layout as an annotated example, for `pglab run --help` (``TUNE_TABLES``:
    `pglab tune --help`), at most 88 columns."""
    out = [intro]
    for table in tables:
        lines: list[str] = []
        if table.name:
            header = f"[{table.name}.{table.example_name}]" if table.form == "named" else None
            lines += _annotated(header or table.header, table.doc)
        for k in table.keys:
            if not k.subtable:
                lines += _key_lines(k)
        if table.also:
            lines += _annotated(table.also_example, table.also)
        for k in table.keys:
            if k.subtable:
                lines += _annotated(f"[{table.name}.{k.name}]", k.doc)
                lines += [f"  {line}" for line in str(k.example).splitlines()]
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def _key_lines(k: Key) -> list[str]:
    comment = f"{', '.join(k.kinds)}: {k.doc}" if _some_kinds(k) else k.doc
    if k.choices and not all(str(c) in k.doc for c in k.choices):
        comment += f" ({type_text(k)})"
    default = default_text(k)
    if default and (
        k.commented
        or k.example is None
        or k.default_doc
        or tomllib.loads(f"v = {k.example}")["v"] != k.default
    ):
        comment += f"; default {default}"
    text = f"{k.name} = {k.example}"
    return _annotated(f"# {text}" if k.commented else text, comment)


def _annotated(code: str, comment: str) -> list[str]:
    """``code`` with ``comment`` beside it from column COMMENT_AT (or further right), wrapped
    within WIDTH; below it when the code leaves too little room."""
    left = f"  {code}" if code else ""
    start = max(COMMENT_AT, len(left) + 2)
    if WIDTH - start < 32:
        return [left, *_annotated("", comment)]
    pad = "~" * (start - COMMENT_AT)  # the first line starts further right
    wrapped = textwrap.wrap(comment, WIDTH - COMMENT_AT - 2, initial_indent=pad)
    lines = [f"{left.ljust(start)}# {wrapped[0].removeprefix(pad)}"]
    lines += [f"{'':{COMMENT_AT}}# {more}" for more in wrapped[1:]]
    return [line.rstrip() for line in lines]


# -- the documentation's table -----------------------------------------------------------------


def docs_table(tables: tuple[Table, ...] = TABLES) -> str:
    """Every key as a Markdown table: table, key, type, default, meaning."""
    rows = ["| table | key | type | default | meaning |", "|---|---|---|---|---|"]

    def row(*cells: str) -> None:
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")

    forms = {
        "table": "table",
        "array": "array of tables",
        "named": "tables by name",
        "sub": "table",
    }
    for table in tables:
        if table.name:
            row(f"`{table.header}`", "", forms[table.form], "", table.doc)
        for i, k in enumerate(table.keys):
            meaning = f"{', '.join(k.kinds)}: {k.doc}" if _some_kinds(k) else k.doc
            default = default_text(k)
            if default and not k.default_doc:
                default = f"`{default}`"
            where = "(top level)" if not table.name and i == 0 else ""
            row(where, f"`{k.name}`", type_text(k), default, meaning)
        if table.also:
            row("", "*other keys*", "", "", table.also)
    return "\n".join(rows) + "\n"


def _some_kinds(k: Key) -> bool:
    return bool(k.kinds) and len(k.kinds) < len(TARGET_KINDS)
