"""A captured workload's replay, declared (``replay = "FILE"``): the workload file of ``pglab
capture`` and pgreplay's speed. It runs no pgbench: ``pgbench`` holds the options the file gave
the phase, for its identity.

A declaration: the standard library and pglab's core modules only (``campaign/`` imports it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any, ClassVar

from pglab.keys import Key
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


def applied(
    table: Mapping[str, Any], vals: Mapping[str, Any], base_dir: Path
) -> tuple[dict[str, object], list[str]]:
    """``replay`` and ``speed`` of a table (``vals``: their values, checked) as the phase's
    updates, and what the parser says of them: a workload file of pglab capture (relative: to
    the campaign file; its format and its dump are checked when the plan is made), replayed by
    pgreplay -s ``speed``, instead of any load."""
    upd: dict[str, object] = {}
    if "speed" in vals:
        upd["speed"] = float(vals["speed"])
    if "replay" not in vals:
        return upd, []
    path = (base_dir / str(vals["replay"])).resolve()
    if not path.is_file():
        return upd, [f"replay = {vals['replay']!r}: no such workload file ({path})"]
    others = [k for k in ("script", "scripts", "kit", "operation", "generator") if k in table]
    said = [
        f"replay with {', '.join(others)}: a phase replays a captured workload or runs a load, "
        "not both"
    ]
    return {**upd, "replay": str(path), "vacuum": False}, said if others else []


# its [workload] keys as the campaign file's reference declares them (campaign/schema/tables)
ROWS = (
    Key(
        "replay",
        "string",
        "a workload file of pglab capture (relative: to the file): its "
        "sessions replayed by pgreplay at their captured times on each variant, its dump the "
        "dataset",
        '"app.json.gz"',
        default_doc="none",
        pattern=".",
        commented=True,
        axis=False,
        what="a workload file's path",
    ),
    Key(
        "speed",
        "number",
        "replay: pgreplay's speed factor (2: the captured times halved)",
        "1.0",
        ReplayWork("").speed,
        above=0,
        commented=True,
        what="a speed factor above 0",
    ),
)
# what its generator hosts share, in the doc of generators (pgbench's share its clients)
GENERATORS_DOC = "a replay's sessions"
