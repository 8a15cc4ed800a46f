"""The search: each trial Optuna asks for is a normal pglab run of the tune file's point (the
same dataset reset, warm-up phases, telemetry and fingerprint as any run), stored like any run
under the variant "trial N", its outcome told back to Optuna. The defaults and PGTune's rules
(clamped to the knobs' ranges) and the file's ``enqueue`` configurations are the first trials.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

import optuna
import psutil
from optuna.trial import TrialState

from pglab.campaign.identity import phase_identity
from pglab.campaign.parse import Campaign
from pglab.campaign.phase_work import operation_of
from pglab.campaign.spec import RunSpec
from pglab.campaign.writes import phase_writes
from pglab.errors import CampaignError
from pglab.lab import Lab
from pglab.pgbench import latency as latency_hist
from pglab.planning.plan import Plan
from pglab.planning.preflight import preflight
from pglab.postgres import dataset as datasets
from pglab.postgres import settings as pg_settings
from pglab.postgres.settings import SettingDef
from pglab.postgres.sources import Binaries
from pglab.records import RunResult, reason_of
from pglab.run import campaign_run
from pglab.tune import constraints, pgtune, space
from pglab.tune import study as studies
from pglab.tune.space import Knob
from pglab.tune.spec import CONFIRM, TRIAL, TuneSpec, objective_value

if TYPE_CHECKING:  # the store's type only: its module is not imported to run this
    from pglab.store.base import Store

MAX_INFEASIBLE_IN_A_ROW = 200  # samples over the constraint before the search gives up
P99 = "latency_p99_ms"  # the metric tune adds to its runs


# how a trial ended (``running``/``waiting``: not yet); what the study keeps (``studies.OUTCOME``)
TrialOutcome = Literal["ok", "failed", "infeasible", "interrupted", "running", "waiting"]


@dataclass(frozen=True)
class TrialRecord:
    """One trial as a person reads it."""

    number: int
    source: str  # default, pgtune, enqueued, sampler, retry
    outcome: TrialOutcome
    settings: dict[str, str]
    value: float | None = None  # the objective: TPS, p99 ms or NOPM
    tps: float | None = None
    p99_ms: float | None = None
    feasible: bool = True  # within the p99 limit, when there is one
    run_id: int | None = None
    error: str | None = None
    seconds: float = 0.0


class TuneEvents(Protocol):
    def status(self, message: str) -> None: ...
    def trial_finished(
        self,
        record: TrialRecord,
        best: TrialRecord | None,
        done: int,
        budget: int,
        eta_s: float | None,
        objective: str,
    ) -> None: ...


@dataclass
class Setup:
    """What the search needs, all checked before anything runs."""

    campaign: Campaign
    spec: TuneSpec
    base: RunSpec  # the point, with the settings pglab adds (max_connections)
    binaries: Binaries
    catalog: Mapping[str, SettingDef]
    knobs: list[Knob]
    ram: int
    clients: int
    pgtune: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # the plan and binaries preflight checked (the session runs on them, not checked again)
    checked: tuple[Plan, dict[str, Binaries]] | None = None


def prepare(camp: Campaign, spec: TuneSpec, lab: Lab) -> Setup:
    """Check the point (as ``pglab run`` would) and the knobs against its version's catalog;
    raise one CampaignError listing every problem, before any run."""
    server = camp.variants[0].server
    if server.over_network:
        raise CampaignError(
            "pglab tune needs a server it makes on this machine: many knobs take a restart",
            hint="leave out [server] dsn and host",
        )
    plan, binaries = preflight(camp, lab)
    base = plan.points[0]
    b = binaries[base.server.source_label]
    catalog = datasets.load_catalog(lab, b)
    ram = psutil.virtual_memory().total
    fixed = dict(base.server.settings)
    knob_specs = spec.knobs or tuple(space.default_knobs(catalog, ram, spec.unsafe))
    knobs, problems = space.resolve(knob_specs, catalog, spec.unsafe, fixed)
    clients = max((ph.clients for ph in base.phases if ph.measured), default=1)
    if not problems:
        why = constraints.excludes_everything(
            knobs, fixed, catalog, clients, ram, spec.memory_share
        )
        if why:
            problems.append(why)
    names = {k.name for k in knobs}
    for i, asked in enumerate(spec.enqueue, 1):
        where = f"[tune] enqueue #{i}: "
        for n, _ in asked:
            defn = pg_settings.lookup(n, catalog)
            if defn is not None and defn.name not in names:  # unknown ones: validate says
                problems.append(f"{where}{n} is not one of the knobs")
        problems += pg_settings.validate(dict(asked), catalog, where=where)
    if any(operation_of(ph) for ph in base.phases if ph.measured):
        problems.append(
            "[[phases]]: pglab tune measures pgbench phases (TPS, p99): give the "
            "maintenance operations measured = false"
        )
    if problems:
        raise CampaignError(
            f"the [tune] table has {len(problems)} problem(s):\n  " + "\n  ".join(problems),
            hint="nothing was started; knobs are checked against PostgreSQL "
            f"{b.version}'s own pg_settings",
        )
    max_conn = base.settings.get("max_connections") or space.current_value(
        catalog["max_connections"]
    )
    rules = pgtune.rules(ram, os.cpu_count() or 1, int(max_conn or 100), spec.disk, catalog)
    rules = {k: v for k, v in rules.items() if k not in fixed}
    setup = Setup(camp, spec, base, b, catalog, knobs, ram, clients, rules)
    setup.checked = (plan, binaries)
    setup.warnings += _checkpoint_warning(base, knobs, catalog)
    return setup


def _checkpoint_warning(
    base: RunSpec, knobs: list[Knob], catalog: Mapping[str, SettingDef]
) -> list[str]:
    """A write workload measured over fewer than two checkpoint cycles favours settings that
    put the checkpoint off until after the measurement."""
    # judged from what the phases run (a custom script by its statements); unknown: writes
    writes = any(phase_writes(phase_identity(ph)) is not False for ph in base.phases if ph.measured)
    seconds = sum(ph.duration or 0 for ph in base.phases if ph.measured) or 0
    knob = next((k for k in knobs if k.name == "checkpoint_timeout"), None)
    if knob is not None:
        longest = knob.high
    else:
        text = base.settings.get("checkpoint_timeout") or space.current_value(
            catalog["checkpoint_timeout"]
        )
        longest = pg_settings.number(catalog["checkpoint_timeout"], text or "300") or 300.0
    if writes and seconds < 2 * longest:
        upto = space.text_of(catalog["checkpoint_timeout"], longest)
        return [
            f"warning: a trial measures {seconds:g} s of a write workload, fewer than two "
            f"checkpoint cycles (checkpoint_timeout up to {upto}): "
            "configurations that put checkpoints off past the measurement look better than "
            "they are; lengthen the measured phases or narrow checkpoint_timeout"
        ]
    return []


@contextmanager
def locked(lab: Lab, name: str) -> Iterator[None]:
    """One pglab at a time per study in this lab (a trial left RUNNING is then a dead one's)."""
    path = lab.home / "tune" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise CampaignError(
                f"another pglab is tuning {name!r} in this lab",
                hint="wait for it, or `pglab watch` it",
            ) from exc
        yield


def p99_of(result: RunResult) -> float | None:
    """The p99 latency (ms) over every transaction of the run's measured phases."""
    hists = [s.histogram for ph in result.phases if ph.measured for s in ph.latency]
    merged = latency_hist.merge(hists)
    return latency_hist.percentile(merged, 99) if merged else None


def with_p99(result: RunResult) -> RunResult:
    """An ok run with its p99 latency among its metrics (``latency_p99_ms``), what tune
    stores of its trials and confirmation runs."""
    p99 = p99_of(result) if result.status == "ok" else None
    if p99 is None:
        return result
    return dataclasses.replace(result, metrics=result.metrics.with_value(P99, p99))


def record_of(t: optuna.trial.FrozenTrial, knobs: list[Knob]) -> TrialRecord:
    a = t.user_attrs
    outcome: TrialOutcome = a.get(studies.OUTCOME) or (
        "running" if t.state == TrialState.RUNNING else "waiting"
    )
    return TrialRecord(
        number=t.number,
        source=a.get(studies.SOURCE, "sampler"),
        outcome=outcome,
        settings=a.get("settings") or space.settings_of(knobs, t.params),
        value=t.value if t.state == TrialState.COMPLETE else None,
        tps=a.get("tps"),
        p99_ms=a.get("p99_ms"),
        feasible=studies.violation(t) <= 0,
        run_id=a.get("run_id"),
        error=a.get("error"),
        seconds=(t.duration.total_seconds() if t.duration else 0.0),
    )


def best_of(records: list[TrialRecord], direction: str) -> TrialRecord | None:
    ok = [r for r in records if r.outcome == "ok" and r.feasible and r.value is not None]
    if not ok:
        return None
    pick = min if direction == "minimize" else max
    return pick(ok, key=lambda r: r.value or 0.0)


class Search:
    """Runs the trials still to do within the budget, resuming a stored study."""

    def __init__(
        self, lab: Lab, store: Store, store_url: str, setup: Setup, events: TuneEvents
    ) -> None:
        self.lab, self.store, self.setup, self.events = lab, store, setup, events
        self.study, self.new = studies.open_study(store_url, setup.campaign.name, setup.spec)

    @property
    def knobs(self) -> list[Knob]:
        return self.setup.knobs

    def records(self) -> list[TrialRecord]:
        return [
            record_of(t, self.knobs)
            for t in self.study.get_trials(deepcopy=False)
            if t.state != TrialState.WAITING
        ]

    def start(self) -> None:
        camp = self.setup.campaign
        point = self.setup.base.point_key  # the workload, dataset and fixed settings
        before = self.study.user_attrs.get("point")
        if before is not None and before != point:
            raise CampaignError(
                f"the point of {camp.name!r} (its workload, dataset or [server.settings]) changed "
                "since its study began: its trials would not be comparable",
                hint="give the file another name = ... for a new study, or put the point back",
            )
        knobs = {k.name: k.describe() for k in self.knobs}
        if before is not None and self.study.user_attrs.get("knobs") != knobs:
            self.events.status(
                "warning: the knobs changed since the study began; the trials "
                "before keep the ranges they were drawn from"
            )
        dead = studies.recover(self.study)
        if dead:
            numbers = ", ".join(map(str, dead))
            self.events.status(
                f"resuming: trial(s) {numbers} of a pglab that stopped were "
                "marked failed (interrupted) and queued again"
            )
        if self.new:
            self._enqueue_first()
        self.study.set_user_attr("point", point)
        self.study.set_user_attr("knobs", knobs)
        self.study.set_user_attr("pgtune", self.setup.pgtune)

    def _enqueue_first(self) -> None:
        """The defaults, PGTune's rules and the file's configurations, as the first trials
        (the knobs they do not set at the server's own values)."""
        defaults = space.defaults_of(self.knobs)
        first: list[tuple[str, dict[str, str]]] = [("default", defaults)]
        if self.setup.spec.pgtune:
            first.append(("pgtune", {**defaults, **self.setup.pgtune}))
        first += [("enqueued", {**defaults, **dict(asked)}) for asked in self.setup.spec.enqueue]
        for source, values in first:
            params = space.params_of(self.knobs, values)
            studies.enqueue(self.study, params, source, settings=values)

    def how(self, seconds: float) -> campaign_run.How:
        """How the tuning's session runs: the trials and the confirmation made as it goes
        (stored as the variants "trial N" and "confirm LABEL", the study's own points),
        ``seconds`` expected."""
        return campaign_run.How(made=campaign_run.Made((TRIAL, CONFIRM), seconds))

    def run(self, session: campaign_run.Session) -> list[TrialRecord]:
        """Trials until the budget is used, each run in ``session``; every trial's record."""
        spec = self.setup.spec
        infeasible = 0
        while (done := studies.counted(self.study)) < spec.trials:
            with studies.quiet():
                trial = self.study.ask({k.name: k.distribution() for k in self.knobs})
            try:
                rec = self._trial(session, trial, done)
            except KeyboardInterrupt:
                studies.recover(self.study)
                raise
            if rec.outcome == "infeasible":
                infeasible += 1
                if infeasible >= MAX_INFEASIBLE_IN_A_ROW:
                    raise CampaignError(
                        f"{infeasible} configurations in a row were over the memory "
                        "constraint: the sampler finds almost nothing within it",
                        hint="narrow the memory knobs' ranges or raise memory_share",
                    )
                continue
            infeasible = 0
            records = self.records()
            self.events.trial_finished(
                rec,
                best_of(records, spec.direction),
                done + 1,
                spec.trials,
                self._eta(records, done + 1),
                spec.objective,
            )
        return self.records()

    def _eta(self, records: list[TrialRecord], done: int) -> float | None:
        ran = [r.seconds for r in records if r.outcome in studies.COUNTED]
        if not ran:
            return None
        each = sum(ran) / len(ran)
        s = self.setup.spec
        return each * (s.trials - done + s.confirm_runs[1])  # the confirmation at most

    def _frozen(self, trial: optuna.Trial) -> TrialRecord:
        return record_of(self.study._storage.get_trial(trial._trial_id), self.knobs)

    def _trial(self, session: campaign_run.Session, trial: optuna.Trial, done: int) -> TrialRecord:
        setup = self.setup
        source = trial.user_attrs.get(studies.SOURCE, "sampler")
        values = space.settings_of(self.knobs, trial.params)
        trial.set_user_attr(studies.SOURCE, source)
        trial.set_user_attr("settings", values)
        mem = constraints.memory(
            {**dict(setup.base.server.settings), **values}, setup.catalog, setup.clients
        )
        over = constraints.excess(mem, setup.ram, setup.spec.memory_share)
        if over > 0:
            trial.set_user_attr(studies.OUTCOME, "infeasible")
            trial.set_user_attr("error", f"over the memory constraint: {mem.text()}")
            trial.set_constraint(studies.CONSTRAINT, over)
            with studies.quiet():
                self.study.tell(trial, state=TrialState.PRUNED)
            if source != "sampler":
                self.events.status(
                    f"warning: the {source} configuration is over the memory "
                    f"constraint ({mem.text()}); not run"
                )
            return self._frozen(trial)
        run = dataclasses.replace(
            setup.base,
            variant=f"{TRIAL}{trial.number}",
            repeat=1,
            server=setup.base.server.with_settings(values),
        )
        run_id, result = session.run(run, done + 1, setup.spec.trials, amend=with_p99)
        p99 = result.metrics.get(P99)
        trial.set_user_attr("run_id", run_id)
        if result.status != "ok":
            trial.set_user_attr(studies.OUTCOME, "failed")
            trial.set_user_attr("error", reason_of(result.error))
            trial.set_constraint(studies.CONSTRAINT, 1.0)
            with studies.quiet():
                self.study.tell(trial, state=TrialState.PRUNED)
        else:
            tps = result.metrics.get("tps") or 0.0
            limit = setup.spec.p99_limit_ms
            trial.set_user_attr("tps", tps)
            if p99 is not None:
                trial.set_user_attr("p99_ms", p99)
            over_limit = (p99 - limit) / limit if limit is not None and p99 is not None else -1.0
            trial.set_constraint(studies.CONSTRAINT, over_limit)
            trial.set_user_attr(studies.OUTCOME, "ok")
            objective = setup.spec.objective
            figures = result.metrics.of_run()
            value = p99 if objective == "p99" else objective_value(objective, tps, figures)
            if value is None:
                raise CampaignError(
                    "the run logged no transaction latencies for the p99 objective"
                    if setup.spec.objective == "p99"
                    else f"the run gave no {setup.spec.objective}: its phases ran no "
                    "kit that has it"
                )
            with studies.quiet():
                self.study.tell(trial, value)
        return self._frozen(trial)
