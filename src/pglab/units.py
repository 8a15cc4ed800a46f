"""Amounts as a person writes and reads them, parsed and formatted once for every stage:

- sizes in binary units (the ones PostgreSQL's own settings use: ``128 MiB`` for
  shared_buffers = 128MB): ``size_text``; a size in a campaign file (``"300MB"``, ``"1GiB"``):
  ``parse_size``; an amount of megabytes as a setting's value: ``guc_megabytes``;
- durations: ``duration_text`` (``1m05s``; an ``estimate`` rounds up and keeps its seconds); a
  duration in a campaign file or on the command line (``5400``, ``"90min"``, ``"1h30min"``):
  ``parse_duration``;
- GUC amounts, as PostgreSQL reads them (``parse_int``, ``parse_real`` and
  ``convert_to_base_unit`` of guc.c, with C's ``strtol``/``strtod``): ``guc_number`` in the
  setting's base unit, ``guc_bytes``; ``postgres/settings`` checks them against a version's
  ``pg_settings``.
"""

from __future__ import annotations

import math
import re

MIB = 2**20
_SIZE_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def size_text(n: float | None) -> str:
    """``1.5 GiB``, ``128 MiB``, ``512 B``; ``?`` for an unknown size."""
    if n is None:
        return "?"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}".replace(".0 ", " ")
    return f"{n:.0f} B"


# a positive size as a campaign file or a flag gives it: the parser's gate and the JSON Schema's
# pattern (ECMA-262 and Python read it alike: no flags, no Unicode classes)
SIZE_PATTERN = (
    r"^(?=[^1-9]*[1-9])\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([kKmMgGtT](?:[iI]?[bB])?|[bB])?\s*$"
)


def parse_size(text: str) -> int | None:
    """Bytes of "300MB", "1GB", "512M", "1GiB", "2048" (units of 1024, any case; a fraction of a
    byte counts as one); None when the text is no positive size (``SIZE_PATTERN``)."""
    m = re.fullmatch(SIZE_PATTERN, text)
    if m is None:
        return None
    unit = (m[2] or "b").lower()[0]
    return math.ceil(float(m[1]) * _SIZE_UNITS["" if unit == "b" else unit])


_DURATION_UNITS = {"s": 1, "sec": 1, "min": 60, "h": 3600, "d": 86400}
DURATION_FORMS = 'seconds (5400) or a duration such as "90s", "30min", "2h" or "1h30min"'


_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
# a positive duration as text: a bare number of seconds, or numbers each with its unit; the
# parser's gate and the JSON Schema's pattern (ECMA-262 and Python read it alike)
DURATION_PATTERN = (
    rf"^(?=[^1-9]*[1-9])\s*(?:{_NUMBER}|(?:{_NUMBER}\s*"
    r"(?:[sS][eE][cC]|[sS]|[mM][iI][nN]|[hH]|[dD])\s*)+)\s*$"
)


def parse_duration(val: object) -> float | None:
    """A length of time in seconds from a positive number of seconds or a string such as "90s",
    "30min", "2h" or "1h30min" (units s, sec, min, h, d in any case; a bare number is seconds;
    ``DURATION_PATTERN``); None if it is neither."""
    if isinstance(val, bool):
        return None
    if isinstance(val, int | float):
        return float(val) if 0 < val < math.inf else None
    if not isinstance(val, str) or re.fullmatch(DURATION_PATTERN, val) is None:
        return None
    parts = re.findall(rf"({_NUMBER})\s*([a-zA-Z]*)", val)
    return sum(float(n) * _DURATION_UNITS[u.lower() or "s"] for n, u in parts)


def guc_megabytes(n: float) -> str:
    """``n`` bytes as a memory setting's value in whole megabytes, at least one: ``"512MB"``."""
    return f"{max(1, int(n // MIB))}MB"


def duration_text(seconds: float, estimate: bool = False) -> str:
    """``42s``, ``3m07s``, ``1h05m``: to the nearest second, without seconds past an hour. An
    ``estimate`` (the time runs will take, a budget) is rounded up and keeps its seconds past an
    hour (``1h05m03s``), so that it never reads shorter than it is."""
    whole = int(math.ceil(seconds)) if estimate else int(round(seconds))
    h, rem = divmod(whole, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m" + (f"{s:02d}s" if s and estimate else "")
    return f"{m}m{s:02d}s" if m else f"{s}s"


# -- GUC amounts: PostgreSQL's units and numbers -----------------------------------------------

# Every unit in the smallest one (bytes, microseconds), largest first as in guc.c's tables.
MEMORY_UNITS = {"TB": 1024**4, "GB": 1024**3, "MB": 1024**2, "kB": 1024, "B": 1}
TIME_UNITS = {
    "d": 86_400_000_000,
    "h": 3_600_000_000,
    "min": 60_000_000,
    "s": 1_000_000,
    "ms": 1_000,
    "us": 1,
}


def unit_table(unit: str) -> tuple[dict[str, int], int] | None:
    """The table of a setting's unit and the size of one base unit in it ('8kB' -> 8192 bytes)."""
    if unit in TIME_UNITS:
        return TIME_UNITS, TIME_UNITS[unit]
    m = re.fullmatch(r"([0-9]*)(B|kB|MB)", unit)
    if m is None:
        return None
    return MEMORY_UNITS, int(m.group(1) or 1) * MEMORY_UNITS[m.group(2)]


def _to_base(value: float, unit: str, base_unit: str) -> float | None:
    """``value`` ``unit`` in the setting's base unit, or None if ``unit`` is not one PostgreSQL
    takes for it. A fraction is rounded to a whole number of the next smaller unit, as guc.c does.
    """
    found = unit_table(base_unit)
    if found is None or unit not in found[0]:
        return None
    table, base = found
    names = list(table)
    converted = value * (table[unit] / base)
    i = names.index(unit)
    if i + 1 < len(names) and math.isfinite(converted):
        step = table[names[i + 1]] / base
        converted = _rint(converted / step) * step
    return converted


def _rint(x: float) -> float:
    """C rint(): round half to even (which is what Python's round does for floats)."""
    return float(round(x)) if math.isfinite(x) else x


# -- C number parsing (glibc, C locale) ---------------------------------------------------------

_SPACE = " \t\n\v\f\r"
INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1
_DBL_MIN = 2.2250738585072014e-308
_STRTOL = re.compile(r"[ \t\n\v\f\r]*([+-]?)(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9][0-9]*))")
_STRTOD = re.compile(
    r"[ \t\n\v\f\r]*[+-]?(?:"
    r"(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    r"|(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<inf>[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)"
    r"|(?P<nan>[nN][aA][nN](?:\([0-9A-Za-z_]*\))?))"
)


def _strtol(s: str) -> tuple[int, int, bool]:
    """C ``strtol(s, &end, 0)``: (value, end index, overflowed). end is 0 when nothing parsed."""
    m = _STRTOL.match(s)
    if m is None:
        return 0, 0, False
    sign, hexdigits, octal, decimal = m.groups()
    if hexdigits is not None:
        value = int(hexdigits, 16)
    elif octal is not None:
        value = int(octal, 8)
    else:
        value = int(decimal)
    value = -value if sign == "-" else value
    return value, m.end(), not -_LONG_MAX - 1 <= value <= _LONG_MAX


def _strtod(s: str) -> tuple[float, int, bool]:
    """C ``strtod(s, &end)``: (value, end index, ERANGE). end is 0 when nothing parsed."""
    m = _STRTOD.match(s)
    if m is None:
        return 0.0, 0, False
    text = m.group(0).strip(_SPACE)
    if m.group("nan"):
        return math.nan, m.end(), False
    try:
        value = float.fromhex(text) if m.group("hex") else float(text)
    except OverflowError:
        return math.inf, m.end(), True
    if m.group("inf"):
        return value, m.end(), False
    if m.group("hex"):
        digits = m.group("hex")[2:].lower().split("p")[0]
    else:
        digits = m.group("dec").lower().split("e")[0]
    # glibc sets ERANGE on overflow and when a non-zero number comes out zero or subnormal
    tiny = abs(value) < _DBL_MIN and any(c not in "0." for c in digits)
    return value, m.end(), math.isinf(value) or tiny


def guc_number(value: str, unit: str | None, integer: bool = True) -> float | None:
    """``value`` of a setting whose base unit is ``unit`` ('8kB', 's', None: no unit) in that
    unit, as PostgreSQL's parse_int (``integer``) or parse_real read it (an int is rounded but not
    range-checked), or None if PostgreSQL would reject its syntax ('1GB' of shared_buffers is
    131072; '5min' of a setting in s is 300)."""
    if integer:
        ival, end, overflow = _strtol(value)
        if overflow or value[end : end + 1] in (".", "e", "E"):
            num, end, erange = _strtod(value)
        else:
            num, erange = float(ival), False
    else:
        num, end, erange = _strtod(value)
    if end == 0 or erange or math.isnan(num):
        return None
    suffix = value[end:].strip(_SPACE)  # blanks may come before and after the unit
    if suffix:
        based = _to_base(num, suffix, unit) if unit else None
        if based is None:
            return None
        num = based
    return _rint(num) if integer else num


def guc_bytes(value: str, unit: str | None) -> float | None:
    """A memory setting's ``value`` in bytes, its base unit ``unit`` ('8kB' of shared_buffers:
    '1GB' and '131072' are both 1 GiB); None if ``unit`` is no memory unit or the value no
    amount PostgreSQL reads."""
    found = unit_table(unit) if unit else None
    amount = guc_number(value, unit)
    if amount is None or found is None or found[0] is not MEMORY_UNITS:
        return None
    return amount * found[1]
