"""What a campaign's runs go by from the runs stored before them, read when the plan is made
(never in the middle of a run): per point, the most TPS a stored run made in each phase
(pgbench's per-transaction log is sampled above its budget: ``pgbench/sampling``) and the
progress of each operation phase in the point's latest stored run (what its ETA goes by:
``maintenance/figures.Prior``). The executor adds what its own runs make as it goes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pglab.campaign.phase_work import operation_of
from pglab.campaign.spec import RunSpec
from pglab.metric_units import by_phase
from pglab.records import PhaseResult
from pglab.rows import StoredRun
from pglab.store.base import Store
from pglab.workloads.maintenance.figures import Prior


@dataclass(frozen=True)
class PointHints:
    """A point's: the most TPS by phase name; the progress of its operation phases by (phase,
    iteration), from its latest run."""

    tps: Mapping[str, float] = field(default_factory=dict)
    priors: Mapping[tuple[str, int], Prior] = field(default_factory=dict)


def phase_tps(metrics: Mapping[str, float | None]) -> dict[str, float]:
    """A run's TPS by phase name, from its metrics (each phase's ``tps``)."""
    return by_phase(metrics, "tps")


def priors_of(phases: Iterable[PhaseResult]) -> dict[tuple[str, int], Prior]:
    """The progress of a run's operation phases (its ``progress.*`` table), by phase."""
    out = {}
    for ph in phases:
        found = [t for k, t in ph.tables.items() if k.startswith("progress.")]
        if found and found[0]["rows"]:
            out[(ph.name, ph.iteration)] = Prior(found[0]["rows"], ph.started_at + ph.elapsed_s)
    return out


def _stored_priors(stored: StoredRun) -> dict[tuple[str, int], Prior]:
    out = {}
    for ph in stored.phases:
        tables = stored.series.get(str(ph.idx), {})
        found = [t for k, t in tables.items() if k.startswith("progress.")]
        if found and found[0]["rows"]:
            out[(ph.name, ph.iteration)] = Prior(found[0]["rows"], ph.started_at + ph.elapsed_s)
    return out


def read(store: Store, campaign: str, runs: Iterable[RunSpec] = ()) -> dict[str, PointHints]:
    """The hints of every point of ``campaign`` with a stored run that went well; the
    operations' progress only for the points of ``runs`` that have an operation phase (a
    stored run is read whole for it)."""
    done = [r for r in store.list_runs(campaign) if r.status == "ok"]
    tps: dict[str, dict[str, float]] = {}
    latest: dict[str, int] = {}
    for row in done:
        seen = tps.setdefault(row.point_key, {})
        for name, value in phase_tps(row.metrics).items():
            seen[name] = max(seen.get(name, 0.0), value)
        latest[row.point_key] = row.id
    timed = {r.point_key for r in runs if any(map(operation_of, r.phases))}
    priors: dict[str, dict[tuple[str, int], Prior]] = {}
    for point in timed & set(latest):
        stored = store.get_run(latest[point])
        if stored is not None:  # (deleted since it was listed: no prior)
            priors[point] = _stored_priors(stored)
    return {p: PointHints(tps.get(p, {}), priors.get(p, {})) for p in set(tps) | set(priors)}
