"""Running a campaign: the one use case that ``pglab run``, ``pglab quick``, ``pglab run
--fleet`` (its check before the jobs are queued), a fleet's job and ``pglab tune`` go through.

In order (``run_campaign``): what a dead pglab left is cleaned up; the store says what is done,
which stored points the file no longer has (refused before anything is drawn, unless
``replace``) and how long a run takes beyond its phases (``Stored``); the plan made from that,
with what ``repeats = "auto"`` is expected to take (``Outline``), shown; the live state kept
while the runs go (``live``: what ``pglab run`` draws and ``pglab watch`` reads); the leftovers
on the campaign's hosts; every check before the first run (``planning/preflight``); the stale
points deleted when asked, the campaign recorded; the executor over the plan's runs (the
rounds of ``repeats = "auto"`` judged as they end); the tidy rows of what was stored.

What is said goes to the executor's events and to the caller's ``Screen``: the command line
prints and draws (``cli/``), a fleet job prints lines, a test keeps what it is told. The steps
``pglab tune`` shares around its own loop of trials (leftovers, the campaign recorded, the live
state, the tidy rows) are the functions below.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol

from pglab.analysis import points, tidy
from pglab.analysis.verdicts import Design
from pglab.campaign.parse import Campaign
from pglab.campaign.spec import masked_document
from pglab.lab import Lab
from pglab.planning import hints
from pglab.planning.changes import StalePoint
from pglab.planning.plan import Plan, make_plan
from pglab.planning.preflight import preflight
from pglab.postgres.sources import Binaries
from pglab.rows import RunRow
from pglab.run.executor import Events, Executor, Outcome
from pglab.run.live import LiveRecorder
from pglab.run.remote import Hosts
from pglab.run.resume import clean_leftovers, find_stale, stale_error
from pglab.store.base import Store
from pglab.stored_spec import RunSpecJson

Say = Callable[[str], None]
# what draws the live state while the runs go: a context giving the events the state passes on
Drawing = Callable[[LiveRecorder], AbstractContextManager[Events]]


@dataclass(frozen=True)
class How:
    """How to run it: ``replace`` (``--replace``: delete stored points the file no longer has),
    ``budget_s`` (``--budget``, instead of ``max_duration``), ``points`` and ``rounds`` (a fleet
    job's group: only the runs of these point keys, of these repeats), ``tidy`` (refresh the
    tidy rows at the end; a fleet's jobs, many at once on one campaign, leave them to export)."""

    replace: bool = False
    budget_s: float | None = None
    points: Collection[str] | None = None
    rounds: Collection[int] | None = None
    tidy: bool = True


@dataclass(frozen=True)
class Stored:
    """What the store holds of a campaign, read before it is planned: the runs done, the stored
    points the file no longer has, every stored run and each stored point's spec (the noise
    measured before, on points like the plan's: ``analysis.noise``), and the seconds a run took
    beyond its phases (``analysis.points.run_overhead``; None: no run yet)."""

    done: frozenset[str] | set[str] = frozenset()
    stale: list[StalePoint] = field(default_factory=list)
    runs: list[RunRow] = field(default_factory=list)
    overhead: tuple[float, str] | None = None
    specs: dict[tuple[str, str], RunSpecJson] = field(default_factory=dict)  # by point

    @classmethod
    def read(cls, store: Store, campaign: Campaign) -> Stored:
        return cls(
            done=store.done_run_keys(campaign.name),
            stale=find_stale(store, campaign.name, make_plan(campaign).points),
            runs=store.list_runs(),
            overhead=points.run_overhead(store, campaign.name),
            specs=store.point_specs(),
        )


@dataclass(frozen=True)
class Outline:
    """What a campaign will do, said before anything runs: its plan (the run overhead measured
    on stored runs, and a note saying so), what the store holds of it, and what ``repeats =
    "auto"`` is expected to take (None: a fixed number of repeats)."""

    plan: Plan
    stored: Stored
    auto: points.SequentialPlan | None

    @property
    def seconds(self) -> float:
        """The plan's estimate; with repeats auto, its share of the runs expected (the time
        budget is still checked against the most)."""
        whole = self.plan.estimated_seconds()
        if self.auto is None or not self.auto.most:
            return whole
        return whole * min(1.0, self.auto.expected / self.auto.most)

    def design(self) -> Design | None:
        """Whether the repeats can resolve the campaign's comparisons."""
        return points.design_check(self.plan, self.stored.runs, self.stored.specs)


def outline(campaign: Campaign, stored: Stored, plan: Plan | None = None) -> Outline:
    """The outline of ``campaign`` against what is stored (``plan``: one already checked)."""
    plan = with_overhead(plan or make_plan(campaign, stored.done), stored.overhead)
    return Outline(plan, stored, points.sequential_plan(plan, stored.runs, stored.specs))


def with_overhead(plan: Plan, found: tuple[float, str] | None) -> Plan:
    """The plan with the run overhead measured on stored runs, and a note saying so."""
    if found is None:
        return plan
    seconds, where = found
    note = f"estimates count {seconds:.1f} s per run beyond its phases ({where})"
    return dataclasses.replace(plan, run_overhead_s=seconds, notes=(*plan.notes, note))


def checked(
    lab: Lab,
    campaign: Campaign,
    stored: Stored,
    budget_s: float | None = None,
    reinit: bool = False,
) -> tuple[Outline, dict[str, Binaries]]:
    """The outline of a plan checked as a run checks it (``pglab run --dry-run``, a fleet's
    submission): every problem raised in one error; the binaries by ``binaries_key``."""
    plan, binaries = preflight(campaign, lab, stored.done, budget_s, reinit)
    return outline(campaign, stored, plan), binaries


def refuse_stale(campaign: Campaign, stored: Stored) -> None:
    """Stored points the file no longer has stop the campaign (resuming would mix old and new
    results), with what changed and what to do."""
    if stored.stale:
        raise stale_error(campaign.name, stored.stale)


def clean_up(lab: Lab, campaign: Campaign, say: Say) -> None:
    """What a dead pglab left (servers, storage targets, kernel and server settings), undone
    first: whatever this run then refuses to do."""
    for line in clean_leftovers(lab, [v.server for v in campaign.variants]):
        say(line)


def record(store: Store, campaign: Campaign) -> None:
    """The campaign in the store (its document, passwords masked), before its first run."""
    store.ensure_campaign(campaign.name, masked_document(campaign.document), campaign.source_file)


def refresh(store: Store, campaign: str) -> None:
    """The tidy rows of the campaign's new runs: what the store's ``pglab_runs`` view shows."""
    tidy.refresh(store, campaign)


@contextlib.contextmanager
def live(lab: Lab, campaign: str, seconds: float, drawing: Drawing) -> Iterator[Events]:
    """The live state of the campaign while the runs go: the events to give the executor,
    which keep the state, write it to the lab for ``pglab watch`` (removed at the end) and pass
    it on to the events ``drawing`` gives (the caller's)."""
    recorder = LiveRecorder(lab.home, campaign, seconds)
    with drawing(recorder) as drawn, recorder:
        recorder.inner = drawn
        yield recorder


class Screen(Protocol):
    """What a caller shows of a campaign run beside the executor's events: the outline before
    anything runs, and the live state's drawing while the runs go."""

    def outlined(self, outline: Outline) -> None: ...
    def drawing(self, recorder: LiveRecorder) -> AbstractContextManager[Events]: ...


def run_campaign(
    executor: Executor, campaign: Campaign, how: How = How(), screen: Screen | None = None
) -> Outcome:
    """Run what is not stored yet of ``campaign``, every step in its order (the module's
    docstring); ``screen`` None: nothing shown but the executor's events, no live state."""
    lab, store, say = executor.lab, executor.store, executor.events.status
    clean_up(lab, campaign, say)
    stored = Stored.read(store, campaign)
    if not how.replace:
        refuse_stale(campaign, stored)  # before anything is drawn
    first = outline(campaign, stored)
    if screen is None:
        outcome = _execute(executor, campaign, stored, how, executor.events)
    else:
        screen.outlined(first)
        with live(lab, campaign.name, first.seconds, screen.drawing) as events:
            outcome = _execute(executor, campaign, stored, how, events)
    if how.tidy:
        refresh(store, campaign.name)
    return outcome


def _execute(
    executor: Executor, campaign: Campaign, stored: Stored, how: How, events: Events
) -> Outcome:
    """The campaign's hosts cleaned, its plan checked (and cut to a fleet job's group) with
    what its points' stored runs say (``hints``), the stale points deleted when asked, the
    campaign recorded, then the executor on the campaign's hosts, telling ``events``."""
    lab, store, say = executor.lab, executor.store, events.status
    hosts = Hosts(campaign.hosts)  # the executor's for the campaign: it closes them
    try:
        if any(v.server.host for v in campaign.variants) or any(h.sudo for h in campaign.hosts):
            for line in hosts.clean_leftovers(lab):
                say(line)
        plan, binaries = preflight(campaign, lab, stored.done, how.budget_s, executor.reinit)
    except BaseException:
        hosts.close()
        raise
    plan = of_group(plan, how)
    plan = dataclasses.replace(plan, hints=hints.read(store, campaign.name, plan.runs))
    for note in plan.notes:
        say(note)
    if stored.stale:  # --replace (without it, refused before)
        n = store.delete_points(campaign.name, [s.point_key for s in stored.stale])
        say(f"--replace: deleted {n} stored run(s) of {len(stored.stale)} changed point(s)")
    record(store, campaign)
    if plan.done:
        say(f"resuming: {plan.done} run(s) already stored, {len(plan.runs)} to do")
    return executor.execute(plan, binaries, hosts, events)


def of_group(plan: Plan, how: How) -> Plan:
    """The plan cut to a fleet job's group (``how.points``, and ``how.rounds``): its runs still
    to do, and the group's others as done."""
    if how.points is None:
        return plan
    wanted, rounds = set(how.points), set(how.rounds or ())
    runs = tuple(
        r for r in plan.runs if r.point_key in wanted and (not rounds or r.repeat in rounds)
    )
    whole = len(wanted) * (len(rounds) if rounds else plan.campaign.repeats)  # done or not
    return dataclasses.replace(plan, runs=runs, done=max(0, whole - len(runs)))
