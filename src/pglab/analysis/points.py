"""Points of a campaign from its stored runs: each point's summary of its own figure over its
repeats (``figure_of``: TPS, NOPM, MB/s, QphH) and its comparison with its reference point: the
baseline variant's at the same matrix coordinates, or, when the variants are not the question
(one variant, or variants of different workloads), the point at the compared axes' first values
(``axis_baseline_of``: settings, os, storage, an operation's options); a point whose workload
is not its reference's is not compared (``PointRow.incomparable``). Every comparison is asked
of ``engine``. Pure functions over `Store.list_runs` rows; the CLI, `compare`, the report and
serve all read points from here.

A point's matrix coordinates are ``dict[str, AxisValue]`` (axis name -> its value as the
campaign file wrote it), in axis order: ``PointRow.axes``, and the compared axes' first values
of a campaign of one variant (``axis_baseline_of``)."""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pglab import metric_units, workloads
from pglab.analysis import engine, spreads, verdicts
from pglab.analysis.noise import noise_before
from pglab.campaign import questions
from pglab.campaign.questions import is_question, pairs
from pglab.campaign.spec import DEFAULT_EFFECT_PCT
from pglab.rows import CampaignRow, RunRow, spec_of
from pglab.stats.sequential import SequentialSpec, expected_runs
from pglab.stats.summary import summarize_point
from pglab.stored_spec import AxisValue, RunSpecJson
from pglab.workloads import headlines_by_metric, named_items

if TYPE_CHECKING:  # the store's type only: its module is not imported to run this
    from pglab.planning.plan import Plan
    from pglab.store.base import Store


def baseline_of(campaign: CampaignRow | None) -> str | None:
    """The baseline variant of a campaign with several variants (``[analysis] reference``'s
    variant, else the first), else None."""
    variants = list(spec_of(campaign).get("variants") or {})
    if len(variants) < 2:
        return None
    return _reference(campaign)[0] or variants[0]


def _reference(campaign: CampaignRow | None) -> tuple[str | None, dict[str, str]]:
    """A stored campaign's ``[analysis] reference``: its variant and its axes' values."""
    doc = spec_of(campaign)
    raw = (doc.get("analysis") or {}).get("reference") or {}
    if not raw:
        return None, {}
    axes = _axis_values(doc.get("matrix") or {})
    variant, found, _ = questions.resolve(raw, list(doc.get("variants") or {}), axes)
    return variant, found


def effect_of(campaign: CampaignRow | None) -> float:
    """The campaign's effect of interest in % (``[analysis] effect``), else the default: what a
    "~" verdict must have been able to find."""
    analysis_table = spec_of(campaign).get("analysis") or {}
    return float(analysis_table.get("effect", DEFAULT_EFFECT_PCT))


def equivalence_of(campaign: CampaignRow | None) -> float | None:
    """``[analysis] equivalence``: the margin in % of an "=" verdict (None: the effect's)."""
    analysis_table = spec_of(campaign).get("analysis") or {}
    val = analysis_table.get("equivalence")
    return None if val is None else float(val)


def blocked_of(campaign: CampaignRow | None) -> bool:
    """Whether a stored campaign's repeats are rounds (interleaved order, a fixed number of
    repeats): its comparisons then get the blocked analysis (``engine.pairing``)."""
    return engine.pairing(campaign).how == engine.ROUNDS


def sequential_of(campaign: CampaignRow | None) -> SequentialSpec | None:
    """``repeats = "auto"``'s settings for a stored campaign (None: a fixed number of repeats)."""
    doc = spec_of(campaign)
    if doc.get("repeats") != "auto":
        return None
    table = doc.get("sequential") or {}
    return SequentialSpec(**{k: table[k] for k in ("min", "max", "precision") if k in table})


def _axis_values(matrix: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Each axis of a stored ``[matrix]``: its name as the points' axes have it
    (``settings.NAME``, ``os.KEY``, ``os.sysctl.NAME``) and its values as written."""
    out: dict[str, list[Any]] = {}
    for key, values in matrix.items():
        if key in ("settings", "os") and isinstance(values, dict):
            table = {k: v for k, v in values.items() if k != "sysctl"}
            table.update({f"sysctl.{k}": v for k, v in (values.get("sysctl") or {}).items()})
            out.update(
                {f"{key}.{name}": vals for name, vals in table.items() if isinstance(vals, list)}
            )
        elif isinstance(values, list):
            out[key] = values
    return out


def _first_values(matrix: Mapping[str, Any]) -> dict[str, AxisValue]:
    """Each axis of a stored ``[matrix]`` with several values and its first value as their
    labels write it (a setting's true as "on")."""
    return {
        axis: vals[0] if not axis.startswith("settings.") else questions.setting_text(vals[0])
        for axis, vals in _axis_values(matrix).items()
        if len(vals) > 1
    }


def axis_baseline_of(
    campaign: CampaignRow | None, runs: Sequence[RunRow] | None = None
) -> dict[str, AxisValue]:
    """The first value of each compared axis (``is_question``) of a campaign whose variants
    are not its question ({} otherwise): one variant, or (given its ``runs``) variants of
    different workloads (a TPC-C-like variant beside a pgbench one: each variant's points are
    compared along the axis, not with another workload's)."""
    if baseline_of(campaign) is not None and not (runs and _workloads_differ(runs)):
        return {}
    found = _first_values(spec_of(campaign).get("matrix") or {})
    said = _reference(campaign)[1]  # [analysis] reference's values instead of the first
    found.update({k: v for k, v in said.items() if k in found})
    return {k: v for k, v in found.items() if is_question(k)}


def reference_variant(campaign: CampaignRow | None, runs: Sequence[RunRow]) -> str | None:
    """The baseline variant the points are compared with (``baseline_of``), unless the
    variants differ in workload and a matrix axis is the question (``axis_baseline_of``)."""
    return None if axis_baseline_of(campaign, runs) else baseline_of(campaign)


def _workloads_differ(runs: Sequence[RunRow]) -> bool:
    by_variant: dict[str, list[RunRow]] = {}
    for r in runs:
        by_variant.setdefault(r.variant, []).append(r)
    return len({figure_of(mine) for mine in by_variant.values()}) > 1


def reference_of(campaign: CampaignRow | None, runs: Sequence[RunRow] | None = None) -> str | None:
    """What a campaign's points are compared with, in words: the baseline variant's name, the
    compared axes at their first values ("parallel=0 jobs=1"), or None."""
    axes = axis_baseline_of(campaign, runs)
    said = " ".join(f"{axis_name(k)}={v}" for k, v in axes.items())
    return said or baseline_of(campaign)


def campaign_rows(runs: Sequence[RunRow], campaign: CampaignRow | None) -> list[PointRow]:
    """``point_rows`` with the stored campaign's reference points, analysis and repeats."""
    rows, tps_of, rounds_of = _summaries(runs)
    judge = _judge_of(campaign, runs)
    return _compare_to_baseline(
        rows,
        tps_of,
        rounds_of,
        reference_variant(campaign, runs),
        judge,
        axis_baseline_of(campaign, runs),
    )


MIN_CI_REPEATS = 3  # fewer: the table shows min–max only

# run metrics that are not derived ones (shown as their own columns): the figures held in a
# metric of their own (mb_s; power, throughput: QphH-like and QthH-like; statements per active
# second) are each point's figure
_BASE = ("tps", "tps_steady", "failed", "latency_avg_ms")
_BASE_METRICS = (*_BASE, *dict(workloads.figures_not_tps()))


# how an axis is named in a point's short label: settings by their own name, the workload's
# pgbench letters
AXIS_SHORT = {
    "clients": "c",
    "threads": "j",
    "scale": "s",
    "duration": "T",
    "rate": "R",
    "transactions": "t",
    "wal_storage": "wal",
}


def axis_name(axis: str) -> str:
    name = axis.removeprefix("settings.")
    return AXIS_SHORT.get(name, name)


# a workload's headline figure -> the run metric that holds it (an operation's MB/s, TPC-C's
# New-Orders per minute, TPC-E's Trade-Results per second, a TPC-H-like power or throughput
# run's QphH or QthH, a replay's statements per active second): the figures the workloads
# declare in a metric of their own (the others, transactions per second, are the run's ``tps``)
KIT_HEADLINES = headlines_by_metric()


def figure_of(runs: Sequence[RunRow]) -> str:
    """What the runs' headline figure is, the one their points are judged on in every view:
    the figure a workload declares in a metric of its own when every ok run has it ("MB/s" of
    maintenance operations, ``mb_s``; "NOPM" of ``kit = "tpcc"``, ``nopm``; "tpsE"; "QphH" of
    TPC-H-like power runs, ``power``: 3600 × SF / the geometric mean; "QthH"; a replay's
    "statements/active s"), else "tps", their ``tps``."""
    ok = [r for r in runs if r.ok]
    for figure, metric in KIT_HEADLINES.items():
        if ok and all(metric in r.metrics for r in ok):
            return figure
    kinds = {figure_of_run(r.metrics) for r in ok}
    if kinds and kinds <= {"QphH", "QthH"}:  # power, or throughput's streams
        return "QthH" if kinds == {"QthH"} else "QphH"
    return "MB/s" if kinds == {"MB/s"} else "tps"


def figure_value(run: RunRow, figure: str) -> float | None:
    """A run's value of ``figure`` (``figure_of``): the metric that holds it (NOPM, MB/s,
    QphH...), or its ``tps``; None for a failed run or one without it."""
    if not run.ok:
        return None
    if figure in KIT_HEADLINES:
        return run.metrics.get(KIT_HEADLINES[figure])
    return None if run.tps is None else float(run.tps)


def headline_value(run: RunRow) -> float | None:
    """A run's own headline figure (``figure_of`` of it alone): what a view shows of it."""
    return figure_value(run, figure_of([run]))


def figure_of_run(metrics: Mapping[str, float]) -> str:
    """``figure_of`` for one run, from its metrics (the figures the kinds declare:
    ``workloads.figure_of``)."""
    return workloads.figure_of(metrics)


QUERY_METRIC = re.compile(r"^q\d\d_s$")  # a TPC-H-like query's seconds: their own table
# paced TPC-C-like terminals' response times and bound: their own table (analysis/pacing.py)
PACED_METRIC = re.compile(r"^(?:rt90_[a-z_]+_ms|rt_over_limit|nopm_bound)$")
# the items runs name themselves (a replay's statement classes): their own table
NAMED_METRICS = tuple(n.pattern for n in named_items())


def derived_names(runs: Sequence[RunRow]) -> list[str]:
    names = {
        k
        for r in runs
        for k in r.metrics
        if k not in _BASE_METRICS
        and metric_units.MetricKey.parse(k).phase is None
        and not QUERY_METRIC.match(k)
        and not PACED_METRIC.match(k)
        and not any(p.match(k) for p in NAMED_METRICS)
    }
    return sorted(names)


@dataclass(frozen=True, slots=True)
class PointRow:
    """One point of a campaign over its stored repeats (``pglab show``'s table, the report's
    summary): TPS spread, the CI of its mean, derived metrics, and its comparison with the
    baseline variant's point at the same matrix coordinates (None without one)."""

    point: str  # its label
    variant: str
    coords: str  # its matrix coordinates as text ("clients=8 script=x"): how points pair up
    axes: dict[str, AxisValue]
    runs: int
    failed: int
    tps_median: float | None
    tps_min: float | None
    tps_max: float | None
    cv_pct: float | None
    ci: tuple[float, float] | None  # 95% CI of the mean; None below MIN_CI_REPEATS
    unstable: bool
    derived: dict[str, float] = field(default_factory=dict)  # medians of derived metrics
    comparison: verdicts.Comparison | None = None
    is_base: bool = False  # the baseline variant's point, or the compared axes' first values
    figure: str = ""  # what its own runs' figure is (``figure_of``: "tps", "NOPM", "QphH"…)
    # why it has no Δ% against its reference point though it has one: their workloads differ
    # (their figures: "NOPM against tps"), a Δ% between them would mean nothing
    incomparable: str = ""

    @property
    def ok_runs(self) -> int:
        return self.runs - self.failed


def point_rows(
    runs: Sequence[RunRow],
    baseline: str | None = None,
    effect_pct: float = DEFAULT_EFFECT_PCT,
    sequential: SequentialSpec | None = None,
    axis_base: dict[str, AxisValue] | None = None,
    blocked: bool = False,
    equivalence_pct: float | None = None,
) -> list[PointRow]:
    """The points of ``runs`` (in the order their first run was stored), each compared with the
    ``baseline`` variant's point (or, without one, with the point where the axes of
    ``axis_base`` have those values), Holm-corrected over the campaign (``sequential``: a
    campaign of ``repeats = "auto"``, judged as its rounds were; ``blocked``: an interleaved
    campaign, its repeats rounds; else Welch's test: ``engine.ask``)."""
    rows, tps_of, rounds_of = _summaries(runs)
    how = (
        engine.Pairing(engine.SEQUENTIAL, 'repeats = "auto"', sequential.precision)
        if sequential is not None
        else engine.Pairing(engine.ROUNDS, "runs of one interleaved campaign pair by round")
        if blocked
        else engine.Pairing(engine.APART, "the runs are not rounds")
    )
    judge = _Judge(effect_pct, how, equivalence_pct, _spreads(runs))
    return _compare_to_baseline(rows, tps_of, rounds_of, baseline, judge, axis_base or {})


def families_rows(
    families: Sequence[Sequence[RunRow]], campaign: CampaignRow | None
) -> list[list[PointRow]]:
    """``campaign_rows`` of each family of runs (kit = "tpch": one per query, each run's
    ``tps`` that query's rate), their comparisons Holm-corrected together over every family,
    as one ``pglab compare`` of the queries is: a family is measured on its own (the blocked
    analysis pools the noise of one family's points, not of others'), judged with all."""
    summaries = [_summaries(runs) for runs in families]
    every = [r for runs in families for r in runs]
    return _judged_together(
        summaries,
        reference_variant(campaign, every),
        _judge_of(campaign, every),
        axis_baseline_of(campaign, every),
    )


_Summaries = tuple[list["PointRow"], dict[str, list[float]], dict[str, dict[int, float]]]


def _summaries(runs: Sequence[RunRow]) -> _Summaries:
    """Each point's row of ``runs`` (not yet compared), its TPS and its TPS by round."""
    by_label: dict[str, list[RunRow]] = {}
    for r in runs:
        by_label.setdefault(r.label, []).append(r)
    derived = derived_names(runs)
    tps_of: dict[str, list[float]] = {}
    rounds_of: dict[str, dict[int, float]] = {}
    rows = []
    for label, mine in by_label.items():
        figure = figure_of(mine)  # what the point is judged on: TPS, NOPM, MB/s, QphH
        ok = [r for r in mine if figure_value(r, figure) is not None]
        tps = tps_of[label] = [v for r in ok if (v := figure_value(r, figure)) is not None]
        rounds_of[label] = tps_by_round(ok, figure)
        medians = {
            name: statistics.median(values)
            for name in derived
            if (values := [r.metrics[name] for r in ok if r.metrics.get(name) is not None])
        }
        summary = summarize_point(tps) if tps else None
        first = mine[0]
        rows.append(
            PointRow(
                point=label,
                variant=first.variant,
                coords=" ".join(f"{k}={v}" for k, v in first.axes.items()),
                axes=first.axes,
                runs=len(mine),
                failed=sum(1 for r in mine if not r.ok),
                tps_median=summary.median if summary else None,
                tps_min=min(tps) if tps else None,
                tps_max=max(tps) if tps else None,
                cv_pct=summary.cv_pct if summary else None,
                # a t interval from 2 values is ±6.4 standard deviations: min–max says more
                ci=(summary.ci_low, summary.ci_high)
                if summary
                and summary.n >= MIN_CI_REPEATS
                and summary.ci_low is not None
                and summary.ci_high is not None
                else None,
                unstable=bool(summary and summary.unstable),
                derived=medians,
                figure=figure,
            )
        )
    return rows, tps_of, rounds_of


@dataclass(frozen=True)
class _Judge:
    """How a campaign's comparisons are judged (its ``[analysis]``, its repeats, its order)."""

    effect_pct: float
    pairing: engine.Pairing
    equivalence_pct: float | None
    # two points' labels -> the spread of identical builds their comparison is held to
    spread_of: Callable[[str, str], float | None] = lambda a, b: None


def _judge_of(campaign: CampaignRow | None, runs: Sequence[RunRow] = ()) -> _Judge:
    return _Judge(
        effect_of(campaign), engine.pairing(campaign), equivalence_of(campaign), _spreads(runs)
    )


def _spreads(runs: Sequence[RunRow]) -> Callable[[str, str], float | None]:
    """The spread of identical builds between two points of ``runs`` (``spreads``: None
    unless they ran on two builds and it was measured on their machine)."""
    by_label: dict[str, list[RunRow]] = {}
    for r in runs:
        by_label.setdefault(r.label, []).append(r)
    return lambda a, b: spreads.spread_between(by_label.get(a, []), by_label.get(b, []))


def _compare_to_baseline(
    rows: list[PointRow],
    tps_of: dict[str, list[float]],
    rounds_of: dict[str, dict[int, float]],
    baseline: str | None,
    judge: _Judge,
    axis_base: dict[str, AxisValue] | None = None,
) -> list[PointRow]:
    """Each point of another variant against the baseline variant's point at the same matrix
    coordinates (or, with ``axis_base``, each point against the one at the same coordinates
    but those axes' values): Δ% with a 95% CI and a verdict, Holm-corrected over the campaign."""
    return _judged_together([(rows, tps_of, rounds_of)], baseline, judge, axis_base or {})[0]


def _judged_together(
    summaries: Sequence[_Summaries],
    baseline: str | None,
    judge: _Judge,
    axis_base: dict[str, AxisValue],
) -> list[list[PointRow]]:
    """Each family's rows with their comparisons, asked of ``engine`` as one question (one Holm
    family; the noise pooled within each family)."""
    if baseline is None and not axis_base:
        return [rows for rows, _, _ in summaries]
    based: list[tuple[list[PointRow], list[tuple[str, str, str]]]] = []
    pairs: list[engine.Pair] = []
    for i, (rows, tps_of, rounds_of) in enumerate(summaries):
        rows, family = _family(rows, baseline, axis_base)
        kind = {pt.point: pt.figure for pt in rows}
        apart = {
            o: f"{kind[o]} against {kind[b]}: their workloads differ"
            for b, o, _ in family
            if tps_of[b] and tps_of[o] and kind[b] != kind[o]
        }
        rows = [replace(pt, incomparable=apart.get(pt.point, "")) for pt in rows]
        family = [(b, o, g) for b, o, g in family if tps_of[b] and tps_of[o] and o not in apart]
        based.append((rows, family))
        for b, o, g in family:
            if judge.pairing.how in (engine.ROUNDS, engine.SEQUENTIAL):
                sides = (rounds_of[b], rounds_of[o])
            else:  # every ok run counts, whatever its repeat number
                sides = (engine.apart(tps_of[b]), engine.apart(tps_of[o]))
            pairs.append(engine.Pair(*sides, g, i, spread_pct=judge.spread_of(b, o)))
    found = engine.ask(
        engine.Question(pairs, judge.pairing, judge.effect_pct, judge.equivalence_pct)
    )
    out: list[list[PointRow]] = []
    at = 0
    for rows, family in based:
        judged = {o: c for (_, o, _), c in zip(family, found[at:], strict=False)}
        at += len(family)
        out.append([replace(pt, comparison=judged.get(pt.point)) for pt in rows])
    return out


def _family(
    rows: list[PointRow], baseline: str | None, axis_base: dict[str, AxisValue]
) -> tuple[list[PointRow], list[tuple[str, str, str]]]:
    """``rows`` with their ``is_base`` set, and the campaign's comparisons (``questions.pairs``):
    (the baseline point's label, the other point's label, where the baseline is: the
    comparisons that share it)."""
    refs, found = pairs([(pt.point, pt.variant, pt.axes) for pt in rows], baseline, axis_base)
    return [replace(pt, is_base=pt.point in refs) for pt in rows], found


def tps_by_round(runs: Sequence[RunRow], figure: str = "tps") -> dict[int, float]:
    """The ok runs' ``figure`` (``figure_of``: TPS, NOPM...) by round (their repeat number):
    one side of a blocked comparison."""
    return {r.repeat: v for r in runs if (v := figure_value(r, figure)) is not None}


def compared_labels(
    runs: Sequence[RunRow], campaign: CampaignRow | None
) -> list[tuple[str, str, str]]:
    """A campaign's comparisons with its reference points: (the reference point's label, the
    other point's label, where the reference is: the comparisons that share it), as
    ``campaign_rows`` asks them."""
    rows = [replace(pt, comparison=None) for pt in point_rows(runs)]
    return _family(rows, reference_variant(campaign, runs), axis_baseline_of(campaign, runs))[1]


# -- design: can the planned repeats reach a verdict? ----------------------------------------


def design_check(
    plan: Plan,
    stored_runs: Sequence[RunRow],
    stored_specs: Mapping[tuple[str, str], RunSpecJson],
) -> verdicts.Design | None:
    """Whether the plan's repeats can resolve its comparisons (every point of a variant against
    the first variant's at the same matrix coordinates; in a campaign of one variant, every
    point against the one at its compared axes' first values: ``is_question``) on the
    campaign's effect of interest; None when nothing is compared."""
    camp = plan.campaign
    asked = [len(vals) for name, vals in camp.matrix if is_question(name) and len(vals) > 1]
    if camp.sequential is not None or (len(camp.variants) < 2 and not asked):
        return None
    baseline = camp.variants[0].name
    comparisons = (
        sum(1 for pt in plan.points if pt.variant != baseline)
        if len(camp.variants) > 1
        else len(plan.points) - len(plan.points) // math.prod(asked)
    )
    noise, source = noise_before(
        stored_runs, stored_specs, camp.name, [pt.to_dict() for pt in plan.points]
    )
    return verdicts.design(
        camp.repeats,
        comparisons,
        noise,
        source,
        camp.effect_pct,
        blocked=camp.order == "interleaved",
    )


@dataclass(frozen=True)
class SequentialPlan:
    """What ``repeats = "auto"`` will take: the runs at least, at most, and expected if no point
    differs from its baseline at the noise measured before (or assumed)."""

    least: int
    most: int
    expected: float
    noise_pct: float
    noise_source: str

    def text(self) -> str:
        return (
            f"repeats auto: {self.least}–{self.most} run(s), about {self.expected:.0f} expected "
            f"if no point differs (noise {self.noise_pct:.1f}%, {self.noise_source})"
        )


def sequential_plan(
    plan: Plan,
    stored_runs: Sequence[RunRow],
    stored_specs: Mapping[tuple[str, str], RunSpecJson],
) -> SequentialPlan | None:
    """The runs a campaign of ``repeats = "auto"`` takes (None: a fixed number of repeats)."""
    camp = plan.campaign
    spec = camp.sequential
    if spec is None:
        return None
    noise, source = noise_before(
        stored_runs, stored_specs, camp.name, [pt.to_dict() for pt in plan.points]
    )
    from pglab.planning.rounds import points_of  # its store's module is not needed here

    # the comparisons its rounds judge (the variants', or along a compared axis): as groups of
    # a reference and the points compared with it; a point with nothing to compare runs min
    judged = points_of(camp, plan.points)
    refs = {p.against for p in judged if p.against is not None}
    alone = sum(1 for p in judged if p.against is None and p.key not in refs)
    groups = max(1, len(refs))
    variants = 1 + round((len(judged) - alone - len(refs)) / groups) if refs else 1
    expected = alone * spec.min + (
        expected_runs(spec, groups, variants, noise, camp.effect_pct) if refs else 0
    )
    n = len(plan.points)
    return SequentialPlan(n * spec.min, n * spec.max, expected, noise, source)


def run_overhead(store: Store, campaign: str, last: int = 50) -> tuple[float, str] | None:
    """The seconds a run took beyond its phases (its wall time less every phase's pgbench or
    operation time: the server stopped and started, the dataset reset, telemetry, the
    fingerprint), median of the ``last`` ok runs of ``campaign``, else of the store; None
    before any run is stored."""
    everything = [r for r in store.list_runs() if r.ok]
    for runs, where in (
        ([r for r in everything if r.campaign == campaign], "this campaign's"),
        (everything, "the store's"),
    ):
        runs = runs[-last:]
        if not runs:
            continue
        phases = store.runs_phases([r.id for r in runs])
        spent = [
            r.finished_at - r.started_at - sum(p.elapsed_s or 0 for p in phases[r.id])
            for r in runs
            if phases[r.id]
        ]
        if spent:
            return max(0.0, statistics.median(spent)), f"median of {len(spent)} of {where} runs"
    return None


# -- export: a row per point -----------------------------------------------------------------
