"""PostgreSQL settings (GUCs) checked against the catalog of the server version that will run them.

The catalog is ``pg_settings`` of that version (``CATALOG_SQL``), one ``SettingDef`` per row. Values
are judged by PostgreSQL's own rules (``parse_bool``, ``parse_int``, ``parse_real`` and
``convert_to_base_unit`` in src/backend/utils/misc/guc.c), re-expressed here:

* integers: C ``strtol`` with base 0, so ``0x1F`` is hex and ``010`` is octal (``08`` is invalid);
  a ``.``, ``e`` or ``E`` after the number re-reads it as a C ``strtod`` float (``1.5``, ``1e3``,
  ``0x1.8``); whitespace may precede the number and surround the unit; the result is rounded half
  to even and must fit a 32-bit int.
* reals: ``strtod`` alone, so ``010`` is ten and ``inf`` parses (then fails the range check).
* units are case-sensitive: B kB MB GB TB, us ms s min h d. ``1.5GB`` is first rounded to a whole
  number of the next smaller unit (MB), then to the setting's base unit (``8kB`` blocks for
  shared_buffers, so ``1GB`` = 131072).
* booleans: on, off, true, false, yes, no, 1, 0 and unique prefixes (t, fa, y, n, of), any case,
  no surrounding blanks.
* enums: any case, whole words only, including the hidden synonyms PostgreSQL accepts but
  ``pg_settings.enumvals`` does not list (``synchronous_commit = true``,
  ``wal_level = hot_standby``).
* strings are not checked: their check hooks (e.g. TimeZone) run inside the server only.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pglab.errors import SettingsError
from pglab.units import INT_MAX, MEMORY_UNITS, guc_number, unit_table

CATALOG_SQL = (
    "SELECT name, vartype, unit, min_val, max_val, enumvals, context, boot_val, reset_val "
    "FROM pg_settings ORDER BY name"
)

HINT = (
    "Check the names with `SHOW ALL` or "
    "https://www.postgresql.org/docs/current/runtime-config.html; values take the units shown."
)


@dataclass(frozen=True, slots=True)
class SettingDef:
    """One row of ``pg_settings``: what a setting accepts and when a change takes effect.

    ``min_val``/``max_val`` are in the base ``unit`` (for shared_buffers, 8kB blocks).
    """

    name: str
    vartype: str  # bool, integer, real, string, enum
    unit: str | None = None  # None, 'B', 'kB', 'MB', '8kB', 'ms', 's', 'min'
    min_val: float | None = None
    max_val: float | None = None
    enumvals: tuple[str, ...] = ()
    # internal, postmaster, sighup, superuser-backend, backend, superuser or user
    context: str = "user"
    boot_val: str | None = None
    reset_val: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> SettingDef:
        """From a row of ``CATALOG_SQL`` as psycopg returns it (or as read back from JSON)."""

        def num(text: Any) -> float | None:
            return None if text is None else float(text)

        return cls(
            name=row["name"],
            vartype=row["vartype"],
            unit=row.get("unit"),
            min_val=num(row.get("min_val")),
            max_val=num(row.get("max_val")),
            enumvals=tuple(row.get("enumvals") or ()),
            context=row["context"],
            boot_val=row.get("boot_val"),
            reset_val=row.get("reset_val"),
        )


def catalog_from_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, SettingDef]:
    """The catalog as ``validate`` takes it: name -> SettingDef."""
    return {r["name"]: SettingDef.from_row(r) for r in rows}


def _number(defn: SettingDef, value: str) -> float | None:
    """The value in the setting's base unit as PostgreSQL's parse_int / parse_real read it (an
    int is rounded but not yet range-checked), or None if PostgreSQL would reject its syntax."""
    return guc_number(value, defn.unit, integer=defn.vartype == "integer")


# -- booleans and enums ------------------------------------------------------------------------

_BOOL_WORDS = {"true": True, "false": False, "yes": True, "no": False}
_BOOLISH_TRUE = ("true", "yes", "1")
_BOOLISH_FALSE = ("false", "no", "0")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(s: str) -> str:
    """ASCII-only lower case, as pg_strcasecmp and GUC name matching compare."""
    return s.translate(_ASCII_LOWER)


def _parse_bool(value: str) -> bool | None:
    """PostgreSQL's parse_bool: the words or unique prefixes of them, any case; else None."""
    v = _lower(value)
    if v in ("1", "0"):
        return v == "1"
    if v in ("on", "of", "off"):  # a lone "o" is ambiguous
        return v == "on"
    for word, result in _BOOL_WORDS.items():
        if v and word.startswith(v):
            return result
    return None


def _enum_value(defn: SettingDef, value: str) -> str | None:
    """The enum value PostgreSQL would store, spelled as SHOW reports it; None if not accepted.

    pg_settings.enumvals omits hidden synonyms; guc_tables.c and xlog.c define them as: the
    boolean words for every enum that has both "on" and "off"; "debug" (= debug2) in message
    levels, and "info" in the client ones that do not list it; wal_level's old names.
    """
    visible = {_lower(e): e for e in defn.enumvals}
    v = _lower(value)
    if v in visible:
        canonical = v
    elif {"on", "off"} <= visible.keys() and v in _BOOLISH_TRUE + _BOOLISH_FALSE:
        canonical = "on" if v in _BOOLISH_TRUE else "off"
    elif v == "debug" and "debug2" in visible:
        canonical = "debug2"
    elif v == "info" and "debug1" in visible:
        canonical = "info"
    elif v in ("archive", "hot_standby") and defn.name == "wal_level":
        canonical = "replica"
    else:
        return None
    if defn.name == "wal_compression" and canonical == "on" and "pglz" in visible:
        canonical = "pglz"  # "on" is another name of pglz, listed first
    return visible.get(canonical, canonical)


# -- messages ----------------------------------------------------------------------------------


def _amount(defn: SettingDef, x: float, exact: bool) -> str:
    """A base-unit amount for people: in the largest unit holding it exactly, as PostgreSQL prints
    it ('128kB' for 16 blocks of 8kB); if that is long and not ``exact``, rounded ('8TB')."""
    found = unit_table(defn.unit) if defn.unit else None
    if found is None or x <= 0:
        return f"{x:g}" if defn.vartype == "real" else str(int(x))
    table, base = found
    if defn.vartype == "integer":
        total: float = int(x) * base  # in bytes or microseconds, exactly
        name = next(n for n, size in table.items() if total % size == 0)
        text = f"{int(total) // table[name]}{name}"
    else:  # for a real, a unit giving an integer within 1e-8 will do, else the smallest
        total = x * base
        name = next((n for n, size in table.items() if _whole(total / size)), list(table)[-1])
        text = f"{total / table[name]:g}{name}"
    if exact or len(text) <= 8:
        return text
    name = next((n for n, size in table.items() if total >= size), list(table)[-1])
    return f"{total / table[name]:.4g}{name}"


def _whole(q: float) -> bool:
    return abs(q - round(q)) <= 1e-8 * q


def _bound(defn: SettingDef, x: float) -> str:
    exact, rough = _amount(defn, x, exact=True), _amount(defn, x, exact=False)
    return exact if exact == rough else f"{exact} (about {rough})"


def _range(defn: SettingDef) -> str:
    lo, hi = defn.min_val, defn.max_val
    if lo is None or hi is None:
        return ""
    unbounded = hi >= 1e300 or (hi == INT_MAX and not defn.unit)
    if unbounded:
        return f", at least {_amount(defn, lo, exact=False)}"
    return f", between {_amount(defn, lo, exact=False)} and {_amount(defn, hi, exact=False)}"


def _listing(values: Iterable[str], last: str = ", ") -> str:
    shown = [v if v and " " not in v else f'"{v}"' for v in values]
    return ", ".join(shown[:-1]) + last + shown[-1] if len(shown) > 1 else "".join(shown)


_SLRU_BUFFERS = (
    "commit_timestamp_buffers",
    "multixact_member_buffers",
    "multixact_offset_buffers",
    "notify_buffers",
    "serializable_buffers",
    "subtransaction_buffers",
    "transaction_buffers",
)
# Rules of check hooks that the server applies after the range check and pg_settings cannot show
# (max_stack_depth's depends on the stack limit of the machine, so it is not here).
_HOOKS: dict[str, tuple[Callable[[float], bool], str]] = {
    **{name: (lambda x: x % 16 == 0, "must be a multiple of 16") for name in _SLRU_BUFFERS},
    "vacuum_buffer_usage_limit": (lambda x: x == 0 or x >= 128, "must be 0 or at least 128kB"),
    "io_max_concurrency": (lambda x: x == -1 or x >= 1, "must be -1 or at least 1"),
}


def _problem(defn: SettingDef, value: str) -> str | None:
    """What is wrong with ``value`` for this setting (without the name), or None."""
    if defn.vartype == "bool":
        if _parse_bool(value) is None:
            return "not a boolean; expected on, off, true, false, yes, no, 1 or 0"
    elif defn.vartype == "enum":
        if _enum_value(defn, value) is None:
            return f"not one of {_listing(defn.enumvals)}"
    elif defn.vartype in ("integer", "real"):
        num = _number(defn, value)
        if num is None:
            kind = "an integer" if defn.vartype == "integer" else "a number"
            units = unit_table(defn.unit) if defn.unit else None
            if units is not None:
                kind += f" with an optional unit ({', '.join(reversed(units[0]))})"
            return f"invalid value; expected {kind}{_range(defn)}"
        if defn.min_val is not None and num < defn.min_val:
            return f"below the minimum {_bound(defn, defn.min_val)}"
        if defn.max_val is not None and num > defn.max_val:
            return f"above the maximum {_bound(defn, defn.max_val)}"
        if defn.name in _HOOKS and not _HOOKS[defn.name][0](num):
            return _HOOKS[defn.name][1]
    return None


def check_value(defn: SettingDef, value: str) -> str | None:
    """None if PostgreSQL would accept ``value`` for this setting, else what is wrong with it, e.g.
    ``checkpoint_timeout = "10s": below the minimum 30s``."""
    problem = _problem(defn, value)
    return None if problem is None else f'{defn.name} = "{value}": {problem}'


def number(defn: SettingDef, value: str) -> float | None:
    """A numeric setting's value as the server reads it, in the setting's base unit (8kB blocks
    of shared_buffers, kB of work_mem), or, for a memory setting, in bytes with ``in_bytes``;
    None if the server would not take it."""
    if defn.vartype not in ("integer", "real") or check_value(defn, value) is not None:
        return None
    return _number(defn, value)


def in_bytes(defn: SettingDef, value: str) -> float | None:
    """A memory setting's value in bytes ('1GB' and '131072' of shared_buffers are 1 GiB);
    None if it is not a memory setting or not a value the server takes."""
    found = unit_table(defn.unit) if defn.unit else None
    amount = number(defn, value)
    if amount is None or found is None or found[0] is not MEMORY_UNITS:
        return None
    return amount * found[1]


# -- names -------------------------------------------------------------------------------------

# Old names PostgreSQL still maps to new ones (guc.c map_old_guc_names).
_OLD_NAMES = {
    "sort_mem": "work_mem",
    "vacuum_mem": "maintenance_work_mem",
    "ssl_ecdh_curve": "ssl_groups",
}
# In pg_settings, but rejected in a configuration file (GUC_DISALLOW_IN_FILE).
_NOT_IN_FILE = {
    "config_file",
    "transaction_isolation",
    "transaction_read_only",
    "transaction_deferrable",
}
_CUSTOM_NAME = re.compile(r"[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_$\x80-\U0010ffff]*")


def _index(catalog: Mapping[str, SettingDef]) -> dict[str, SettingDef]:
    return {_lower(name): defn for name, defn in catalog.items()}


def _lookup(name: str, index: Mapping[str, SettingDef]) -> SettingDef | None:
    """The setting PostgreSQL would take ``name`` for (case-insensitive, old names mapped)."""
    key = _lower(name)
    return index.get(key) or index.get(_OLD_NAMES.get(key, ""))


def lookup(name: str, catalog: Mapping[str, SettingDef]) -> SettingDef | None:
    """The catalog entry PostgreSQL would take ``name`` for, or None (unknown or custom)."""
    return catalog.get(name) or _lookup(name, _index(catalog))


def _valid_custom_name(name: str) -> bool:
    """Two or more identifiers joined by dots: a placeholder PostgreSQL keeps for an extension."""
    parts = name.split(".")
    return len(parts) > 1 and all(_CUSTOM_NAME.fullmatch(p) for p in parts)


def _unknown(name: str, index: Mapping[str, SettingDef]) -> str:
    if "." in name:
        return (
            f'invalid setting name "{name}": a custom name is two or more identifiers '
            "joined by dots"
        )
    close = difflib.get_close_matches(_lower(name), list(index), n=3)
    text = f'unknown setting "{name}"'
    if close:
        text += f" — did you mean {_listing([index[c].name for c in close], ' or ')}?"
    return text


def validate(
    settings: Mapping[str, str], catalog: Mapping[str, SettingDef], where: str = ""
) -> list[str]:
    """Every problem with ``settings`` on the server whose catalog this is, one string each,
    each starting with ``where`` (e.g. ``variant "big": ``)."""
    index = _index(catalog)
    problems = []
    for name, value in settings.items():
        defn = _lookup(name, index)
        if defn is None:
            if not ("." in name and _valid_custom_name(name)):
                problems.append(where + _unknown(name, index))
            continue
        problem: str | None
        if defn.context == "internal":
            problem = "cannot be set: a read-only setting (fixed by the build or by initdb)"
        elif defn.name in _NOT_IN_FILE:
            problem = "cannot be set in a configuration file"
        else:
            problem = _problem(defn, value)
        if problem:
            problems.append(f'{where}{name} = "{value}": {problem}')
    return problems


def exists(name: str, catalog: Mapping[str, SettingDef]) -> bool:
    """Whether ``name`` is a setting of the server whose catalog this is (custom names with a
    dot count as existing: an extension may define them)."""
    return _lookup(name, _index(catalog)) is not None or ("." in name and _valid_custom_name(name))


def raise_if_problems(problems: list[str]) -> None:
    """Raise one SettingsError listing every problem, if there is any."""
    if problems:
        what = "a setting" if len(problems) == 1 else f"{len(problems)} settings"
        lines = "\n".join(f"  {p}" for p in problems)
        raise SettingsError(f"PostgreSQL would reject {what}:\n{lines}", hint=HINT)


# -- comparing ---------------------------------------------------------------------------------


def _canonical(defn: SettingDef, value: str) -> object:
    """A form of a bool, enum or string value that is equal for all spellings of it."""
    if defn.vartype == "bool":
        parsed: object = _parse_bool(value)
    elif defn.vartype == "enum":
        parsed = _enum_value(defn, value)
    else:  # strings: SHOW may change case and blanks (DateStyle "iso, dmy" -> "ISO, DMY")
        parsed = re.sub(r"\s+", "", _lower(value))
    return ("invalid", value) if parsed is None else parsed


def same_value(defn: SettingDef, a: str, b: str) -> bool:
    """True if ``a`` and ``b`` are the same value for this setting: for shared_buffers, '1GB',
    '1024MB', '131072' and '1048576kB' all are.

    Meant to check that the server took a value: reals compare as SHOW prints them (6 digits),
    and up to the rounding a unit brings ("1.3125" and "1.3125ms" are 1.3125 and 1.312 ms).
    """
    if a == b:
        return True
    if defn.vartype not in ("integer", "real"):
        return _canonical(defn, a) == _canonical(defn, b)
    x, y = _number(defn, a), _number(defn, b)
    if x is None or y is None:
        return False
    if defn.vartype == "integer":
        return x == y
    return f"{x:g}" == f"{y:g}" or abs(x - y) <= _rounding_step(defn)


def _rounding_step(defn: SettingDef) -> float:
    """How far a value given with the base unit can be moved by the rounding (0.001 for ms)."""
    found = unit_table(defn.unit) if defn.unit else None
    if found is None:
        return 0.0
    table, base = found
    return max((size for size in table.values() if size < base), default=0) / base


def needs_restart(
    old: Mapping[str, str], new: Mapping[str, str], catalog: Mapping[str, SettingDef]
) -> list[str]:
    """The settings whose change from ``old`` to ``new`` (added, removed or another value) takes
    a server restart: context 'postmaster', or unknown to the catalog (e.g. an extension's)."""
    index = _index(catalog)
    olds = {_lower(k): v for k, v in old.items()}
    news = {_lower(k): v for k, v in new.items()}
    names = {_lower(k): k for k in old} | {_lower(k): k for k in new}
    restart = []
    for key, name in sorted(names.items()):
        defn = _lookup(name, index)
        before, after = olds.get(key), news.get(key)
        if (
            before is not None
            and after is not None
            and (before == after or (defn is not None and same_value(defn, before, after)))
        ):
            continue
        if defn is None or defn.context == "postmaster":
            restart.append(name)
    return restart
