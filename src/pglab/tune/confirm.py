"""Confirmation against noise (the winner's curse): after the search, the best configurations,
the server's defaults and PGTune's rules are re-run, interleaved (rounds in a seeded shuffle,
so drift spreads over all of them), ``confirm_repeats`` times each, stored as the variants
"confirm LABEL", and each compared with the defaults by the one comparison engine
(``analysis.engine``), as ``pglab show`` judges a campaign's points: the runs of one round
paired (within-round log ratios, the noise pooled over the candidates: the blocked analysis),
Holm over the family. The answer is the best configuration significantly better than the
defaults after confirmation, or none. Adaptive (``confirm_max`` above ``confirm_repeats``):
then a round at a time of the candidates still undecided, judged on the anytime-valid
confidence sequence of the within-round ratios (``pglab.stats.sequential``, Bonferroni), which
stopping on what the runs showed cannot break, in the same words ("+", "−", "=")."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING, TypedDict

from pglab.analysis import engine
from pglab.analysis.verdicts import Comparison
from pglab.campaign.spec import DEFAULT_EFFECT_PCT
from pglab.stats import sequential
from pglab.stats.differences import Rounds
from pglab.tune.spec import CONFIRM, LOWER_BETTER, TuneSpec, objective_value
from pglab.tune.trials import P99, with_p99

if TYPE_CHECKING:  # the store's type only: its module is not imported to run this
    from pglab.store.base import Store

if TYPE_CHECKING:
    from pglab.campaign.spec import RunSpec
    from pglab.run import campaign_run
    from pglab.tune.trials import Search, Setup, TrialRecord, TuneEvents

PREFIX = CONFIRM  # a candidate's runs: the variant "confirm LABEL"
# a candidate's confirmation runs: by round (their repeat number), or a list (its i-th value
# the i-th round's)
Values = Mapping[str, Sequence[float] | Rounds]
NONE_BETTER = "no configuration is significantly better than the defaults"


class CandidateJson(TypedDict):
    """A candidate as the study keeps it (Optuna's user attribute ``candidates``, JSON)."""

    label: str
    settings: dict[str, str]
    trial: int | None
    search_value: float | None


@dataclass(frozen=True)
class Candidate:
    label: str  # "default", "pgtune", "trial 12"
    settings: tuple[tuple[str, str], ...]
    trial: int | None = None
    search_value: float | None = None  # the trial's own measurement in the search

    def to_json(self) -> CandidateJson:
        return CandidateJson(
            label=self.label,
            settings=dict(self.settings),
            trial=self.trial,
            search_value=self.search_value,
        )

    @classmethod
    def from_json(cls, d: CandidateJson) -> Candidate:
        return cls(
            d["label"], tuple(sorted(d["settings"].items())), d.get("trial"), d.get("search_value")
        )


@dataclass(frozen=True)
class Row:
    label: str
    values: tuple[float, ...]  # the confirmation runs' figures
    comparison: Comparison | None  # against the defaults (None: the defaults themselves)
    within_limit: bool = True  # median p99 under the limit, when there is one

    @property
    def median(self) -> float | None:
        return median(self.values) if self.values else None


@dataclass(frozen=True)
class Decision:
    rows: tuple[Row, ...]
    winner: str | None
    text: str


def count(spec: TuneSpec) -> int:
    """The confirmation's runs (at most, when it is adaptive)."""
    return spec.confirm_runs[1]


def count_text(spec: TuneSpec) -> str:
    """How many confirmation runs: "25", or "25–75" when adaptive."""
    least, most = spec.confirm_runs
    return f"{least}–{most}" if spec.adaptive else str(least)


def candidates(
    records: Sequence[TrialRecord], spec: TuneSpec, pgtune: Mapping[str, str]
) -> list[Candidate]:
    """The defaults, PGTune's rules and the ``confirm_top`` best feasible trials (distinct
    configurations, best first)."""
    ok = [r for r in records if r.outcome == "ok" and r.feasible and r.value is not None]
    ok.sort(key=lambda r: r.value or 0.0, reverse=spec.direction == "maximize")
    out = [Candidate("default", ())]
    if spec.pgtune:
        out.append(Candidate("pgtune", tuple(sorted(pgtune.items()))))
    seen: set[tuple[tuple[str, str], ...]] = set()
    for r in ok:
        key = tuple(sorted(r.settings.items()))
        if key in seen:
            continue
        seen.add(key)
        out.append(Candidate(f"trial {r.number}", key, r.number, r.value))
        if len(seen) == spec.confirm_top:
            break
    return out


def schedule(cands: Sequence[Candidate], repeats: int, seed: int) -> list[tuple[Candidate, int]]:
    """Interleaved: round r runs every candidate once, in a shuffled order (seeded)."""
    rng = random.Random(seed)
    order: list[tuple[Candidate, int]] = []
    for r in range(1, repeats + 1):
        rnd = list(cands)
        rng.shuffle(rnd)
        order += [(c, r) for c in rnd]
    return order


def by_round(values: Sequence[float] | Rounds) -> Rounds:
    """A candidate's runs by round: as stored, or a list's i-th value round i."""
    return values if isinstance(values, Mapping) else dict(enumerate(values, 1))


def undecided(values: Values, spec: TuneSpec, effect_pct: float = DEFAULT_EFFECT_PCT) -> set[str]:
    """Adaptive confirmation (``confirm_max`` above ``confirm_repeats``): the labels that need
    another round — each candidate whose anytime-valid comparison with the defaults (paired by
    round) is not decided yet, and the defaults while any is (``sequential.undecided``, the
    defaults every candidate's reference)."""
    points = [
        sequential.Point(label, None if label == "default" else "default") for label in values
    ]
    rounds = sequential.SequentialSpec(min=spec.confirm_repeats, max=spec.confirm_rounds)
    return sequential.undecided(
        points, {k: by_round(v) for k, v in values.items()}, rounds, effect_pct
    )


PAIRING = engine.Pairing(
    engine.ROUNDS, "the confirmation runs are interleaved rounds: they pair by round"
)
ADAPTIVE = engine.Pairing(engine.SEQUENTIAL, "the adaptive confirmation's rounds pair by round")


def decide(
    objective: str,
    values: Values,
    p99s: Mapping[str, Sequence[float]] | None = None,
    limit_ms: float | None = None,
    effect_pct: float = DEFAULT_EFFECT_PCT,
    adaptive: bool = False,
) -> Decision:
    """Each candidate against "default", asked of the comparison engine as one question (paired
    by round, Holm over the family; with ``adaptive``, the anytime-valid confidence sequence
    that its rounds stopped on, Bonferroni over the family); the winner is the best of those
    significantly better (higher TPS, or lower p99 for the p99 objective) and, with a p99
    limit, whose median p99 is within it."""
    rounds = {k: by_round(v) for k, v in values.items()}
    base = rounds.get("default", {})
    others = [label for label in rounds if label != "default"]
    question = engine.Question(
        [engine.Pair(base, rounds[o]) for o in others],
        ADAPTIVE if adaptive else PAIRING,
        effect_pct,
    )
    comps = engine.ask(question) if others else []
    better = "-" if objective in LOWER_BETTER else "+"
    rows = [Row("default", tuple(base.values()), None, _within(p99s, "default", limit_ms))]
    for label, c in zip(others, comps, strict=True):
        rows.append(Row(label, tuple(rounds[label].values()), c, _within(p99s, label, limit_ms)))
    good = [
        r for r in rows[1:] if r.comparison and r.comparison.verdict == better and r.within_limit
    ]
    if not good:
        return Decision(tuple(rows), None, NONE_BETTER)
    pick = min if objective in LOWER_BETTER else max
    win = pick(good, key=lambda r: r.comparison.delta_pct if r.comparison else 0.0)
    assert win.comparison is not None
    won: Comparison = win.comparison
    ci = f" (95% CI {won.ci_low:+.1f}% to {won.ci_high:+.1f}%)" if won.ci_low is not None else ""
    what = {"p99": "p99 latency", "nopm": "NOPM", "geomean": "geometric mean", "tpse": "tpsE"}.get(
        objective, "TPS"
    )
    p = f", Holm p = {won.p_holm:.2g}" if won.p_holm is not None else ""
    text = (
        f"{win.label} is significantly better than the defaults: {what} "
        f"{won.delta_pct:+.1f}%{ci}{p}"
    )
    return Decision(tuple(rows), win.label, text)


def _within(p99s: Mapping[str, Sequence[float]] | None, label: str, limit: float | None) -> bool:
    if limit is None or p99s is None:
        return True
    got = p99s.get(label) or ()
    return bool(got) and median(got) <= limit


def stored_values(
    store: Store,
    name: str,
    labels: Sequence[str],
    objective: str,
) -> tuple[dict[str, dict[int, float]], dict[str, list[float]]]:
    """Each candidate's confirmation runs stored so far: its figures (TPS, or p99 for the p99
    objective) by round, and its p99s."""
    values: dict[str, dict[int, float]] = {label: {} for label in labels}
    p99s: dict[str, list[float]] = {label: [] for label in labels}
    for run in store.list_runs(name):
        label = run.variant.removeprefix(PREFIX)
        if not run.variant.startswith(PREFIX) or label not in values or not run.ok:
            continue
        p99 = run.metrics.get(P99)
        figure = objective_value(objective, run.tps, run.metrics)
        if figure is not None:
            values[label][run.repeat] = float(figure)
        if p99 is not None:
            p99s[label].append(float(p99))
    return values, p99s


def run(
    search: Search,
    session: campaign_run.Session,
    events: TuneEvents,
    effect_pct: float = DEFAULT_EFFECT_PCT,
) -> None:
    """The confirmation runs still to do, each run in ``session`` (stored ones are kept:
    running the file again resumes them); the candidates chosen once and kept in the study.
    ``confirm_repeats`` rounds of every candidate; when adaptive, then a round at a time of
    those still undecided (``undecided``) up to ``confirm_max``."""
    setup, study = search.setup, search.study
    spec = setup.spec
    if spec.confirm_repeats == 0:
        return
    stored = study.user_attrs.get("candidates")
    if stored:
        cands = [Candidate.from_json(d) for d in stored]
    else:
        cands = candidates(search.records(), spec, setup.pgtune)
        study.set_user_attr("candidates", [c.to_json() for c in cands])
    name = setup.campaign.name
    done = search.store.done_run_keys(name)
    left = sum(
        1
        for c in cands
        for r in range(1, spec.confirm_rounds + 1)
        if _run_of(setup, c, r).run_key not in done
    )
    each, most = f"{spec.confirm_repeats} runs", ""
    if spec.adaptive:
        each = f"{spec.confirm_repeats}–{spec.confirm_rounds} runs (more rounds while undecided)"
        most = "at most "
    if left:
        events.status(
            f"confirmation: {len(cands)} configurations × {each}, interleaved; {most}{left} to do"
        )
    i = 0
    for r, round_cands in _rounds(search, cands, effect_pct):
        for cand in round_cands:
            run = _run_of(setup, cand, r)
            if run.run_key in done:
                continue
            i += 1
            session.run(run, i, left, amend=with_p99)


def _rounds(
    search: Search,
    cands: Sequence[Candidate],
    effect_pct: float,
) -> Iterator[tuple[int, list[Candidate]]]:
    """(round, its candidates in a seeded shuffle): every candidate in the first
    ``confirm_repeats``; when adaptive, then those the stored runs leave undecided, judged
    afresh before each round, until none is or ``confirm_max`` rounds."""
    spec = search.setup.spec
    fixed = schedule(cands, spec.confirm_repeats, spec.seed)
    for r in range(1, spec.confirm_repeats + 1):
        yield r, [c for c, rr in fixed if rr == r]
    labels = [c.label for c in cands]
    for r in range(spec.confirm_repeats + 1, spec.confirm_rounds + 1):
        values, _ = stored_values(search.store, search.setup.campaign.name, labels, spec.objective)
        want = undecided(values, spec, effect_pct)
        if not want:
            search.events.status(f"confirmation decided after {r - 1} rounds")
            return
        rnd = [c for c in cands if c.label in want]
        random.Random(spec.seed * 1000 + r).shuffle(rnd)
        yield r, rnd


def _run_of(setup: Setup, cand: Candidate, repeat: int) -> RunSpec:
    return dataclasses.replace(
        setup.base,
        variant=PREFIX + cand.label,
        repeat=repeat,
        server=setup.base.server.with_settings(dict(cand.settings)),
    )
