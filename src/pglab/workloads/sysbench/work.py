"""sysbench's work, declared (``generator = "sysbench"``): the OLTP test it runs on its sbtest
tables. Its rate and random seed are among the pgbench options it composes (``pgbench``: the
keys it shares with pgbench's runs; the others the file gave, kept for its identity).

A declaration: the standard library and pglab's core modules only (``campaign/`` imports it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from pglab.keys import Key
from pglab.workloads.pgbench.work import Beside, PgbenchWork, Refusal, own_fields

GENERATOR = "sysbench"
GENERATORS = ("pgbench", GENERATOR)  # the load generator a phase runs
KEYS = ("generator", "test")  # its own [workload] keys
DEFAULT_TEST = "oltp_read_write"
# sysbench 1.0's OLTP tests (/usr/share/sysbench/*.lua) a phase may run, on its sbtest tables
SYSBENCH_TESTS = (
    DEFAULT_TEST,
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
)
# its [dataset] fields, part of its points' identity (campaign/spec.DatasetSpec): its sbtest
# tables and their rows
DATASET_FIELDS = ("tables", "table_size")
# what the campaign parser says of its phase given generator hosts
ON_THIS_MACHINE = (
    f'generator = "{GENERATOR}" runs on this machine; generator hosts (generators = [...]) run '
    "pgbench only"
)
# its tests that never write
READ_ONLY_TESTS = (
    "oltp_read_only",
    "oltp_point_select",
    "select_random_points",
    "select_random_ranges",
)


@dataclass(frozen=True, slots=True)
class SysbenchWork:
    """sysbench 1.0 running ``test`` (``SYSBENCH_TESTS``)."""

    KEYS: ClassVar[tuple[str, ...]] = KEYS
    # the options of the pgbench options it composes that sysbench runs with (--rate,
    # --rand-seed); the others are pgbench's only
    PGBENCH_OPTIONS: ClassVar[tuple[str, ...]] = ("rate", "random_seed")
    GENERATED: ClassVar[bool] = True

    test: str = DEFAULT_TEST
    pgbench: PgbenchWork = field(default_factory=lambda: PgbenchWork(vacuum=False))

    @classmethod
    def of_flat(cls, f: Mapping[str, Any], pgbench: PgbenchWork) -> SysbenchWork | None:
        """This kind's work from a phase's flat fields (``campaign/identity.flat``'s), or
        None: the fields are not of this kind's phase."""
        if f["generator"] != GENERATOR:
            return None
        return SysbenchWork(f["test"] or DEFAULT_TEST, pgbench)

    @property
    def kind(self) -> str:
        return GENERATOR

    def with_pgbench(self, options: PgbenchWork) -> SysbenchWork:
        return replace(self, pgbench=options)

    @property
    def label(self) -> str:
        return f"{GENERATOR} {self.test}"

    @property
    def live(self) -> bool:
        return self.pgbench.progress

    @property
    def dataset_kind(self) -> str | None:
        return GENERATOR

    def stored(self) -> dict[str, object]:
        return {**self.pgbench.stored(), "generator": GENERATOR, **own_fields(self)}


# its test given to a phase of another kind: refused (campaign/workload's one rule)
REFUSED_ELSEWHERE = (
    Refusal(
        ("test",),
        lambda work: isinstance(work, SysbenchWork),
        'test = {value!r}: a sysbench test, but this phase runs pgbench (generator = "sysbench" '
        "runs sysbench)",
        of_value=True,
        said_by="generator",
        owners=(GENERATOR,),
    ),
)
# what sysbench runs instead of (a phase's scripts, kit or operation), then the options of
# pgbench it has no use for (its own are PGBENCH_OPTIONS; threads are pgbench's -j): refused
# beside generator = "sysbench" rather than ignored, the first given said (campaign/workload)
INSTEAD_OF = ("script", "scripts", "kit", "operation")
NOT_ITS_OPTIONS = (
    *(k for k in PgbenchWork.OPTIONS if k not in SysbenchWork.PGBENCH_OPTIONS),
    "threads",
)
BESIDE = (
    Beside(
        "generator",
        GENERATOR,
        INSTEAD_OF,
        '{keys} with generator = "sysbench": sysbench runs its own OLTP tests (test = ...), not '
        "pgbench scripts, kits or operations",
    ),
    Beside(
        "generator",
        GENERATOR,
        NOT_ITS_OPTIONS,
        '{keys} with generator = "sysbench": pgbench\'s options; sysbench takes clients, '
        "duration, transactions, rate and random_seed",
    ),
)


# its [workload] keys as the campaign file's reference declares them (campaign/schema/tables)
ROWS = (
    Key(
        "generator",
        "string",
        "the load generator: pgbench, or sysbench (Debian's 1.0, its "
        "pgsql driver) running test on [dataset] tables × table_size",
        '"sysbench"',
        "pgbench",
        choices=GENERATORS,
        commented=True,
    ),
    Key(
        "test",
        "string",
        "sysbench: its OLTP test",
        '"oltp_read_write"',
        default_doc=DEFAULT_TEST,
        choices=SYSBENCH_TESTS,
        commented=True,
    ),
)
# its [dataset] keys: its sbtest tables (defaults: DatasetSpec's)
DATASET_ROWS = (
    Key(
        "tables",
        "integer",
        "sysbench: its sbtest tables (--tables)",
        "4",
        1,
        minimum=1,
        maximum=10_000,
        commented=True,
    ),
    Key(
        "table_size",
        "integer",
        "sysbench: rows per table (--table-size)",
        "100000",
        10_000,
        minimum=1,
        maximum=2_000_000_000,
        commented=True,
    ),
)


def writes(phase: Mapping[str, Any]) -> bool:
    """Whether a sysbench phase (a ``PhaseSpec``'s identity, or as the store keeps it) writes:
    its test's."""
    return phase.get("test") not in READ_ONLY_TESTS
