"""The TPC-H-like kit's work, declared (``kit = "tpch"``): power or throughput mode, its
queries in order and each one's ``statement_timeout``. It runs no pgbench: ``pgbench`` holds
the options the file gave (its random seed and ``-D`` scale among them) for its identity.

Its 22 seeded queries and their estimated seconds are ``queries``.

A declaration: the standard library, pglab's core modules and the other declarations only
(``campaign/`` imports it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from pglab.workloads.pgbench.work import PgbenchWork, Refusal, own_fields
from pglab.workloads.tpch.work.queries import estimated_seconds as queries_seconds

KIT = "tpch"
# its own [workload] keys (beside kit and mode, the kits')
KEYS = ("queries", "query_timeout")


@dataclass(frozen=True, slots=True)
class TpchWork:
    """A TPC-H-like power run (one session, the queries in order) or throughput run
    (``clients`` query streams)."""

    KEYS: ClassVar[tuple[str, ...]] = KEYS
    GENERATED: ClassVar[bool] = True

    mode: str | None = None
    # its queries in order (): all 22), each one's statement_timeout in seconds
    queries: tuple[int, ...] = ()
    query_timeout: float | None = None
    pgbench: PgbenchWork = field(default_factory=PgbenchWork)

    @classmethod
    def of_flat(cls, f: Mapping[str, Any], pgbench: PgbenchWork) -> TpchWork | None:
        """This kind's work from a phase's flat fields (``campaign/identity.flat``'s), or
        None: the fields are not of this kind's phase."""
        if f["kit"] != KIT:
            return None
        return TpchWork(f["mode"], f["queries"], f["query_timeout"], pgbench)

    @property
    def kind(self) -> str:
        return KIT

    @property
    def kit(self) -> str:
        return KIT

    def with_pgbench(self, options: PgbenchWork) -> TpchWork:
        return replace(self, pgbench=options)

    @property
    def label(self) -> str:
        return f"{KIT} ({self.mode})"

    @property
    def live(self) -> bool:
        return self.pgbench.progress

    @property
    def dataset_kind(self) -> str | None:
        return KIT

    def estimated_seconds(self, clients: int) -> float:
        """Its plans' and queries' seconds at the scale factor it is told (``queries``'s
        estimate: a throughput run's ``clients`` streams at once)."""
        streams = clients if self.mode == "throughput" else 1
        told = self.pgbench.defines
        return queries_seconds(told, self.queries, self.query_timeout, streams)

    def stored(self) -> dict[str, object]:
        own = own_fields(self)
        return {**self.pgbench.stored(), "kit": KIT, **own}


# its keys given to a phase of another kind: refused (campaign/workload's one rule)
REFUSED_ELSEWHERE = (
    Refusal(
        KEYS,
        lambda work: isinstance(work, TpchWork),
        '{keys}: options of kit = "tpch", but this phase runs no TPC-H',
    ),
)
