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

from pglab.keys import Key
from pglab.workloads.pgbench.work import (
    Beside,
    PgbenchWork,
    Refusal,
    TuneObjective,
    own_fields,
)
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
        said_by="kit",
        owners=(KIT,),
        plain=True,
    ),
)
# the keys of pgbench's runs a TPC-H-like phase has no use for (its length is its queries',
# its sessions its own; it takes random_seed): refused beside it rather than ignored, as
# [matrix] axes too
NOT_ITS = (
    "duration",
    "transactions",
    "rate",
    "generators",
    *(k for k in PgbenchWork.OPTIONS if k not in ("rate", "random_seed")),
    "threads",
)
BESIDE = (
    Beside(
        "kit",
        KIT,
        NOT_ITS,
        '{keys} with kit = "tpch": pgbench\'s options, which a TPC-H-like phase has no use '
        "for (it runs each query once: its length is theirs); it takes mode, clients (mode = "
        '"throughput"\'s streams), queries, query_timeout and random_seed — leave them out',
        axes=True,
    ),
)
# its [tune] objective (pglab.workloads' registry says what a file needs for it)
GEOMEAN = TuneObjective("geomean", "kit = \"tpch\"'s queries' geometric mean, lower")
# its scale may be a fraction: the scale factor (the [dataset] scale's shape says so)
SCALE_FACTORS = (0.01, 1000.0)
SCALE_FACTORS_SAID = 'kit = "tpch"\'s scale factor'


def clients_said(work: object, clients: int) -> str | None:
    """What the parser says of ``clients`` for a phase of ``work`` (None: nothing): a power
    run's one session runs its queries, so more than one client means nothing (unless a
    [matrix] mode makes some points throughput runs: the parser asks then)."""
    if not isinstance(work, TpchWork) or work.mode != "power" or clients == 1:
        return None
    return (
        f'clients = {clients} with kit = "tpch"\'s power run: one session runs its queries; '
        'mode = "throughput" runs clients query streams (or leave clients out)'
    )


# its [workload] keys as the campaign file's reference declares them (campaign/schema/tables)
ROWS = (
    Key(
        "queries",
        "queries",
        "tpch: the queries of the power run, in that order",
        "[1, 3, 9]",
        default_doc="all 22",
        commented=True,
    ),
    Key(
        "query_timeout",
        "number",
        "tpch: each query's statement_timeout in seconds (one "
        "stopped by it is recorded as a timeout; the run goes on)",
        "600",
        default_doc="none",
        above=0,
        commented=True,
        what="seconds",
    ),
)
# what [dataset] scale is to it, in the scale's doc
SCALE_DOC = "tpch: the scale factor, 0.01 to 1000, fractions allowed"
