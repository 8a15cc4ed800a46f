"""Scaling over cores: TPS against the ``os.cpus`` matrix axis (``[matrix.os] cpus``, the CPUs
the server was confined to), the other half of the scaling question beside ``run_facts.scaling``
over clients. Per series (the variant and its other matrix coordinates, clients included):
median TPS over the repeats with its 95% CI, TPS per core, and the efficiency
``tps(k) / (k · tps(k_min) / k_min)`` (1.0: TPS grows as the cores do). Pure functions on the
store's rows."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pglab.analysis.tidy import measured_phases
from pglab.rows import RunRow
from pglab.stats.summary import summarize_point
from pglab.telemetry.summary import phase_summary

if TYPE_CHECKING:  # the store's type only
    from pglab.store.base import Store

AXIS = "os.cpus"


@dataclass(frozen=True)
class CoresPoint:
    """One core count of a series: median TPS over its repeats and what it means per core."""

    series: str  # the point's label without its os.cpus=N coordinate (the variant if nothing)
    cpus: int
    n: int  # ok repeats
    tps: float  # median
    ci_low: float | None  # 95% CI of the mean TPS (None with one repeat)
    ci_high: float | None
    tps_per_core: float
    efficiency: float  # 1.0 at the fewest cores


def cores_key(axes: Mapping[str, object], variant: str, label: str) -> tuple[str, int] | None:
    """(series, cpus) of a run or point with an ``os.cpus`` matrix coordinate, else None."""
    cpus = axes.get(AXIS)
    if not isinstance(cpus, int) or isinstance(cpus, bool):
        return None
    named = [variant] if label == variant or label.startswith(f"{variant} ") else []
    others = [f"{k}={v}" for k, v in axes.items() if k != AXIS]
    return " ".join(named + others) or variant, cpus


def tps_by_count(
    rows: Sequence[RunRow],
    key_of: Callable[[Mapping[str, object], str, str], tuple[str, int] | None],
) -> dict[str, dict[int, list[float]]]:
    """The ok runs' TPS by series and count (clients, cores: ``key_of`` of a run's axes,
    variant and label gives its series and count, or None for a run without the axis)."""
    tps: dict[str, dict[int, list[float]]] = {}
    for r in rows:
        key = key_of(r.axes, r.variant, r.label)
        if key is None or not r.ok or r.tps is None:
            continue
        tps.setdefault(key[0], {}).setdefault(key[1], []).append(float(r.tps))
    return tps


def over_cores(rows: Sequence[RunRow]) -> dict[str, list[CoresPoint]]:
    """Series (in the order first seen) of CoresPoints sorted by cores, from ``list_runs``
    rows; runs without an ``os.cpus`` coordinate, and failed ones, are left out; a series
    with one core count is no curve and is left out too."""
    tps = tps_by_count(rows, cores_key)
    out: dict[str, list[CoresPoint]] = {}
    for series, by_cpus in tps.items():
        if len(by_cpus) < 2:
            continue
        fewest = min(by_cpus)
        base = statistics.median(by_cpus[fewest]) / fewest  # TPS per core at the fewest
        out[series] = []
        for k in sorted(by_cpus):
            s = summarize_point(by_cpus[k])
            eff = s.median / (k * base) if base else float("nan")
            out[series].append(
                CoresPoint(series, k, s.n, s.median, s.ci_low, s.ci_high, s.median / k, eff)
            )
    return out


def top_waits(store: Store, rows: Sequence[RunRow]) -> dict[str, list[tuple[str, float, float]]]:
    """Point label -> the top waits (wait, % of samples, sessions) of its median-TPS run's last
    measured phase, for the points on a curve over cores (as the report's points show them)."""
    by_point: dict[str, list[RunRow]] = {}
    for r in rows:
        if r.ok and r.tps is not None and cores_key(r.axes, r.variant, r.label) is not None:
            by_point.setdefault(r.label, []).append(r)
    out = {}
    for label, runs in by_point.items():
        median = statistics.median_low([float(r.tps or 0) for r in runs])
        run = store.get_run(next(r.id for r in runs if r.tps == median))
        idxs = measured_phases(run) if run is not None else []
        if run is not None and idxs:
            last = next(p for p in run.phases if p.idx == idxs[-1])
            stored = run.series.get(str(last.idx), {})
            out[label] = phase_summary(stored, last.elapsed_s or 1.0)["top_waits"]
    return out
