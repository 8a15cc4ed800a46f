"""How a campaign file's problems are collected: every problem in the file is gathered and
reported in one message, each naming where it is, with the closest valid key for a typo."""

from __future__ import annotations

import difflib
import math
import re
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


_DURATION_UNITS = {"s": 1, "sec": 1, "min": 60, "h": 3600, "d": 86400}
DURATION_FORMS = 'seconds (5400) or a duration such as "90s", "30min", "2h" or "1h30min"'


def seconds_of(val: Any) -> float | None:
    """A length of time in seconds from a positive number of seconds or a string such as "90s",
    "30min", "2h" or "1h30min" (units s, min, h, d; a bare number is seconds); None if it is
    neither."""
    if isinstance(val, bool):
        return None
    if isinstance(val, int | float):
        return float(val) if 0 < val < math.inf else None
    if not isinstance(val, str):
        return None
    text = re.sub(r"\s+", "", val.lower())
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        return float(text) or None
    parts = re.findall(r"([0-9]+(?:\.[0-9]+)?)([a-z]+)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    if any(u not in _DURATION_UNITS for _, u in parts):
        return None
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts) or None


def duration_s(doc: dict[str, Any], key: str, p: Problems, where: str) -> float | None:
    """``doc[key]`` as seconds (see ``seconds_of``); None when absent or wrong (a problem)."""
    if key not in doc:
        return None
    found = seconds_of(doc[key])
    if found is None:
        p.add(where, f"{key} = {doc[key]!r}: expected {DURATION_FORMS}")
    return found
