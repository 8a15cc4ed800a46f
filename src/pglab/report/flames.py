"""Flame graphs of the CPU profiles (``pglab run --profile``), as numbers for the page to draw
with plotly.js's icicle (inlined with the rest; nothing from the network): per point, the
folded stacks of its representative run, the process kind as the root frame; and the
differential against the baseline point's representative, each frame coloured by how much its
share of its kind's samples changed (red: more, blue: less).

A frame is a node ``id`` (its number), ``label`` (the function), ``parent`` (its caller's
number) and ``value`` (its inclusive samples). Frames under ``MIN_SHARE`` of all samples are
left out so that a page of many points stays small; what they held is still in their parent's
value (plotly's ``branchvalues: "total"``).

The page's numbers are a ``Flame`` (the nodes, as plotly.js takes them) and a ``FlameDiff``
(the same with each frame's change of share), JSON in the page under the point's
``browser.PointData``.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, NamedTuple, TypedDict

from pglab.analysis.profiles import run_stacks
from pglab.report.model import Point
from pglab.rows import StoredRun

if TYPE_CHECKING:
    from pglab.report.browser import PointData

MIN_SHARE = 0.002  # of all the run's samples
MAX_NODES = 3000
ROOT = "all processes"


class Flame(TypedDict):
    """A flame graph as plotly.js's icicle takes it: each frame's id, label (its function),
    parent's id and inclusive samples, the root first; and all the run's samples."""

    ids: list[str]
    labels: list[str]
    parents: list[str]
    values: list[int]
    samples: int


class FlameDiff(Flame):
    """A flame graph against the baseline point's: each frame's change of share (points of %
    of its process kind's samples), the baseline's run and its point's name."""

    delta: list[float]
    base: int | None
    base_label: str


class _Nodes(NamedTuple):
    flame: Flame
    paths: list[str]  # each kept frame's path (kind;frame;...), in the order of its id


def _name(text: str) -> str:
    return re.sub(r"[<>&]", "", text)[:80]  # plotly.js reads a few HTML tags in its text


def _tree(stacks: dict[str, Counter[str]]) -> tuple[Counter[str], dict[str, int]]:
    """Inclusive samples of every path (kind;frame;...), and each kind's total."""
    values: Counter[str] = Counter()
    totals: dict[str, int] = {}
    for kind, c in stacks.items():
        totals[kind] = sum(c.values())
        for stack, n in c.items():
            path = kind
            values[path] += n
            for frame in stack.split(";"):
                path = f"{path};{frame}"
                values[path] += n
    return values, totals


def flame(run: StoredRun | None) -> Flame | None:
    """The run's flame graph as icicle nodes, or None when it has no profile."""
    stacks = run_stacks(run) if run is not None else {}
    if not stacks:
        return None
    values, totals = _tree(stacks)
    return _nodes(values, sum(totals.values())).flame  # the page needs the numbers only


def _nodes(values: Counter[str], total: int) -> _Nodes:
    """The kept frames, under one root (``ROOT``: every process kind's samples); a frame's id
    is its number (its path can be long), its parent's the parent frame's."""
    floor = max(1, total * MIN_SHARE)
    kept = [p for p, v in values.most_common(MAX_NODES) if v >= floor]
    keep = set(kept)
    kept = sorted((p for p in kept if ";" not in p or p.rsplit(";", 1)[0] in keep), key=len)
    number = {p: f"f{i}" for i, p in enumerate(kept, 1)}
    flame = Flame(
        ids=["f0", *number.values()],
        labels=[ROOT, *(_name(p.rsplit(";", 1)[-1]) for p in kept)],
        parents=["", *(number[p.rsplit(";", 1)[0]] if ";" in p else "f0" for p in kept)],
        values=[total, *(values[p] for p in kept)],
        samples=total,
    )
    return _Nodes(flame, kept)


def differential(
    base: StoredRun | None, run: StoredRun | None, base_label: str = ""
) -> FlameDiff | None:
    """``run``'s flame graph with each frame's change of inclusive share (points of % of its
    kind's samples) against ``base`` (the run of the point named ``base_label``): None unless
    both have a profile."""
    a = run_stacks(base) if base is not None else {}
    b = run_stacks(run) if run is not None else {}
    if not a or not b:
        return None
    va, ta = _tree(a)
    vb, tb = _tree(b)
    nodes = _nodes(vb, sum(tb.values()))
    return FlameDiff(
        **nodes.flame,
        delta=[0.0] + [round(_share(vb, tb, p) - _share(va, ta, p), 2) for p in nodes.paths],
        base=base.id if base is not None else None,
        base_label=_name(base_label),
    )


def _share(values: Counter[str], totals: dict[str, int], path: str) -> float:
    kind = path.split(";", 1)[0]
    return 100 * values.get(path, 0) / totals[kind] if totals.get(kind) else 0.0


def add(data: dict[int, PointData], points: list[Point], baseline: str | None) -> None:
    """Put each point's flame graph, and its differential against the baseline point, in the
    numbers the page draws (``data``: point number -> ``browser.point_data``)."""
    base = next((pt for pt in points if pt.label == baseline), points[0] if points else None)
    base_run = base.representative if base is not None else None
    for n, d in data.items():
        pt = points[n - 1]
        found = flame(pt.representative)
        if found is None:
            continue  # not profiled: the point's numbers as they were
        d["flame"] = found
        if pt is base or base is None:
            continue
        diff = differential(base_run, pt.representative, base.label)
        if diff is not None:
            d["flame_diff"] = diff
