"""The "run a campaign" use case (``run/campaign_run.py``) on what needs no server: a fleet
job's group cut from the plan, the outline's estimate, the overhead note, and stale points
refused before anything runs (a real SQLite store, nothing started)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.synthetic_runs import fill

from pglab.analysis.points import SequentialPlan
from pglab.campaign import parse as campaigns
from pglab.errors import CampaignError
from pglab.lab import Lab
from pglab.planning.plan import make_plan
from pglab.run import campaign_run
from pglab.run.campaign_run import How, Outline, Stored, of_group, with_overhead
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store

DOC = {
    "name": "group",
    "repeats": 3,
    "dataset": {"scale": 1},
    "workload": {"duration": 5},
    "matrix": {"clients": [1, 2]},
}


def test_a_fleet_job_runs_its_group_and_counts_the_rest_of_it_done() -> None:
    plan = make_plan(campaigns.parse(DOC, default_name="group"))
    one = plan.points[0].point_key
    assert of_group(plan, How()) is plan  # no group: the whole plan
    cut = of_group(plan, How(points={one}))
    assert [(r.point_key, r.repeat) for r in cut.runs] == [(one, 1), (one, 2), (one, 3)]
    assert cut.done == 0 and cut.points == plan.points  # stale points are judged on them all
    done_one = make_plan(plan.campaign, {plan.runs[0].run_key})
    assert of_group(done_one, How(points={plan.runs[0].point_key})).done == 1
    second = of_group(plan, How(points={one}, rounds=[2]))
    assert [(r.point_key, r.repeat) for r in second.runs] == [(one, 2)] and second.done == 0


def test_the_outline_expects_repeats_auto_s_share_of_the_most() -> None:
    plan = make_plan(campaigns.parse(DOC, default_name="group"))
    whole = plan.estimated_seconds()
    fixed = Outline(plan, Stored(), None)
    assert fixed.seconds == whole
    auto = Outline(plan, Stored(), SequentialPlan(6, 30, 15.0, 2.0, "assumed"))
    assert auto.seconds == pytest.approx(whole / 2)
    beyond = Outline(plan, Stored(), SequentialPlan(6, 30, 45.0, 2.0, "assumed"))
    assert beyond.seconds == pytest.approx(whole)  # never past the most


def test_the_measured_overhead_replaces_the_assumed_one_and_says_so() -> None:
    plan = make_plan(campaigns.parse(DOC, default_name="group"))
    assert with_overhead(plan, None) is plan
    measured = with_overhead(plan, (4.25, "median of 3 of this campaign's runs"))
    assert measured.run_overhead_s == 4.25
    assert measured.notes[-1] == (
        "estimates count 4.2 s per run beyond its phases (median of 3 of this campaign's runs)"
    )


class Told(QuietEvents):
    """A screen that keeps what it is told."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def status(self, message: str) -> None:
        self.said.append(message)

    def outlined(self, outline: Outline) -> None:
        self.said.append("outlined")

    def drawing(self, recorder):  # never reached here
        raise AssertionError("drawn before the stale points were refused")


def test_stale_points_are_refused_before_anything_is_shown_or_started(
    tmp_path: Path, lab: Lab
) -> None:
    """Stored runs of a point the file no longer has: one error naming them and --replace,
    before the outline, the live view or any check of the plan (nothing started)."""
    with open_store(str(tmp_path / "r.sqlite")) as store:
        fill(store, "group", variants=("base",), scripts=("tpcb-like",), clients=(4,),
             repeats=1, seconds=3)  # fmt: skip
        camp = campaigns.parse(DOC, default_name="group")
        (stale,) = Stored.read(store, camp).stale  # the stored point is not in the file
        assert stale.runs == 1
        told = Told()
        executor = Executor(lab, store, told)
        with pytest.raises(CampaignError) as err:
            campaign_run.run_campaign(executor, camp, How(), told)
        assert "changed since some of its runs were stored" in err.value.message
        assert "--replace" in (err.value.hint or "")
        assert "outlined" not in told.said
        assert executor.cluster is None and not executor.workdirs
        assert len(store.list_runs("group")) == 1  # nothing deleted without --replace


def test_the_runs_a_caller_makes_as_it_goes_are_its_own_not_stale(tmp_path: Path) -> None:
    """tune's trials and confirmation are stored under variants the file's plan lacks: the
    session's ``How.made`` declares them, so they are not stale points (the others are)."""
    with open_store(str(tmp_path / "r.sqlite")) as store:
        fill(store, "group", variants=("trial 0", "confirm default", "base"),
             scripts=("tpcb-like",), clients=(4,), repeats=1, seconds=3)  # fmt: skip
        camp = campaigns.parse(DOC, default_name="group")
        assert len(Stored.read(store, camp).stale) == 3
        made = campaign_run.Made(("trial ", "confirm "), 60.0)
        (stale,) = Stored.read(store, camp, made).stale
        assert stale.label.startswith("base") and made.owns("trial 12")
        assert not made.owns("base") and not made.owns("trials")


def test_a_session_runs_only_the_variants_it_was_told_of(tmp_path: Path, lab: Lab) -> None:
    camp = campaigns.parse(DOC, default_name="group")
    plan = make_plan(camp)
    with open_store(str(tmp_path / "r.sqlite")) as store:
        opened = campaign_run.Session(Executor(lab, store), plan, {}, How())
        with pytest.raises(ValueError, match="not a variant the session said it makes"):
            opened.run(plan.runs[0], 1, 1)
        made = How(made=campaign_run.Made(("trial ",), 1.0))
        with pytest.raises(ValueError, match="'base'"):  # the file's own variant
            campaign_run.Session(Executor(lab, store), plan, {}, made).run(plan.runs[0], 1, 1)
