"""``repeats = "auto"`` in the executor: before each round, which points still need runs.

The plan holds every round up to ``max``; before a round starts, the runs stored so far (this
session's and a past one's alike: resuming after a failure judges the store as it is) decide,
by ``pglab.stats.sequential.undecided``, which points run in it. A compared point waits for its
baseline's runs of the same round (both sides stop together when their comparison is decided;
the baseline goes on while any of its comparisons is not).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pglab.campaign.parse import Campaign
from pglab.campaign.spec import RunSpec
from pglab.stats.sequential import Point, SequentialSpec, undecided
from pglab.store.base import Store


def point_of(run: RunSpec) -> Point:
    return Point(run.point_key, run.variant, " ".join(f"{k}={v}" for k, v in run.axes))


class Rounds:
    """Which runs of the plan to do, judged afresh at the start of each round."""

    def __init__(self, campaign: Campaign, points: Sequence[RunSpec], store: Store,
                 status: Callable[[str], None]):  # fmt: skip
        assert campaign.sequential is not None
        self.spec: SequentialSpec = campaign.sequential
        self.campaign = campaign
        self.points = [point_of(p) for p in points]
        self.labels = {p.point_key: p.label for p in points}
        self.baseline = campaign.variants[0].name if len(campaign.variants) > 1 else None
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
        tps: dict[str, list[float]] = {}
        for r in self.store.list_runs(self.campaign.name):
            if r.ok and r.tps is not None:
                tps.setdefault(r.point_key, []).append(float(r.tps))
        before = self.active
        self.active = undecided(
            self.points, self.baseline, tps, self.spec, self.campaign.effect_pct
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
