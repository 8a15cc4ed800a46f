"""A campaign file edited after some of its runs were stored.

A point is identified by the hash of everything that defines it (``RunSpec.point_key``): its
variant, matrix coordinates, server source and settings, dataset, phases and scripts (a custom
script by its content). When the file changes, stored runs whose point is no longer in it are
*stale*: resuming would put results of the old file beside those of the new one under one
campaign name. ``stale_points`` finds them and says, for a point whose label is still there, what
changed; the executor refuses to go on until the user keeps both (a new campaign name) or drops
the stale runs (``pglab run --replace``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pglab.campaign.spec import RunSpec
from pglab.rows import RunRow
from pglab.stored_spec import PointJson, RunSpecJson

# the keys of RunSpec.point_dict(): what a point is (not its repeat, campaign or telemetry)
_POINT_KEYS = tuple(PointJson.__annotations__)


@dataclass(frozen=True)
class StalePoint:
    label: str
    point_key: str
    runs: int
    changes: tuple[str, ...]  # "server.settings.shared_buffers: '128MB' → '1GB'"; () if removed

    def describe(self) -> str:
        what = "; ".join(self.changes) if self.changes else "no longer in the campaign file"
        return f"{self.label} ({self.runs} stored run(s)): {what}"


def stale_points(
    stored_runs: Iterable[RunRow],
    points: Sequence[RunSpec],
    spec_of: Callable[[int], RunSpecJson | None],
) -> list[StalePoint]:
    """Stored points (``Store.list_runs`` rows) that are not among ``points``; ``spec_of(run_id)``
    gives a stored run's spec, read only for a point whose label is still in the campaign."""
    current = {p.point_key for p in points}
    by_label = {p.label: p for p in points}
    stale: dict[str, list[RunRow]] = {}  # point key -> its stored runs
    for r in stored_runs:
        if r.point_key not in current:
            stale.setdefault(r.point_key, []).append(r)
    found = []
    for key, runs in stale.items():
        changes: tuple[str, ...] = ()
        first = runs[0]
        now = by_label.get(first.label)
        old = spec_of(first.id) if now is not None else None
        if now is not None and old is not None:
            changes = tuple(spec_changes(old, now.point_dict())) or ("its definition changed",)
        found.append(StalePoint(first.label, key, len(runs), changes))
    return sorted(found, key=lambda s: s.label)


def spec_changes(old: PointJson, new: PointJson) -> list[str]:
    """What differs between two point specs, one line per leaf: ``path: old → new``."""
    before = dict(_leaves(_plain({k: v for k, v in old.items() if k in _POINT_KEYS})))
    after = dict(_leaves(_plain({k: v for k, v in new.items() if k in _POINT_KEYS})))
    lines = []
    for path in sorted(before.keys() | after.keys()):
        a, b = before.get(path, _ABSENT), after.get(path, _ABSENT)
        if a != b:
            lines.append(f"{path}: {_show(a)} → {_show(b)}")
    return lines


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _show(value: Any) -> str:
    return repr(value)


def _plain(value: Any) -> Any:
    """As stored (JSON: tuples become lists), with lists of (name, value) pairs as mappings, so
    that a setting or a matrix axis is named by its path: ``server.settings.work_mem``."""
    value = json.loads(json.dumps(value, default=str))

    def pairs_to_dicts(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: pairs_to_dicts(x) for k, x in v.items()}
        if isinstance(v, list):
            if v and all(isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) for x in v):
                return {x[0]: pairs_to_dicts(x[1]) for x in v}
            return [pairs_to_dicts(x) for x in v]
        return v

    return pairs_to_dicts(value)


def _leaves(value: Any, path: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict):
        if not value and path:
            yield path, {}
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list) and value and all(isinstance(v, dict | list) for v in value):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value
