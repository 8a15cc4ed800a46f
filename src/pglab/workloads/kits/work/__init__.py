"""The pgbench-driven kits' work, declared (``kit = "tpcc"``, ``"ycsb"``, ``"tpce"``): the kit,
its mode, YCSB's request distribution, TPC-C's terminals that think, and the pgbench options
the kit runs its scripts with (composed: ``pgbench``, the kit's scripts at their weights); the
kits' table in ``kits`` (their scripts and SQL beside it), TPC-C's terminals that think in
``pacing``.

A declaration: the standard library, pglab's core modules and the other declarations only
(``campaign/`` imports it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from pglab.keys import Key
from pglab.workloads.kits.work.kits import KITS
from pglab.workloads.pgbench.work import PgbenchWork, Refusal, TuneObjective, own_fields
from pglab.workloads.tpch.work import TpchWork

# the [workload] keys that are the kits' own (mode is also TPC-H's)
KEYS = ("kit", "mode", "distribution", "pacing", "think_time")


@dataclass(frozen=True, slots=True)
class KitWork:
    """A workload kit run by pgbench (``work/kits``: its scripts and SQL)."""

    KEYS: ClassVar[tuple[str, ...]] = KEYS
    GENERATED: ClassVar[bool] = True

    kit: str
    mode: str | None = None
    distribution: str | None = None  # YCSB's request distribution (None: zipfian)
    # kit = "tpcc": "spec", terminals that key and think (clause 5.2.5: work/pacing.py;
    # clients follow from the warehouses), their New-Order mean think time in seconds (None:
    # the specification's 12 s; every keying and think time scaled with it). Part of the point
    # only when set
    pacing: str | None = None
    think_time: float | None = None
    pgbench: PgbenchWork = field(default_factory=PgbenchWork)

    @classmethod
    def of_flat(cls, f: Mapping[str, Any], pgbench: PgbenchWork) -> KitWork | None:
        """This kind's work from a phase's flat fields (``campaign/identity.flat``'s), or
        None: the fields are not of this kind's phase."""
        if f["kit"] is None:
            return None
        return KitWork(
            f["kit"],
            mode=f["mode"],
            distribution=f["distribution"],
            pacing=f["pacing"],
            think_time=f["think_time"],
            pgbench=pgbench,
        )

    @property
    def kind(self) -> str:
        return self.kit

    def with_pgbench(self, options: PgbenchWork) -> KitWork:
        return replace(self, pgbench=options)

    @property
    def label(self) -> str:
        if self.pacing is not None:  # terminals that think: 10 per warehouse, at what times
            think = "" if self.think_time is None else f", think {self.think_time * 1000:g}ms"
            return f"{self.kit} ({self.mode}, paced terminals{think})"
        return f"{self.kit} ({self.mode})"

    @property
    def live(self) -> bool:
        return self.pgbench.progress

    @property
    def dataset_kind(self) -> str | None:
        return self.kit

    def stored(self) -> dict[str, object]:
        return {**self.pgbench.stored(), **own_fields(self)}


# its keys given to a phase of another kind (or of another kit): refused (campaign/workload's
# one rule)
REFUSED_ELSEWHERE = (
    Refusal(
        ("mode",),
        lambda work: isinstance(work, KitWork | TpchWork),
        "mode = {value!r}: the mode of a workload kit, but this phase runs no kit (kit = ...)",
        of_value=True,
        said_by="kit",
    ),
    Refusal(
        ("distribution",),
        lambda work: isinstance(work, KitWork) and work.kit == "ycsb",
        'distribution = {value!r}: how kit = "ycsb" picks its keys, but this phase runs no YCSB',
        of_value=True,
        said_by="kit",
        owners=("ycsb",),
    ),
    Refusal(
        ("pacing", "think_time"),
        lambda work: isinstance(work, KitWork) and work.kit == "tpcc",
        '{keys}: terminals that think are kit = "tpcc"\'s (TPC-C clause 5.2.5), but this '
        "phase runs no TPC-C",
        said_by="kit",
        owners=("tpcc",),
    ),
)
# the [dataset] keys a kit owns (kit = "ycsb"'s record shape), refused (given, or as [matrix]
# axes) where no phase of the variant runs it: said with {keys} joined by "and"
DATASET_REFUSALS = (
    Refusal(
        ("fields", "field_length"),
        lambda work: isinstance(work, KitWork) and work.kit == "ycsb",
        '[dataset] {keys}: the shape of kit = "ycsb"\'s records, but no phase runs YCSB',
        said_by="kit",
        owners=("ycsb",),
    ),
)

# the [tune] objectives that are a kit's own figure (pglab.workloads' registry says what a file
# needs for each)
NOPM = TuneObjective("nopm", 'kit = "tpcc"\'s New-Orders per minute, higher')
TPSE = TuneObjective("tpse", 'kit = "tpce"\'s Trade-Results per second, higher')


def writes(phase: Mapping[str, Any]) -> bool | None:
    """Whether a phase of a kit (a ``PhaseSpec``'s identity, or as the store keeps it) writes,
    as the kits' table says of its kit and mode (``Kit.writes_in``); None: a kit this pglab
    does not ship."""
    kit = KITS.get(str(phase.get("kit")))
    return None if kit is None else kit.writes_in(phase.get("mode"))


def paced(work: object) -> bool:
    """Whether ``work`` is TPC-C's terminals that key and think (``pacing = "spec"``)."""
    return isinstance(work, KitWork) and work.pacing is not None


# its [workload] keys as the campaign file's reference declares them (campaign/schema/tables
# assembles them; the kits' names, modes, distributions and pacings are its choices there)
ROWS = (
    Key(
        "kit",
        "string",
        "a workload kit instead of a script: tpcc (TPC-C-like, warehouses = "
        "[dataset] scale), ycsb (records = scale), tpch (TPC-H-like power run, scale factor = "
        "scale) or tpce (TPC-E-like, customers = scale, a multiple of 1,000)",
        '"tpcc"',
        default_doc="none: pgbench's scripts",
        commented=True,
    ),
    Key(
        "mode",
        "string",
        "tpcc: procedures (a PL/pgSQL function per transaction) or client "
        "(its statements from pgbench); ycsb: the workload, a to f; tpch: power or throughput "
        "(clients = its streams); tpce: procedures or client",
        '"procedures"',
        default_doc="the kit's first",
        commented=True,
    ),
    Key(
        "distribution",
        "string",
        "ycsb: how keys are picked",
        '"zipfian"',
        default_doc="zipfian",
        commented=True,
    ),
)
PACING_ROWS = (
    Key(
        "pacing",
        "string",
        "tpcc: spec: terminals that key and think (clause 5.2.5), 10 "
        "per warehouse (clients = 10 × scale), response times measured apart",
        '"spec"',
        default_doc="none: as fast as possible",
        commented=True,
    ),
    Key(
        "think_time",
        "think_time",
        "tpcc with pacing: New-Order's mean think time; every "
        "keying and think time scaled with it (0: none)",
        '"100ms"',
        default_doc='"12s" (the specification\'s)',
        commented=True,
    ),
)
# its [dataset] keys: YCSB's record shape (defaults: DatasetSpec's)
DATASET_ROWS = (
    Key(
        "fields",
        "integer",
        "ycsb: fields per record (YCSB's fieldcount)",
        "10",
        10,
        minimum=1,
        maximum=100,
        commented=True,
    ),
    Key(
        "field_length",
        "integer",
        "ycsb: characters per field (YCSB's fieldlength)",
        "100",
        100,
        minimum=1,
        maximum=10_000,
        commented=True,
    ),
)
