"""pgbench's work, declared: the campaign keys pgbench reads and their parsed form,
``PgbenchWork``, which a pgbench phase runs and which every other kind composes (a kit passes
its options to pgbench; a kind that runs no pgbench keeps the ones the file gave it, so that a
later layer of the file that runs pgbench again takes them back, and its point keeps its key).

A declaration: it imports the standard library and pglab's core modules only, so that
``campaign/`` may import it (``tests/unit/test_architecture.py``'s stage "declarations")."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar

from pglab.script import Script

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

PROTOCOLS = ("simple", "extended", "prepared")
LATENCY_LOGS = ("full", "aggregate", "off")


@dataclass(frozen=True, slots=True)
class PgbenchWork:
    """One pgbench invocation's options (``-b``/``-f`` scripts, ``-R``, ``-M``, ``-C``, ``-n``,
    the per-transaction log, ``-P 1``, ``--max-tries``, ``-L``, ``--failures-detailed``,
    ``-r``, ``--random-seed``, ``--sampling-rate``, ``-D`` variables)."""

    KIND: ClassVar[str] = "pgbench"
    # the [workload] keys that are pgbench's options (in the order a refusal names them)
    OPTIONS: ClassVar[tuple[str, ...]] = (
        "rate",
        "random_seed",
        "protocol",
        "connect",
        "vacuum",
        "latency_log",
        "progress",
        "max_tries",
        "failures_detailed",
        "latency_limit",
        "report_per_command",
        "sampling_rate",
    )
    # its [workload] keys: its scripts and its options (threads, a phase's own, also reaches
    # pgbench only)
    KEYS: ClassVar[tuple[str, ...]] = ("script", "scripts", *OPTIONS)
    GENERATED: ClassVar[bool] = True  # its load may run on generator hosts

    scripts: tuple[Script, ...] = ()
    rate: float | None = None
    protocol: str = "simple"
    connect: bool = False
    vacuum: bool = True  # pgbench's vacuum of its tables (and truncate of history) before running
    latency_log: str = "full"  # "full" (-l), "aggregate" (-l --aggregate-interval=1) or "off"
    # pgbench -P 1 (each second's TPS and latency as it runs: the live view); False: the series
    # is read from the aggregate log after the phase, sparing pgbench the cost of -P. Part of
    # the point only when False
    progress: bool = True
    # pgbench 15+: --max-tries (1: a failed transaction is not retried), --failures-detailed;
    # -L (ms: transactions over it counted apart) and -r. Part of the point only when set, so
    # points stored before they existed keep their keys
    max_tries: int = 1
    latency_limit: float | None = None
    failures_detailed: bool = False
    report_per_command: bool = False
    # pgbench --random-seed (an unsigned integer, or "time" / "rand": a new seed each run; None:
    # pgbench's default, "time") and --sampling-rate (the share of transactions the
    # per-transaction log keeps, latency_log "full": its percentiles and per-second counts are
    # then of a sample). Part of the point only when set
    random_seed: int | str | None = None
    sampling_rate: float | None = None
    # pgbench variables (-D name=value: a kit's scale, sysbench's tables). Part of the point
    # only when set
    defines: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of_flat(cls, f: Mapping[str, Any]) -> PgbenchWork:
        """pgbench's options from a phase's flat fields (``campaign/identity.flat``'s)."""
        return PgbenchWork(**{field.name: f[field.name] for field in fields(PgbenchWork)})

    @property
    def kind(self) -> str:
        return self.KIND

    @property
    def pgbench(self) -> PgbenchWork:
        """The pgbench options of the phase: its own."""
        return self

    def with_pgbench(self, options: PgbenchWork) -> PgbenchWork:
        return options

    @property
    def label(self) -> str:
        return "+".join(
            s.label if s.weight == 1 or len(self.scripts) == 1 else f"{s.label}@{s.weight}"
            for s in self.scripts
        )

    @property
    def live(self) -> bool:
        """pgbench's -P lines come as the phase runs (not with progress = false)."""
        return self.progress

    @property
    def dataset_kind(self) -> str | None:
        return None

    def stored(self) -> dict[str, object]:
        """Its fields as the phase's stored identity names them (``campaign/identity``)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class Refusal:
    """A kind's own keys given to a phase of another kind, and how the campaign parser refuses
    them (``campaign/workload``'s one rule): ``keys``, whose phases ``claims`` (a phase's work
    of this kind), and what it says: ``said`` with ``{keys}`` (the keys given) or, for one key
    ``of_value``, ``{value!r}`` (its value, once checked)."""

    keys: tuple[str, ...]
    claims: Callable[[object], bool]
    said: str
    of_value: bool = False
    # the key whose value says the kind that owns these keys (kit, generator, operation) and
    # the values of it that do (none: any value): a phase takes them where its field of that
    # name is one (``campaign/workload.takes``); the JSON Schema refuses them in a table that
    # says another of that key's values
    said_by: str = ""
    owners: tuple[str, ...] = ()
    # their checked values are the phase's fields of their names, set when it has the kind
    plain: bool = False

    def refused(
        self, work: object, table: Mapping[str, Any], vals: Mapping[str, Any]
    ) -> str | None:
        """What the parser says of this kind's keys in ``table`` (``vals``: their values,
        checked) beside a phase whose work is ``work``; None: nothing to say."""
        given = [k for k in self.keys if k in (vals if self.of_value else table)]
        if not given or self.claims(work):
            return None
        if self.of_value:
            return self.said.format(value=vals[given[0]])
        return self.said.format(keys=", ".join(given))


@dataclass(frozen=True, slots=True)
class Beside:
    """Keys a kind has no use for, refused beside it rather than ignored (``campaign/workload``
    and the JSON Schema, from the same declaration): where a phase's ``key`` is ``value`` (said
    by its table or inherited), those of ``refused`` its table gives are said (``said`` with
    ``{keys}``: the keys given); the JSON Schema refuses them in a table that says ``key =
    value`` itself. ``axes``: given as ``[matrix]`` axes of a campaign with such a phase, they
    are said too."""

    key: str
    value: str
    refused: tuple[str, ...]
    said: str
    axes: bool = False

    def refusing(self, table: Mapping[str, Any]) -> str | None:
        """What the parser says of ``table``'s keys beside this kind (None: nothing)."""
        given = [k for k in self.refused if k in table]
        return self.said.format(keys=", ".join(given)) if given else None


@dataclass(frozen=True, slots=True)
class TuneObjective:
    """A ``[tune] objective`` that is a kind's own figure, as the campaign's ``[tune]`` table
    declares it (``campaign/schema/tune``): its name and, in the objective's doc, what it is
    (the registry's ``Objective`` says what a file needs for it)."""

    name: str  # "geomean"
    doc: str  # 'kit = "tpch"'s queries' geometric mean, lower'


def own_fields(work: DataclassInstance) -> dict[str, object]:
    """A kind's own fields (a dataclass's), without the pgbench options it composes: what its
    ``stored()`` adds to theirs."""
    return {f.name: getattr(work, f.name) for f in fields(work) if f.name != "pgbench"}
