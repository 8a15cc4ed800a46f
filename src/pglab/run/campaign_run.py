"""Running a campaign: the one use case that ``pglab run``, ``pglab quick``, ``pglab run
--fleet`` (its check before the jobs are queued), a fleet's job, ``pglab bisect``'s steps and
``pglab tune`` (its trials and confirmation) go through.

In order (``session``, which ``run_campaign`` opens to run the file's plan): what a dead pglab
left is cleaned up; the store says what is done, which stored points the file no longer has
(refused before anything is drawn, unless ``replace``) and how long a run takes beyond its
phases (``Stored``); the plan made from that, with what ``repeats = "auto"`` is expected to
take (``Outline``), shown; the live state kept while the runs go (``live``: what ``pglab
run`` draws and ``pglab watch`` reads); the leftovers on the campaign's hosts; every check
before the first run (``planning/preflight``); the stale points deleted when asked, the
campaign recorded; the executor over the plan's runs (the rounds of ``repeats = "auto"``
judged as they end), or over the runs its caller makes as it goes (``How.made``: tune's, whose
stored points are its own, not stale); the tidy rows of what was stored.

What is said goes to the executor's events and to the caller's ``Screen``: the command line
prints and draws (``cli/``), a fleet job prints lines, a test keeps what it is told.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol

from pglab.analysis import points, tidy
from pglab.analysis.verdicts import Design
from pglab.campaign.parse import Campaign
from pglab.campaign.spec import RunSpec, masked_document
from pglab.lab import Lab
from pglab.planning import hints
from pglab.planning.changes import StalePoint
from pglab.planning.hints import PointHints
from pglab.planning.plan import Plan, make_plan
from pglab.planning.preflight import preflight
from pglab.postgres.sources import Binaries
from pglab.records import RunResult
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
    made: Made | None = None


@dataclass(frozen=True)
class Made:
    """Runs a caller makes as it goes instead of the file's plan (``pglab tune``: a trial's
    settings are known when Optuna asks, a confirmation's rounds when the last is judged):
    the variants they are stored under, by their names' beginnings (their stored points are
    the caller's, not stale points of the file), and the seconds they are expected to take
    (the live state's estimate)."""

    variants: tuple[str, ...]
    seconds: float

    def owns(self, variant: str) -> bool:
        return variant.startswith(self.variants)


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
    def read(cls, store: Store, campaign: Campaign, made: Made | None = None) -> Stored:
        """What the store holds (``made``: the stored points a caller makes as it goes, never
        stale)."""
        in_file = make_plan(campaign).points
        return cls(
            done=store.done_run_keys(campaign.name),
            stale=find_stale(store, campaign.name, in_file, made.owns if made else None),
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
    with session(executor, campaign, how, screen) as opened:
        return opened.run_plan()


class Session:
    """A campaign session, opened by ``session``: its plan checked, the executor on the
    campaign's hosts telling the live state. It runs the plan (``run_plan``), or the runs its
    caller makes as it goes (``run``: tune's trials and confirmation, of the variants its
    ``How.made`` declares)."""

    def __init__(
        self, executor: Executor, plan: Plan, binaries: Mapping[str, Binaries], how: How
    ) -> None:
        self.executor, self.plan, self.binaries, self.how = executor, plan, binaries, how

    def run_plan(self) -> Outcome:
        """The plan's runs still to do (a fleet job's group of them)."""
        return self.executor.run_plan(self.plan, self.binaries)

    def run(
        self,
        run: RunSpec,
        index: int,
        total: int,
        amend: Callable[[RunResult], RunResult] | None = None,
    ) -> tuple[int, RunResult]:
        """One run its caller made, told as the ``index``-th of ``total`` and stored whole
        (``amend``: what the caller adds to its result first); its id and result."""
        if self.how.made is None or not self.how.made.owns(run.variant):
            raise ValueError(f"{run.variant!r} is not a variant the session said it makes")
        hints = self.plan.hints.get(run.point_key) or PointHints()
        return self.executor.run_stored(run, self.binaries, hints, index, total, amend)


@contextlib.contextmanager
def session(
    executor: Executor,
    campaign: Campaign,
    how: How = How(),
    screen: Screen | None = None,
    checked: tuple[Plan, Mapping[str, Binaries]] | None = None,
) -> Iterator[Session]:
    """The steps before the first run, in their order (the module's docstring), then the
    session while its caller runs; at its end the executor's leases released and the tidy
    rows refreshed. ``screen`` None: nothing shown but the executor's events, no live state;
    ``checked``: the plan and binaries a caller had preflight check already (tune's, with
    the study's knobs), not checked again."""
    lab, store, say = executor.lab, executor.store, executor.events.status
    clean_up(lab, campaign, say)
    stored = Stored.read(store, campaign, how.made)
    if not how.replace:
        refuse_stale(campaign, stored)  # before anything is drawn
    first = outline(campaign, stored)
    seconds = how.made.seconds if how.made is not None else first.seconds
    with contextlib.ExitStack() as stack:
        events = executor.events
        if screen is not None:
            screen.outlined(first)
            events = stack.enter_context(live(lab, campaign.name, seconds, screen.drawing))
        plan, binaries, hosts = _checked(executor, campaign, stored, how, events, checked)
        with executor.for_session(plan, binaries, hosts, events):
            yield Session(executor, plan, binaries, how)
    if how.tidy:
        refresh(store, campaign.name)


def _checked(
    executor: Executor,
    campaign: Campaign,
    stored: Stored,
    how: How,
    events: Events,
    checked: tuple[Plan, Mapping[str, Binaries]] | None,
) -> tuple[Plan, Mapping[str, Binaries], Hosts]:
    """The campaign's hosts cleaned, its plan checked (and cut to a fleet job's group) with
    what its points' stored runs say (``hints``), the stale points deleted when asked, the
    campaign recorded; the plan, its binaries and the hosts to give the executor."""
    lab, store, say = executor.lab, executor.store, events.status
    hosts = Hosts(campaign.hosts)  # the executor's for the campaign: it closes them
    try:
        if any(v.server.host for v in campaign.variants) or any(h.sudo for h in campaign.hosts):
            for line in hosts.clean_leftovers(lab):
                say(line)
        if checked is None:
            checked = preflight(campaign, lab, stored.done, how.budget_s, executor.reinit)
    except BaseException:
        hosts.close()
        raise
    plan, binaries = checked
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
    return plan, binaries, hosts


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
