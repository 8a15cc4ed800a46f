"""The run-to-run noise a plan should expect, measured on stored runs like its own.

The planner judges whether a campaign's repeats can find its effect (``points.design_check``)
and what ``repeats = "auto"`` will take (``points.sequential_plan``) at the noise measured
before: the SD of log TPS over a stored point's repeats (in %, about the CV), the median over
points with 3 ok runs or more. Only runs like the plan's count: the same kind of load (pgbench,
a workload kit and its mode, sysbench's test, a maintenance operation) judged on the same
figure (TPS, QphH-like, MB/s), measured for a similar time (half to twice as long) on the same
server source. A 0.3 s TPC-H-like power run or a 5 s TPC-C-like one says nothing of a 60 s
pgbench run's noise. The stored points are looked at in turn: this campaign's, the same points
(their key) in other campaigns, then the comparable points of any campaign; the answer names
the campaigns it used, or says that none was comparable and assumes ``DEFAULT_CV_PCT``.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pglab import workloads
from pglab.analysis.verdicts import DEFAULT_CV_PCT
from pglab.rows import RunRow
from pglab.stored_spec import PointJson, RunSpecJson

SIMILAR = 2.0  # measured seconds within this factor of each other are a similar duration
NAMED = 3  # campaigns named in the source before "and N more"


@dataclass(frozen=True)
class Likeness:
    """What makes two points' noise comparable: the kind of load, its figure, the seconds its
    measured phases were asked to run (None: not told by a duration) and the server source."""

    kind: str
    figure: str
    seconds: float | None
    source: str

    def like(self, other: Likeness) -> bool:
        if (self.kind, self.figure, self.source) != (other.kind, other.figure, other.source):
            return False
        if self.seconds is None or other.seconds is None:
            return self.seconds is None and other.seconds is None
        low, high = sorted((self.seconds, other.seconds))
        return high <= SIMILAR * low

    def text(self) -> str:
        seconds = f", {self.seconds:g} s" if self.seconds is not None else ""
        return f"{self.kind} {self.figure}{seconds}, {self.source}"


def likeness(point: PointJson) -> Likeness:
    """A stored or planned point's ``Likeness`` (its spec as ``RunSpec.to_dict()`` writes it)."""
    measured = [ph for ph in point.get("phases") or () if ph.get("measured", True)]
    kinds, figures = [], []
    for ph in measured:  # each one's kind as its kind tells it (workloads.likeness)
        kind, figure = workloads.likeness(ph)
        kinds.append(kind)
        figures.append(figure)
    seconds = None
    if measured and all(ph.get("duration") is not None for ph in measured):
        seconds = float(sum((ph.get("duration") or 0) * ph.get("times", 1) for ph in measured))
    return Likeness(
        " + ".join(dict.fromkeys(kinds)) or "none",
        " + ".join(dict.fromkeys(figures)) or "tps",
        seconds,
        _source(point),
    )


def _source(point: PointJson) -> str:
    server = point.get("server") or {}
    if server.get("dsn"):
        where = f"existing server {server.get('dsn')}"
    elif server.get("host"):
        where = f"server on host {server.get('host')}"
    elif build := server.get("build"):
        where = f"build of {build.get('commit') or build.get('source')}"
    elif server.get("source") == "bindir":
        where = f"bindir {server.get('bindir')}"
    else:
        where = str(server.get("source") or "embedded")
    version = server.get("version")
    return f"{where} {version}" if version else where


def noise_before(
    runs: Sequence[RunRow],
    specs: Mapping[tuple[str, str], RunSpecJson],
    campaign: str,
    points: Iterable[RunSpecJson],
) -> tuple[float, str]:
    """The run-to-run noise to expect (SD of log TPS over a point's repeats, in %, ≈ CV) for
    the plan's ``points`` and where it comes from, in words: stored points (``specs``: by
    (campaign, point_key)) like one of them, this campaign's first, then the same points in
    other campaigns, then any comparable; else ``DEFAULT_CV_PCT``, assumed, saying why."""
    planned = list(points)
    keys = {str(p.get("point_key", "")) for p in planned}
    wanted = list(dict.fromkeys(likeness(p) for p in planned))
    by_point: dict[tuple[str, str], list[float]] = {}
    for r in runs:  # each run's figure: its TPS, or the MB/s, QphH... its kind stores instead
        if r.ok and (v := r.tps or workloads.figure_value(r.metrics)):
            by_point.setdefault((r.campaign, r.point_key), []).append(float(v))
    noise = {k: float(np.std(np.log(v), ddof=1) * 100) for k, v in by_point.items() if len(v) >= 3}
    comparable = {
        k
        for k in noise
        if k[1] in keys or (k in specs and any(likeness(specs[k]).like(w) for w in wanted))
    }
    what = "; ".join(w.text() for w in wanted)
    for where, keep in (
        ("this campaign's", lambda k: k[0] == campaign),
        ("the same points' in other campaigns", lambda k: k[1] in keys),
        (f"comparable points' ({what})", lambda k: True),
    ):
        found = sorted(k for k in comparable if keep(k))
        if found:
            named = list(dict.fromkeys(c for c, _ in found))
            more = f" and {len(named) - NAMED} more" if len(named) > NAMED else ""
            return statistics.median(noise[k] for k in found), (
                f"median of {len(found)} point(s) of {where} runs: {', '.join(named[:NAMED])}{more}"
            )
    if not noise:
        return DEFAULT_CV_PCT, "assumed: no runs stored to measure it on"
    return DEFAULT_CV_PCT, (
        f"assumed: none of the {len(noise)} stored point(s) of 3 runs or more is like this plan's "
        f"({what}: the same kind and figure, {SIMILAR:g}x the duration at most, the same "
        "server source)"
    )
