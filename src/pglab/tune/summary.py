"""What ``pglab show`` and the report say of a tune study: the optimization history (every trial,
its outcome, value and the best so far), each knob's importance (Optuna's PED-ANOVA), the
confirmation table and its answer, and the confirmed winner as a postgresql.conf snippet."""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, TypedDict

import optuna
from optuna.importance import PedAnovaImportanceEvaluator, get_param_importances
from optuna.trial import TrialState

from pglab.analysis.points import effect_of
from pglab.errors import LabError
from pglab.jsonish import JsonObject
from pglab.tune import study as studies
from pglab.tune.confirm import Candidate, Decision, decide, stored_values
from pglab.tune.spec import TuneSpec, is_tune, parse_tune
from pglab.tune.trials import TrialRecord, best_of, record_of

if TYPE_CHECKING:  # the store's type only: its module is not imported to run this
    from pglab.store.base import Store

MIN_OK = 4  # measured trials before knob importance means anything


@dataclass(frozen=True)
class TuneSummary:
    name: str
    spec: TuneSpec
    records: tuple[TrialRecord, ...]
    best_so_far: tuple[float | None, ...]  # per record
    knobs: dict[str, str]  # name -> its range or choices
    importance: dict[str, float] = field(default_factory=dict)
    importance_note: str = ""
    candidates: tuple[Candidate, ...] = ()
    decision: Decision | None = None
    pgtune: dict[str, str] = field(default_factory=dict)

    @property
    def best(self) -> TrialRecord | None:
        return best_of(list(self.records), self.spec.direction)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.records:
            out[r.outcome] = out.get(r.outcome, 0) + 1
        return out

    @property
    def winner(self) -> Candidate | None:
        if self.decision is None or self.decision.winner is None:
            return None
        return next((c for c in self.candidates if c.label == self.decision.winner), None)

    def snippet(self) -> str | None:
        """The confirmed winner as lines to add to postgresql.conf."""
        win = self.winner
        if win is None or self.decision is None:
            return None
        lines = [f"# pglab tune {self.name}: {self.decision.text}"]
        lines += [f"{k} = '{v}'" for k, v in win.settings]
        return "\n".join(lines) + "\n"


class ConfirmedJson(TypedDict):
    """A configuration confirmed against the defaults, in ``TuneJson.confirmation``."""

    label: str
    values: list[float]
    median: float | None
    within_limit: bool
    comparison: JsonObject | None  # analysis.verdicts.Comparison's fields
    settings: dict[str, str]


class TuneJson(TypedDict):
    """A study as ``pglab show NAME --json`` prints it (under ``tune``)."""

    objective: str
    direction: str
    p99_limit_ms: float | None
    sampler: str
    budget: int
    knobs: dict[str, str]
    trials: list[JsonObject]  # a TrialRecord's fields and best_so_far
    importance: dict[str, float]
    confirmation: list[ConfirmedJson] | None
    answer: str | None
    winner: str | None
    snippet: str | None


def to_json(s: TuneSummary) -> TuneJson:
    """The study as plain data (``pglab show NAME --json``)."""
    d = s.decision
    return {
        "objective": s.spec.objective,
        "direction": s.spec.direction,
        "p99_limit_ms": s.spec.p99_limit_ms,
        "sampler": s.spec.sampler,
        "budget": s.spec.trials,
        "knobs": s.knobs,
        "trials": [
            {**asdict(r), "best_so_far": b} for r, b in zip(s.records, s.best_so_far, strict=True)
        ],
        "importance": s.importance,
        "confirmation": None
        if d is None
        else [
            {
                "label": r.label,
                "values": list(r.values),
                "median": r.median,
                "within_limit": r.within_limit,
                "comparison": asdict(r.comparison) if r.comparison else None,
                "settings": dict(
                    next((c.settings for c in s.candidates if c.label == r.label), ())
                ),
            }
            for r in d.rows
        ],
        "answer": None if d is None else d.text,
        "winner": None if d is None else d.winner,
        "snippet": s.snippet(),
    }


def of(store: Store, store_url: str, name: str) -> TuneSummary:
    camp = store.get_campaign(name)
    if camp is None or not is_tune(camp):
        raise LabError(f"{name!r} is not a tune study", hint="`pglab show NAME` shows it")
    spec, _ = parse_tune(camp["spec"]["tune"])
    try:
        study = optuna.load_study(study_name=name, storage=studies.storage(store_url))
    except KeyError as exc:
        raise LabError(
            f"the store has runs of {name!r} but no tuning study of that name",
            hint="run `pglab tune FILE` again to make it",
        ) from exc
    trials = [t for t in study.get_trials(deepcopy=False) if t.state != TrialState.WAITING]
    records = tuple(record_of(t, []) for t in trials)
    best: list[float | None] = []
    current: TrialRecord | None = None
    for r in records:
        if r.outcome == "ok" and r.feasible and r.value is not None:
            current = best_of([x for x in (current, r) if x is not None], spec.direction)
        best.append(current.value if current else None)
    importance, note = _importance(study, records)
    cands = tuple(Candidate.from_json(d) for d in study.user_attrs.get("candidates", []))
    return TuneSummary(
        name,
        spec,
        records,
        tuple(best),
        dict(study.user_attrs.get("knobs", {})),
        importance,
        note,
        cands,
        _decision(store, name, spec, cands, effect_of(camp)),
        dict(study.user_attrs.get("pgtune", {})),
    )


def _importance(
    study: optuna.Study, records: tuple[TrialRecord, ...]
) -> tuple[dict[str, float], str]:
    ok = sum(1 for r in records if r.outcome == "ok")
    if ok < MIN_OK:
        return {}, f"{ok} measured trial(s): too few for knob importance ({MIN_OK} needed)"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = get_param_importances(study, evaluator=PedAnovaImportanceEvaluator())
    except (ValueError, RuntimeError, ZeroDivisionError) as exc:
        return {}, f"knob importance could not be computed: {exc}"
    return {k: float(v) for k, v in found.items()}, f"PED-ANOVA (Optuna), over {ok} measured trials"


def _decision(
    store: Store, name: str, spec: TuneSpec, cands: tuple[Candidate, ...], effect_pct: float
) -> Decision | None:
    if not cands:
        return None
    values, p99s = stored_values(store, name, [c.label for c in cands], spec.objective)
    if not values["default"]:
        return None
    values = {k: v for k, v in values.items() if v}
    return decide(spec.objective, values, p99s, spec.p99_limit_ms, effect_pct, spec.adaptive)
