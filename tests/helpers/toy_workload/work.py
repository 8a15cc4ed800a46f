"""The toy kind's work, declared as a kind's own is (``workloads/KIND/work.py``): what its
phase is beside what every phase has. It takes no options; pgbench's, which every kind
composes, are the file's (for its identity: the phase is stored as a phase of generator
``toy``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from pglab.workloads.pgbench.work import PgbenchWork

KIND = "toy"


@dataclass(frozen=True, slots=True)
class ToyWork:
    KEYS: ClassVar[tuple[str, ...]] = ()
    GENERATED: ClassVar[bool] = True

    pgbench: PgbenchWork = field(default_factory=PgbenchWork)

    @property
    def kind(self) -> str:
        return KIND

    def with_pgbench(self, options: PgbenchWork) -> ToyWork:
        return replace(self, pgbench=options)

    @property
    def label(self) -> str:
        return "toy count"

    @property
    def live(self) -> bool:
        return self.pgbench.progress

    @property
    def dataset_kind(self) -> str | None:
        return None  # pgbench's tables

    def stored(self) -> dict[str, object]:
        return {**self.pgbench.stored(), "generator": KIND}
