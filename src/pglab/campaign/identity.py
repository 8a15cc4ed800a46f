"""A phase as part of its point's identity (``RunSpec.point_key``): its fields, without those
that are at the value they had before the field existed (so points stored before keep their
keys) and without where pglab's own kit scripts are installed.

A phase is what every kind has and its kind's ``work`` (``workloads/work.Work``); its identity
is the one flat record it has always been (``FIELDS``, in that order: the fields of the one
phase type every kind shared before the kinds declared their own), which ``flat`` makes from
the two and ``campaign/phase_work.phase_of`` reads back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from pglab.stored_spec import PhaseJson

if TYPE_CHECKING:
    from pglab.campaign.spec import PhaseSpec

Flat = Mapping[str, Any]  # a phase's flat fields (``flat``), as the parser reads them

# a phase's stored fields, in their stored order
FIELDS = (
    "name",
    "scripts",
    "clients",
    "threads",
    "duration",
    "transactions",
    "times",
    "measured",
    "rate",
    "protocol",
    "connect",
    "vacuum",
    "latency_log",
    "progress",
    "generators",
    "max_tries",
    "latency_limit",
    "failures_detailed",
    "report_per_command",
    "random_seed",
    "sampling_rate",
    "operation",
    "dirty",
    "parallel",
    "freeze",
    "columns",
    "method",
    "jobs",
    "compress",
    "target",
    "kit",
    "mode",
    "distribution",
    "defines",
    "generator",
    "test",
    "queries",
    "query_timeout",
    "pacing",
    "think_time",
    "replay",
    "speed",
)


def flat(phase: PhaseSpec) -> dict[str, Any]:
    """Every stored field of ``phase`` (``FIELDS``, in order): what every kind has, its work's
    (``stored()``), and another kind's fields at the value that says "not this kind"
    (``UNSET``)."""
    given: dict[str, Any] = {
        "name": phase.name,
        "clients": phase.clients,
        "threads": phase.threads,
        "duration": phase.duration,
        "transactions": phase.transactions,
        "times": phase.times,
        "measured": phase.measured,
        "generators": phase.generators,
        **phase.work.stored(),
    }
    assert set(given) <= set(FIELDS), sorted(set(given) - set(FIELDS))
    return {k: given[k] if k in given else UNSET[k] for k in FIELDS}


def phase_identity(phase: PhaseSpec) -> PhaseJson:
    """The phase as stored in its point (``stored_spec.PhaseJson``: its flat fields, ``flat``;
    tests/unit/test_stored_spec.py holds them to the type's keys)."""
    d = flat(phase)
    if not phase.remote:
        d.pop("generators")
    if d["kit"] is not None:  # its scripts are the kit's: where pglab is installed is no part
        d["scripts"] = [
            {"label": s.label, "weight": s.weight, "sha256": s.sha256}
            for s in phase.pgbench.scripts
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
