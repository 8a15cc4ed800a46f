"""The declarations' vocabulary: a ``Key`` of a table (``pglab.keys``: the kinds declare their
keys in it too) and a ``Table`` of the campaign file, and the lookups every part made from them
uses."""

from __future__ import annotations

from dataclasses import dataclass

from pglab.keys import Key

__all__ = ["Key", "Table", "def_name", "key"]


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
