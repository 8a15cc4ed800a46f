"""The declarations' vocabulary: a ``Key`` of a table and a ``Table`` of the campaign file, and
the lookups every part made from them uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Key:
    """One key of a table. ``type`` is a TOML type (string, integer, number, boolean), a shape
    of ``SHAPES`` or the name of a table whose keys the value takes (a variant's ``dataset``)."""

    name: str
    type: str
    doc: str  # one line: what it means
    example: str | None = None  # TOML text of its value in the layout of `pglab run --help`
    default: Any = None  # the value when the key is left out (None: none, or see default_doc)
    default_doc: str = ""  # the default in words, when it is not one value
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None  # exclusive minimum
    pattern: str | None = None
    commented: bool = False  # in the layout as a comment: an alternative to the key before it
    axis: bool = True  # a [workload] or [dataset] key that can be a [matrix] axis
    kinds: tuple[str, ...] = ()  # [targets.NAME]: the kinds of target that take it
    required: bool = False
    subtable: bool = False  # written as its own table: [server.settings]
    # what a value is, in the problem of a wrong one ("expected a percentage from 0.1 to 500");
    # left empty: said by its type ("a whole number", "true or false")
    what: str = ""


@dataclass(frozen=True)
class Table:
    """A table of the file. ``form`` is "table" ([server]), "array" ([[phases]], one table per
    item), "named" ([variants.NAME], tables under names the file chooses) or "sub" (a table
    inside another one's key: [server.build])."""

    name: str  # its key in the file ("" for the top level)
    doc: str
    keys: tuple[Key, ...]
    form: str = "table"
    example_name: str = ""  # the NAME of a "named" table in the layout
    also: str = ""  # the keys it takes besides its own, in words
    also_example: str = ""
    exclusive: tuple[tuple[str, str], ...] = ()  # pairs of keys not to give together
    one_of: tuple[str, ...] = ()  # keys of which one must be given

    @property
    def header(self) -> str:
        forms = {"table": "[{}]", "array": "[[{}]]", "named": "[{}.NAME]", "sub": "[{}]"}
        return forms[self.form].format(self.name) if self.name else "top level"


def key(table: Table, name: str) -> Key:
    return next(k for k in table.keys if k.name == name)


def def_name(table: Table) -> str:
    """Its name under $defs: an item of [[phases]] is a "phase", of [variants.NAME] a "variant"."""
    return {"phases": "phase", "variants": "variant", "targets": "target"}.get(
        table.name, table.name.rsplit(".", 1)[-1]
    )
