"""A captured workload's replay, declared (``replay = "FILE"``): the workload file of ``pglab
capture`` and pgreplay's speed. It runs no pgbench: ``pgbench`` holds the options the file gave
the phase, for its identity.

A declaration: the standard library and pglab's core modules only (``campaign/`` imports it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import Any, ClassVar

from pglab.metric_units import declare_namespace
from pglab.workloads.pgbench.work import PgbenchWork, own_fields

KIND = "replay"
# its run metrics, kept under its name ("replay.KEY"; a phase's "phase.NAME.replay.KEY": a
# phase's name may hold dots), and their units
METRICS = declare_namespace(
    KIND,
    {
        "replay_s": "s",
        "lag_s": "s",
        "statements_s": "statements/s",
        "statements_active_s": "statements/s",  # per second of the sessions' active time
        "errors": "statements",
        "exec_ms": "ms",
        "active_ms": "ms",
        "divergence_pct": "%",
        "marked": "yes/no",
    },
)
KEYS = ("replay", "speed")  # its [workload] keys
# its [dataset] fields, part of its points' identity (campaign/spec.DatasetSpec): the captured
# dump, its roles and databases (set on the point's dataset by the plan)
DATASET_FIELDS = ("dump", "roles", "databases")


@dataclass(frozen=True, slots=True)
class ReplayWork:
    """A workload file of pglab capture (an absolute path) replayed by pgreplay -s speed."""

    KEYS: ClassVar[tuple[str, ...]] = KEYS
    GENERATED: ClassVar[bool] = True

    replay: str
    speed: float = 1.0
    pgbench: PgbenchWork = field(default_factory=lambda: PgbenchWork(vacuum=False))

    @classmethod
    def of_flat(cls, f: Mapping[str, Any], pgbench: PgbenchWork) -> ReplayWork | None:
        """This kind's work from a phase's flat fields (``campaign/identity.flat``'s), or
        None: the fields are not of this kind's phase."""
        if f["replay"] is None:
            return None
        return ReplayWork(f["replay"], f["speed"], pgbench)

    @property
    def kind(self) -> str:
        return KIND

    def with_pgbench(self, options: PgbenchWork) -> ReplayWork:
        return replace(self, pgbench=options)

    @property
    def label(self) -> str:
        return f"replay {PurePath(self.replay).name}" + f" ×{self.speed:g}" * (self.speed != 1)

    @property
    def live(self) -> bool:
        return self.pgbench.progress

    @property
    def dataset_kind(self) -> str | None:
        return None  # its dump's, set on the point's dataset by the plan

    def stored(self) -> dict[str, object]:
        return {**self.pgbench.stored(), **own_fields(self)}
