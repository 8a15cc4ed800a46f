"""The toy kind's work, declared as a kind's own is (``workloads/KIND/work.py``): what its
phase is beside what every phase has. It takes no options; pgbench's, which every kind
composes, are the file's (for its identity: the phase is stored as a phase of generator
``toy``). It declares one campaign key as a kind declares its own (``ROWS``, and its refusal
beside a phase of another kind), which its runner does not read: what
``tests/unit/test_kind_declarations.py`` shows reaching the parser and the JSON Schema."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from pglab.keys import Key
from pglab.workloads.pgbench.work import PgbenchWork, Refusal

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


# its [workload] key, as the campaign file's reference declares it
ROWS = (
    Key(
        "pause_ms",
        "integer",
        "toy: milliseconds between two counts",
        "10",
        default_doc="none",
        minimum=0,
        commented=True,
    ),
)
# its key given to a phase of another kind: refused (campaign/workload's one rule); said by a
# generator = "toy" no campaign file can give, so the JSON Schema refuses it beside every
# generator it knows
REFUSED_ELSEWHERE = (
    Refusal(
        ("pause_ms",),
        lambda work: isinstance(work, ToyWork),
        "{keys}: the toy kind's, but this phase counts nothing",
        said_by="generator",
        owners=(KIND,),
    ),
)
