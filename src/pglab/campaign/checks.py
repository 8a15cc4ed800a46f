"""How a campaign file's problems are collected: every problem in the file is gathered and
reported in one message, each naming where it is, with the closest valid key for a typo."""

from __future__ import annotations

import difflib
from typing import Any


class Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, where: str, text: str) -> None:
        self.items.append(f"{where}: {text}" if where else text)

    def unknown_keys(self, where: str, table: dict[str, Any], allowed: set[str]) -> None:
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, sorted(allowed), n=1)
                hint = f' — did you mean "{close[0]}"?' if close else ""
                self.add(
                    where, f'unknown key "{key}"{hint} (allowed: {", ".join(sorted(allowed))})'
                )


def table_of(doc: dict[str, Any], key: str, p: Problems, where: str) -> dict[str, Any]:
    val = doc.get(key, {})
    if not isinstance(val, dict):
        p.add(where, f"{key} must be a table")
        return {}
    return val


def get(
    doc: dict[str, Any],
    key: str,
    typ: type,
    default: Any,
    p: Problems,
    where: str,
    minimum: int | None = None,
) -> Any:
    if key not in doc:
        return default
    val = doc[key]
    if not isinstance(val, typ) or (typ is int and isinstance(val, bool)):
        p.add(where, f"{key} = {val!r}: expected {typ.__name__}")
        return default
    if minimum is not None and isinstance(val, int | float) and val < minimum:
        p.add(where, f"{key} = {val!r}: must be ≥ {minimum}")
        return default
    return val


def number_in(val: Any, low: float, high: float = float("inf"), *, low_open: bool = False) -> bool:
    """Whether ``val`` is a TOML number (not a boolean) from ``low`` (excluded when
    ``low_open``) to ``high``."""
    if isinstance(val, bool) or not isinstance(val, int | float):
        return False
    return (low < val if low_open else low <= val) and val <= high


def choice(
    doc: dict[str, Any], key: str, choices: tuple[str, ...], default: str, p: Problems, where: str
) -> str:
    val = doc.get(key, default)
    if val not in choices:
        p.add(where, f'{key} = "{val}": use one of {", ".join(choices)}')
        return default
    return val
