"""A phase as part of its point's identity (``RunSpec.point_key``): its fields, without those
that are at the value they had before the field existed (so points stored before keep their
keys) and without where pglab's own kit scripts are installed.

A phase is what every kind has and its kind's ``work`` (``workloads/work.Work``); its identity
is the one flat record it has always been (``workloads/work.STORED_FIELDS``, in that order),
which ``flat`` makes from the two and ``campaign/phase_work.phase_of`` reads back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, cast

from pglab.stored_spec import PhaseJson

if TYPE_CHECKING:
    from pglab.campaign.spec import PhaseSpec

Flat = Mapping[str, Any]  # a phase's flat fields (``flat``), as the parser reads them


def flat(phase: PhaseSpec) -> dict[str, Any]:
    """Every stored field of ``phase`` (``STORED_FIELDS``, in order): what every kind has, its
    work's (``stored()``), and another kind's fields at the value that says "not this kind"
    (``UNSET``)."""
    from pglab.workloads.work import STORED_FIELDS, UNSET  # (the registry imports this module)

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
    assert set(given) <= set(STORED_FIELDS), sorted(set(given) - set(STORED_FIELDS))
    return {k: given[k] if k in given else UNSET[k] for k in STORED_FIELDS}


def phase_identity(phase: PhaseSpec) -> PhaseJson:
    """The phase as stored in its point (``stored_spec.PhaseJson``: its flat fields, ``flat``;
    tests/unit/test_stored_spec.py holds them to the type's keys)."""
    from pglab.workloads.work import UNSET

    d = flat(phase)
    if not phase.remote:
        d.pop("generators")
    if d["kit"] is not None:  # its scripts are the kit's: where pglab is installed is no part
        d["scripts"] = [
            {"label": s.label, "weight": s.weight, "sha256": s.sha256}
            for s in phase.pgbench.scripts
        ]
    else:  # as dataclasses.asdict gave them when a phase was one dataclass
        d["scripts"] = tuple(asdict(s) for s in phase.pgbench.scripts)
    for key, default in UNSET.items():
        if d[key] == default:
            d.pop(key)
    return cast(PhaseJson, d)
