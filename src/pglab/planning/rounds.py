"""``repeats = "auto"`` in the executor: before each round, which points still need runs.

The plan holds every round up to ``max``; before a round starts, the runs stored so far (this
session's and a past one's alike: resuming after a failure judges the store as it is) decide,
by ``pglab.stats.sequential.undecided``, which points run in it: each point against its
reference (``campaign.questions``: the baseline variant's point, or along a compared matrix axis
the point at its first value), on its figure (TPS, a kit's NOPM or tpsE) paired by round, as
the answer ``pglab show`` will give. A compared point waits for its reference's runs of the
same round (both sides stop together when their comparison is decided; the reference goes on
while any of its comparisons is not).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pglab import workloads as workload_kinds
from pglab.campaign import questions
from pglab.campaign.parse import Campaign
from pglab.campaign.phase_work import operation_of
from pglab.campaign.spec import RunSpec
from pglab.rows import RunRow
from pglab.stats.sequential import Point, SequentialSpec, undecided
from pglab.store.base import Store

# a workload kit's headline metric, the figure its points are judged on (analysis.points):
# the figures its plug-in declares in a metric of their own (NOPM, tpsE)
HEADLINES = tuple(workload_kinds.headlines_by_metric().values())


def points_of(campaign: Campaign, runs: Sequence[RunSpec]) -> list[Point]:
    """Each point of ``runs`` (one per point) with the key of its reference point."""
    workloads = {(v.dataset.kit, tuple(map(operation_of, v.phases))) for v in campaign.variants}
    said = dict(campaign.reference)  # [analysis] reference
    baseline = (
        said.get("variant", campaign.variants[0].name)
        if len(campaign.variants) > 1 and len(workloads) == 1
        else None
    )
    axes: dict[str, object] = {}
    if baseline is None:
        axes = questions.first_values(campaign.matrix)
        axes.update({k: v for k, v in said.items() if k in axes})
    if baseline is None and not axes:
        return [Point(r.point_key) for r in runs]
    _, found = questions.pairs(
        [(r.point_key, r.variant, dict(r.axes)) for r in runs], baseline, axes
    )
    against = {other: ref for ref, other, _ in found}
    return [Point(r.point_key, against.get(r.point_key)) for r in runs]


def figure_value(run: RunRow) -> float | None:
    """An ok run's figure: a kit's headline metric (NOPM, tpsE), else its ``tps``."""
    if not run.ok:
        return None
    found = next((run.metrics[m] for m in HEADLINES if m in run.metrics), run.tps)
    return None if found is None else float(found)


class Rounds:
    """Which runs of the plan to do, judged afresh at the start of each round."""

    def __init__(
        self,
        campaign: Campaign,
        points: Sequence[RunSpec],
        store: Store,
        status: Callable[[str], None],
    ):
        assert campaign.sequential is not None
        self.spec: SequentialSpec = campaign.sequential
        self.campaign = campaign
        self.points = points_of(campaign, points)
        self.labels = {p.point_key: p.label for p in points}
        self.store = store
        self.status = status
        self.judged_round = 0
        self.active: set[str] = {p.key for p in self.points}

    def wanted(self, run: RunSpec) -> bool:
        """Whether ``run`` is to be done (its point is undecided as its round starts)."""
        if run.repeat > self.judged_round:
            self._judge(run.repeat)
        return run.point_key in self.active

    def _judge(self, round_no: int) -> None:
        values: dict[str, dict[int, float]] = {}
        for r in self.store.list_runs(self.campaign.name):
            if (v := figure_value(r)) is not None:
                values.setdefault(r.point_key, {})[r.repeat] = v
        before = self.active
        self.active = undecided(
            self.points,
            values,
            self.spec,
            self.campaign.effect_pct,
            equivalence_pct=self.campaign.equivalence_pct,
        )
        self.judged_round = round_no
        stopped = [self.labels[k] for k in self.labels if k in before and k not in self.active]
        if stopped:
            self.status(
                f"repeats auto: {len(stopped)} point(s) decided before round {round_no} "
                f"({', '.join(stopped)}); {len(self.active)} still running"
            )
        if before and not self.active:
            self.status(f"repeats auto: every point decided before round {round_no}")

    def remaining(self, runs: Sequence[RunSpec]) -> int:
        """Of ``runs`` (the plan's, still ahead), those whose points are undecided now."""
        return sum(1 for r in runs if r.point_key in self.active)
