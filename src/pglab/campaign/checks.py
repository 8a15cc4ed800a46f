"""How a campaign file's problems are collected: every problem in the file is gathered and
reported in one message, each naming where it is, with the closest valid key for a typo. What
each key's value must be is checked from its declaration by ``declared``."""

from __future__ import annotations

import difflib

from pglab.jsonish import TomlTable


class Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, text: str) -> None:
        """A problem, said once (a value several phases take is checked in each)."""
        item = f"{where}: {text}" if where else text
        if item not in self.items:
            self.items.append(item)

    def unknown_keys(self, where: str, table: TomlTable, allowed: set[str]) -> None:
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, sorted(allowed), n=1)
                hint = f' — did you mean "{close[0]}"?' if close else ""
                self.add(
                    where, f'unknown key "{key}"{hint} (allowed: {", ".join(sorted(allowed))})'
                )


def table_of(doc: TomlTable, key: str, p: Problems, where: str) -> TomlTable:
    val = doc.get(key, {})
    if not isinstance(val, dict):
        p.add(where, f"{key} must be a table")
        return {}
    return val
