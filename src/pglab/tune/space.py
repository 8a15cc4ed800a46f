"""Knobs resolved against the version's own ``pg_settings``: each range in the setting's base
unit (8kB blocks of shared_buffers, kB of work_mem, seconds of checkpoint_timeout), Optuna's
distribution of it, and a sampled value written back as postgresql.conf takes it ("1GB").

With no ``[tune.knobs]``, the default knob set of the version at hand: memory, WAL and
checkpoints, the background writer and I/O, bounded by this machine's RAM; never ``fsync``,
``full_page_writes``, ``synchronous_commit`` or ``wal_level`` unless ``unsafe = true``.

A knob's value as Optuna samples and stores it (a trial's ``params``) is a :data:`Param`: a
choice's text, an integer or a float in the setting's base unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from pglab.postgres import server, settings
from pglab.postgres.settings import SettingDef
from pglab.tune.spec import KnobSpec
from pglab.units import guc_megabytes

UNSAFE = ("fsync", "full_page_writes", "synchronous_commit", "wal_level")
MIB = 2**20
GIB = 2**30

_MEMORY: tuple[tuple[str, int], ...] = (
    ("TB", 1024**4),
    ("GB", 1024**3),
    ("MB", 1024**2),
    ("kB", 1024),
    ("B", 1),
)
_TIME_US: tuple[tuple[str, int], ...] = (
    ("d", 86_400_000_000),
    ("h", 3_600_000_000),
    ("min", 60_000_000),
    ("s", 1_000_000),
    ("ms", 1_000),
    ("us", 1),
)
_UNIT_BYTES = {"B": 1, "kB": 1024, "MB": MIB, "8kB": 8192, "16MB": 16 * MIB}
_UNIT_US = {"us": 1, "ms": 1_000, "s": 1_000_000, "min": 60_000_000}

Param = str | int | float  # a knob's value in a trial: a choice, or an amount in its base unit


@dataclass(frozen=True)
class Knob:
    """One setting searched: a range in its base unit (``low``..``high``, ``log``) or
    ``choices``; ``default`` is the server's own value (as a param, None if outside)."""

    name: str
    defn: SettingDef
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    choices: tuple[str, ...] = ()

    @property
    def integer(self) -> bool:
        return self.defn.vartype == "integer"

    def distribution(self) -> BaseDistribution:
        if self.choices:
            return CategoricalDistribution(self.choices)
        if self.integer:
            return IntDistribution(int(self.low), int(self.high), log=self.log)
        return FloatDistribution(self.low, self.high, log=self.log)

    def setting(self, param: Param) -> str:
        """A sampled value as postgresql.conf takes it."""
        if self.choices:
            return str(param)
        return text_of(self.defn, float(param))

    def param(self, text: str) -> Param | None:
        """A setting's value as this knob's param, None when it is outside the knob's range
        or choices (or not a value the server takes)."""
        if self.choices:
            found = [c for c in self.choices if settings.same_value(self.defn, c, text)]
            return found[0] if found else None
        amount = settings.number(self.defn, text)
        if amount is None:
            return None
        amount = min(max(amount, self.low), self.high)  # the nearest value inside the range
        return int(round(amount)) if self.integer else float(amount)

    def describe(self) -> str:
        if self.choices:
            return " | ".join(self.choices)
        log = ", log" if self.log else ""
        return f"{text_of(self.defn, self.low)} … {text_of(self.defn, self.high)}{log}"


def text_of(defn: SettingDef, amount: float) -> str:
    """An amount in the setting's base unit as the shortest exact text: 131072 of work_mem
    (kB) is "128MB", 300 of checkpoint_timeout (s) "5min"; reals with 4 significant digits."""
    unit = defn.unit or ""
    if defn.vartype == "real":
        return f"{amount:.4g}"
    whole = int(round(amount))
    if unit in _UNIT_BYTES:
        total, table = whole * _UNIT_BYTES[unit], _MEMORY
    elif unit in _UNIT_US:
        total, table = whole * _UNIT_US[unit], _TIME_US
    else:
        return str(whole)
    if total <= 0:
        return str(whole)
    for name, size in table:
        if total % size == 0:
            return f"{total // size}{name}"
    return str(whole)


def current_value(defn: SettingDef) -> str | None:
    """The server's own value (what initdb's postgresql.conf sets, else the built-in one)."""
    return defn.reset_val if defn.reset_val is not None else defn.boot_val


def _range(name: str, lo: str, hi: str, log: bool = True) -> KnobSpec:
    return KnobSpec(name, lo, hi, log)


def default_knobs(catalog: Mapping[str, SettingDef], ram: int, unsafe: bool) -> list[KnobSpec]:
    """The knobs tuned when the file names none: those of this version, bounded by ``ram``."""
    shared_max = max(256 * MIB, int(ram * 0.4))
    found = [
        # memory
        _range("shared_buffers", "32MB", guc_megabytes(shared_max)),
        _range("work_mem", "1MB", "256MB"),
        _range("maintenance_work_mem", "16MB", "1GB"),
        _range("effective_cache_size", guc_megabytes(ram / 8), guc_megabytes(ram * 0.75)),
        # WAL and checkpoints
        _range("max_wal_size", "256MB", "16GB"),
        _range("checkpoint_timeout", "30s", "30min"),
        _range("checkpoint_completion_target", "0.5", "0.95", log=False),
        _range("wal_buffers", "512kB", "64MB"),
        _range("wal_writer_delay", "10ms", "1s"),
        _range("commit_delay", "0", "1000", log=False),
        # background writer
        _range("bgwriter_delay", "10ms", "1s"),
        _range("bgwriter_lru_maxpages", "0", "1000", log=False),
        _range("bgwriter_lru_multiplier", "0", "10", log=False),
        # I/O
        _range("effective_io_concurrency", "1", "256"),
        _range("random_page_cost", "1", "4", log=False),
    ]
    compression = catalog.get("wal_compression")
    if compression is not None:
        ways = [v for v in ("off", "pglz", "lz4", "zstd") if v in compression.enumvals]
        found.append(KnobSpec("wal_compression", choices=tuple(ways or ("off", "on"))))
    method = catalog.get("io_method")  # PostgreSQL 18: asynchronous I/O
    if method is not None:
        found.append(KnobSpec("io_method", choices=method.enumvals))
    if "io_workers" in catalog:
        found.append(_range("io_workers", "1", "32"))
    if unsafe:
        found += [
            KnobSpec("fsync", choices=("on", "off")),
            KnobSpec("full_page_writes", choices=("on", "off")),
            KnobSpec("synchronous_commit", choices=("on", "off")),
            KnobSpec("wal_level", choices=("replica", "minimal")),
        ]
    return [k for k in found if k.name in catalog]


def resolve(
    specs: Sequence[KnobSpec],
    catalog: Mapping[str, SettingDef],
    unsafe: bool,
    fixed: Mapping[str, str],
) -> tuple[list[Knob], list[str]]:
    """The knobs checked against the catalog: (knobs, problems). A problem names the knob and
    what to do: an unknown name (with the closest), a bound the version refuses (with its
    range), min above max, a log range through zero, an unsafe knob without ``unsafe = true``,
    a setting pglab manages or one [server.settings] already fixes."""
    knobs: list[Knob] = []
    problems: list[str] = []
    where = "[tune] knobs: "
    for spec in specs:
        defn = settings.lookup(spec.name, catalog)
        if defn is None:
            problems += settings.validate({spec.name: "0"}, catalog, where=where)[:1]
            continue
        if defn.name in server.LAB_MANAGED:
            problems.append(f"{where}{spec.name} is managed by pglab and cannot be tuned")
            continue
        if defn.name in UNSAFE and not unsafe:
            problems.append(
                f"{where}{spec.name} can lose committed data or break recovery: it is tuned "
                "only with unsafe = true in [tune]"
            )
            continue
        if any(settings.lookup(n, catalog) is defn for n in fixed):
            problems.append(
                f"{where}{spec.name} is also set in [server.settings]: tune it or fix it, not both"
            )
            continue
        if spec.choices:
            bad = [
                p
                for c in spec.choices
                for p in settings.validate({spec.name: c}, catalog, where=where)
            ]
            problems += bad
            if not bad:
                knobs.append(Knob(defn.name, defn, choices=spec.choices))
            continue
        if defn.vartype not in ("integer", "real"):
            problems.append(
                f"{where}{spec.name} is a {defn.vartype} setting: give its values "
                f"as a list of choices{_choices_hint(defn)}"
            )
            continue
        bad = settings.validate({spec.name: str(spec.low)}, catalog, where=where + "min of ")
        bad += settings.validate({spec.name: str(spec.high)}, catalog, where=where + "max of ")
        if bad:
            problems += bad
            continue
        low = settings.number(defn, str(spec.low))
        high = settings.number(defn, str(spec.high))
        assert low is not None and high is not None  # validated just above
        if low > high:
            problems.append(f'{where}{spec.name}: min "{spec.low}" is above max "{spec.high}"')
            continue
        if spec.log and low <= 0:
            problems.append(f'{where}{spec.name}: a log range needs min > 0 (min is "{spec.low}")')
            continue
        knobs.append(Knob(defn.name, defn, float(low), float(high), spec.log))
    return knobs, problems


def _choices_hint(defn: SettingDef) -> str:
    if defn.vartype == "bool":
        return ' (e.g. ["on", "off"])'
    if defn.enumvals:
        return f" (of {', '.join(defn.enumvals)})"
    return ""


def settings_of(knobs: Sequence[Knob], params: Mapping[str, Param]) -> dict[str, str]:
    """A trial's params as settings; ``wal_level = minimal`` brings ``max_wal_senders = 0``,
    without which the server refuses it."""
    out = {k.name: k.setting(params[k.name]) for k in knobs if k.name in params}
    if out.get("wal_level") == "minimal":
        out.setdefault("max_wal_senders", "0")
    return out


def params_of(knobs: Sequence[Knob], values: Mapping[str, str]) -> dict[str, Param]:
    """Settings as the params of the knobs they belong to (values outside a range moved to
    its nearest end, values outside the choices left out)."""
    out: dict[str, Param] = {}
    for knob in knobs:
        text = values.get(knob.name)
        if text is None:
            continue
        param = knob.param(text)
        if param is not None:
            out[knob.name] = param
    return out


def defaults_of(knobs: Sequence[Knob]) -> dict[str, str]:
    """The server's own value of every knob."""
    out = {}
    for knob in knobs:
        value = current_value(knob.defn)
        if value is not None:
            out[knob.name] = (
                value
                if knob.choices
                else text_of(knob.defn, settings.number(knob.defn, value) or 0.0)
            )
    return out
