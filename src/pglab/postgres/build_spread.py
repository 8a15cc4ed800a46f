"""The spread of identical builds on this machine: how far apart two builds of one source run.

Two builds of the same source can run a few percent apart on one machine (the issue measured
7–10% between builds of PostgreSQL 15.18 on the 2-core development machine): a difference that
is real and repeatable, but not the source's. ``bench/build_bias.py --keep`` measures it (builds
of one source under distinct keys, run as points of interleaved campaigns) and records it here,
in the lab home's ``build-spread.json``, with the machine it was measured on. Every build pglab
resolves on that machine then carries it (``with_spread``: ``spread_pct`` in the build's facts,
kept in each run's fingerprint), and a "+"/"−" between two builds must lie beyond it
(``analysis.verdicts.beyond_spread``); a spread measured on another machine is not used.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import TypedDict

from pglab.lab import Lab
from pglab.postgres.build import BuildInfo

FILE = "build-spread.json"


class Spread(TypedDict):
    """``build-spread.json``: the spread (±%, the half-width within which 95% of identical
    builds' offsets lie), where and how it was measured."""

    spread_pct: float
    machine: str
    builds: int
    comparisons: int
    measured_by: str
    measured_at: float


def machine_id() -> str:
    """This machine: ``/etc/machine-id`` (a lab home copied to another machine does not
    carry its spread there), else the host name."""
    try:
        found = Path("/etc/machine-id").read_text().strip()
    except OSError:
        found = ""
    return found or socket.gethostname()


def record(lab: Lab, spread_pct: float, builds: int, comparisons: int, by: str) -> Path:
    """Keep ``spread_pct`` as this lab's and machine's spread of identical builds."""
    doc = Spread(
        spread_pct=round(spread_pct, 2),
        machine=machine_id(),
        builds=builds,
        comparisons=comparisons,
        measured_by=by,
        measured_at=time.time(),
    )
    path = lab.home / FILE
    tmp = path.with_name(FILE + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)
    return path


def known(lab: Lab) -> Spread | None:
    """The spread kept for this lab on this machine, if any (a damaged file counts as none)."""
    try:
        doc: Spread = json.loads((lab.home / FILE).read_text())
        float(doc["spread_pct"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return doc if doc.get("machine") == machine_id() else None


def with_spread(info: BuildInfo, lab: Lab) -> BuildInfo:
    """``info`` with this machine's spread of identical builds (``spread_pct``), when known:
    what a run's fingerprint keeps of the build then carries it to every comparison."""
    found = known(lab)
    if found is None:
        return info
    out = info.copy()
    out["spread_pct"] = float(found["spread_pct"])
    return out
