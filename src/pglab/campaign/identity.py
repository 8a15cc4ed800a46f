"""A phase as part of its point's identity (``RunSpec.point_key``): its fields, without those
that are at the value they had before the field existed (so points stored before keep their
keys) and without where pglab's own kit scripts are installed."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, cast

from pglab.stored_spec import PhaseJson

if TYPE_CHECKING:
    from pglab.campaign.spec import PhaseSpec


def phase_identity(phase: PhaseSpec) -> PhaseJson:
    """The phase as stored in its point (``stored_spec.PhaseJson``: the phase's own fields, by
    ``dataclasses.asdict``; tests/unit/test_stored_spec.py holds them to the type's keys)."""
    d: dict[str, object] = asdict(phase)
    if not phase.remote:
        d.pop("generators")
    if phase.kit is not None:  # its scripts are the kit's: where pglab is installed is no part
        d["scripts"] = [
            {"label": s.label, "weight": s.weight, "sha256": s.sha256} for s in phase.scripts
        ]
    for key, default in UNSET.items():
        if d[key] == default:
            d.pop(key)
    return cast(PhaseJson, d)


# keys left out of a phase's identity at these values (they came after points were stored)
UNSET: dict[str, object] = {
    "max_tries": 1,
    "latency_limit": None,
    "failures_detailed": False,
    "report_per_command": False,
    "random_seed": None,
    "sampling_rate": None,
    "progress": True,
    "operation": None,
    "dirty": 0.0,
    "parallel": 0,
    "freeze": False,
    "columns": ("abalance",),
    "method": "btree",
    "jobs": 1,
    "compress": True,
    "target": None,
    "kit": None,
    "mode": None,
    "distribution": None,
    "defines": (),
    "generator": "pgbench",
    "test": None,
    "queries": (),
    "query_timeout": None,
    "pacing": None,
    "think_time": None,
    "replay": None,
    "speed": 1.0,
}
