"""sysbench's work, declared (``generator = "sysbench"``): the OLTP test it runs on its sbtest
tables. Its rate and random seed are among the pgbench options it composes (``pgbench``: the
keys it shares with pgbench's runs; the others the file gave, kept for its identity).

A declaration: the standard library and pglab's core modules only (``campaign/`` imports it)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from pglab.workloads.pgbench.work import PgbenchWork, own_fields

GENERATOR = "sysbench"
KEYS = ("generator", "test")  # its own [workload] keys
DEFAULT_TEST = "oltp_read_write"


@dataclass(frozen=True, slots=True)
class SysbenchWork:
    """sysbench 1.0 running ``test`` (``campaign/generators.SYSBENCH_TESTS``)."""

    KEYS: ClassVar[tuple[str, ...]] = KEYS
    GENERATED: ClassVar[bool] = True

    test: str = DEFAULT_TEST
    pgbench: PgbenchWork = field(default_factory=lambda: PgbenchWork(vacuum=False))

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
