"""``pglab compare A B``: two runs, two points or two campaigns side by side.

What A and B name (``resolve``):

- ``12``: run 12 (digits name a run when there is one);
- ``NAME``: the whole campaign NAME;
- ``NAME:POINT``: a point of campaign NAME, by its label as ``pglab show NAME`` prints it
  (``wal:lz4 clients=8``); the label's words may come in any order and may be fewer, as long as
  they pick out one point (``wal:lz4`` when lz4 has one point).

Runs are compared figure by figure (no significance from one run each); points by their repeats'
TPS (``verdicts``: Δ% with Welch's 95% CI on log TPS, p-value, verdict judged on A's campaign's
effect of interest); campaigns point by point, matched by label, by matrix coordinates (label
minus variant) or by variant, whichever matches most, with Holm's correction over all pairs.
Scripts of phases that mix several are compared the same way, by phase and script name
(``script_rows``, ``compare_scripts``: their own Holm family).
Every comparison carries the difference of the environment and settings the runs reported.
What they give back is typed in ``comparisons`` (TypedDicts: ``--json`` prints them as they are).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from pglab.analysis import engine, named_items, points, scripts, spreads, syncrate, verdicts
from pglab.analysis.comparisons import (
    CampaignsComparison,
    CompareResult,
    MetricRow,
    PointPair,
    PointsComparison,
    PointSide,
    RunsComparison,
    RunSide,
    ScriptComparison,
    ScriptSide,
    StorageSides,
    StorageUsed,
    WaitsRow,
)
from pglab.analysis.points import PointRow, axis_name
from pglab.analysis.queries import compare_queries
from pglab.analysis.settings_diff import settings_diff
from pglab.campaign.spec import DEFAULT_EFFECT_PCT
from pglab.errors import LabError
from pglab.metric_units import MetricKey
from pglab.records import StorageRow, reason_of
from pglab.rows import CampaignRow, PhaseRow, RunRow, StoredRun
from pglab.targets import results as storage_tables
from pglab.telemetry import waits
from pglab.telemetry.summary import tables_of
from pglab.workloads import figure_of

if TYPE_CHECKING:  # the store's type only: its module is not imported to run this
    from pglab.store.base import Store

SINGLE_RUN_NOTE = (
    "one run each: no significance can be claimed from single runs (the noise between repeats "
    "of the same point is often 5-10%); compare points, with repeats enough to resolve the effect "
    "you look for (`pglab run --dry-run` says how many)"
)
_RUN_METRICS = (
    "tps",
    "tps_steady",
    "latency_avg_ms",
    "failed",
    "nopm",
    "nopm_pgbench",
    "tpm",
    "rollback_pct",
    "delivery_skipped_pct",
    "inconsistent",
    "tpse",
    "tpse_pgbench",
    "results_idle_pct",
)  # from nopm on: a workload kit's (workloads/kits/metrics.py)
_OPERATION_FIGURES = ("mb_s", "elapsed_s", "wal_bytes", "tuples_s", "workers_launched")


@dataclass(frozen=True)
class Target:
    """What a command-line argument names: a run, a point or a campaign."""

    kind: Literal["run", "point", "campaign"]
    text: str  # as given
    campaign: str
    point: str | None = None  # the point's label
    run: StoredRun | None = None  # the run (kind "run")
    runs: list[RunRow] = field(default_factory=list)  # a point's or a campaign's runs


def resolve(store: Store, text: str) -> Target:
    """A run id, a campaign name or ``CAMPAIGN:POINT`` (see the module's doc)."""
    text = text.strip()
    if text.isdigit():
        run = store.get_run(int(text))
        if run is not None:
            return Target("run", text, run.campaign, run.label, run=run)
    camp = store.get_campaign(text) if text else None
    if camp is not None and camp["name"] == text:  # not a campaign found by its id
        return Target("campaign", text, camp["name"], runs=store.list_runs(camp["name"]))
    for i, ch in enumerate(text):  # campaign names may hold ':' themselves: try every split
        if ch != ":":
            continue
        name, wanted = text[:i], text[i + 1 :].strip()
        if name and store.get_campaign(name) is not None:
            runs = store.list_runs(name)
            label = _pick_point(name, wanted, list(dict.fromkeys(r.label for r in runs)))
            return Target("point", text, name, label, runs=[r for r in runs if r.label == label])
    raise LabError(
        f"{text!r} names no run, campaign or point in the store",
        hint="give a run id (`pglab ls`), a campaign name (`pglab ls --campaigns`) or "
        "CAMPAIGN:POINT with a point label as `pglab show CAMPAIGN` prints it",
    )


def _label_words(label: str) -> set[str]:
    """A stored label's words, each axis also as `pglab show` shortens it
    (``settings.work_mem=4MB`` also ``work_mem=4MB``, ``clients=8`` also ``c=8``)."""
    words = set(label.split())
    for word in list(words):
        axis, eq, value = word.partition("=")
        if eq:
            words.add(f"{axis_name(axis)}={value}")
    return words


def _pick_point(campaign: str, wanted: str, labels: list[str]) -> str:
    if wanted in labels:
        return wanted
    words = set(wanted.split())
    found = [lb for lb in labels if words and words <= _label_words(lb)]
    if len(found) == 1:
        return found[0]
    shown = ", ".join(repr(lb) for lb in (found or labels)[:8])
    more = " …" if len(found or labels) > 8 else ""
    raise LabError(
        f"{wanted!r} {'matches several' if found else 'matches no'} point(s) of campaign "
        f"{campaign!r}: {shown}{more}",
        hint=f"write the point's whole label after the colon, e.g. '{campaign}:{labels[0]}'"
        if labels
        else "the campaign has no runs yet",
    )


def compare_targets(store: Store, a: Target, b: Target) -> CompareResult:
    """The comparison of two resolved targets of the same kind (``comparisons``: the CLI
    prints it; ``--json`` dumps it with comparisons as objects)."""
    if a.kind != b.kind:
        raise LabError(
            f"cannot compare a {a.kind} ({a.text!r}) with a {b.kind} ({b.text!r})",
            hint="compare two runs, two points (CAMPAIGN:POINT) or two campaigns",
        )
    out: CompareResult
    if a.kind == "run":
        assert a.run is not None and b.run is not None  # resolve() gives a run its StoredRun
        full_a, full_b = [a.run], [b.run]
        out = compare_runs(a.run, b.run)
    else:
        full_a, full_b = _fingerprinted(store, a.runs), _fingerprinted(store, b.runs)
        camp_a = store.get_campaign(a.campaign)
        effect = points.effect_of(camp_a)  # A is the baseline
        how = engine.pairing(camp_a, store.get_campaign(b.campaign))
        if a.kind == "point":  # two points of one interleaved campaign pair by round
            runs = store.list_runs(a.campaign) if how.how != engine.APART else []
            # which build each side ran: two builds are held to their spread (spreads)
            runs = spreads.fingerprinted(store, runs)
            a = replace(a, runs=spreads.fingerprinted(store, a.runs))
            b = replace(b, runs=spreads.fingerprinted(store, b.runs))
            out = compare_points(a, b, effect, points.equivalence_of(camp_a), how, runs, camp_a)
            _judge_scripts(store, a, b, out["pairs"], effect, how)
            out["queries"] = compare_queries(store, a.runs, b.runs, effect, how, runs, camp_a)
            named = named_items.compare_items(store, a.runs, b.runs, effect, how, runs, camp_a)
            if named is not None:
                out["items"] = named
        else:
            out = compare_campaigns(a, b, effect)
            _judge_scripts(store, a, b, out["pairs"], effect, how)
        out["settings_diff"] = settings_diff(full_a, full_b)
    out["storage"] = storage_sides(full_a, full_b, store.list_storage_results())
    # "tps", "MB/s" of two operations, "QphH"..., "nopm" (as --json has always said) of two kits
    kit = headline([*a.runs, *b.runs])
    out["figure"] = (
        kit if a.kind != "run" and kit in _SAID_BY_METRIC else points.figure_of([*full_a, *full_b])
    )
    return out


def _judge_scripts(
    store: Store,
    a: Target,
    b: Target,
    pairs: list[PointPair],
    effect: float,
    how: engine.Pairing,
) -> None:
    phases = store.runs_phases([r.id for r in (*a.runs, *b.runs) if r.ok])
    compare_scripts(pairs, a.runs, b.runs, phases, effect, how)


def _fingerprinted(store: Store, runs: list[RunRow]) -> list[StoredRun]:
    """The ok runs with their fingerprints: all that the settings diff and the storage
    matching read (not the per-second series, most of a stored run)."""
    return [StoredRun.of(r, fingerprint=store.run_fingerprint(r.id) or {}) for r in runs if r.ok]


# -- runs ------------------------------------------------------------------------------------


def compare_runs(a: StoredRun, b: StoredRun) -> RunsComparison:
    for run in (a, b):
        if not run.ok:
            raise LabError(
                f"run {run.id} failed ({reason_of(run.error)}): it has no figures to compare",
                hint=f"`pglab show {run.id}` shows what went wrong",
            )
    ma, mb = a.metrics, b.metrics
    names = [m for m in _RUN_METRICS if m in ma or m in mb]
    per_phase: tuple[str, ...] = ("tps", "tps_steady", "latency_avg_ms")
    if figure_of(ma) == figure_of(mb) == "MB/s":  # maintenance operations: their own figures
        names, per_phase = ["mb_s"], _OPERATION_FIGURES
    names += sorted(
        {k for k in (*ma, *mb) if (key := MetricKey.parse(k)).phase and key.name in per_phase}
    )
    rows = [
        MetricRow(metric=m, a=ma.get(m), b=mb.get(m), delta_pct=_delta(ma.get(m), mb.get(m)))
        for m in names
    ]
    return {
        "kind": "runs",
        "a": _run_id(a),
        "b": _run_id(b),
        "metrics": rows,
        "waits": _waits_side_by_side(a, b),
        "scripts": script_rows({a.id: a.phases}, {b.id: b.phases}),
        "settings_diff": settings_diff([a], [b]),
        "note": SINGLE_RUN_NOTE,
    }


def _run_id(run: RunRow) -> RunSide:
    return {"run": run.id, "campaign": run.campaign, "point": run.label, "repeat": run.repeat}


def _delta(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or not a:
        return None
    return (b / a - 1) * 100


def top_waits(run: StoredRun, n: int = 5) -> dict[str, list[tuple[str, float]]]:
    """Per measured phase ("name" or "name #2"): its top waits as (type:event, % of waits)."""
    out = {}
    for ph in run.phases:
        if not ph.measured:
            continue
        stored = run.series.get(str(ph.idx), {})
        name = ph.name + (f" #{ph.iteration}" if ph.iteration > 1 else "")
        found = waits.top(tables_of(stored).get("waits"), n)
        if found:
            out[name] = [(w, pct) for w, pct, _ in found]
    return out


def _waits_side_by_side(a: StoredRun, b: StoredRun) -> list[WaitsRow]:
    wa, wb = top_waits(a), top_waits(b)
    return [
        {"phase": ph, "a": wa.get(ph, []), "b": wb.get(ph, [])} for ph in dict.fromkeys([*wa, *wb])
    ]


# -- points ----------------------------------------------------------------------------------


def headline(runs: Sequence[RunRow]) -> str:
    """The metric points are judged on (``points.figure_of``, as every view judges them):
    the one that holds the figure their kind declares when every ok run of both sides has it
    (``nopm`` of ``kit = "tpcc"``, ``mb_s`` of maintenance operations, ``power``...), else
    ``tps``."""
    return points.KIT_HEADLINES.get(points.figure_of(runs), "tps")


# headlines a comparison's ``figure`` names by their metric (the others by the figure's name)
_SAID_BY_METRIC = ("nopm", "tpse")


def _ok_tps(runs: Sequence[RunRow], figure: str = "tps") -> list[float]:
    if figure != "tps":  # a headline held in a metric of its own (nopm, mb_s, power...)
        return [float(r.metrics[figure]) for r in runs if r.ok and figure in r.metrics]
    return [float(r.tps) for r in runs if r.ok and r.tps is not None]


def _side(label: str, campaign: str, runs: Sequence[RunRow], figure: str) -> PointSide:
    tps = _ok_tps(runs, figure)
    return {
        "campaign": campaign,
        "point": label,
        "n": len(tps),
        "median": statistics.median(tps) if tps else None,
        "failed": sum(1 for r in runs if not r.ok),
    }


def compare_points(
    a: Target,
    b: Target,
    effect_pct: float = DEFAULT_EFFECT_PCT,
    equivalence_pct: float | None = None,
    how: engine.Pairing | None = None,
    campaign_runs: Sequence[RunRow] = (),
    campaign: CampaignRow | None = None,
) -> PointsComparison:
    """B against A, on the figure their runs are judged on (``headline``), as ``engine``
    answers it: when B against A is one of the comparisons of their campaign
    (``campaign_runs``, ``campaign``), the campaign's answer itself, as ``pglab show`` has it
    (its Holm family included); else, when their runs pair (``how``, by default apart), on
    their within-round log ratios, their noise pooled with the campaign's comparisons of the
    same figure, judged alone; else by Welch's test."""
    how = how or engine.Pairing(engine.APART, "the points' runs do not pair")
    figure = headline([*a.runs, *b.runs])
    ta, tb = _ok_tps(a.runs, figure), _ok_tps(b.runs, figure)
    for t, tps in ((a, ta), (b, tb)):
        if not tps:
            raise LabError(
                f"point {t.point!r} of campaign {t.campaign!r} has no successful run",
                hint=f"`pglab show {t.campaign}` lists its points and warnings",
            )
    c = _campaign_answer(a, b, figure, how, campaign_runs, campaign)
    if c is None:
        on = next((k for k, v in points.KIT_HEADLINES.items() if v == figure), "tps")
        ours = engine.Pair(
            points.tps_by_round(a.runs, on),
            points.tps_by_round(b.runs, on),
            spread_pct=spreads.spread_between(a.runs, b.runs),
        )
        rest: list[engine.Pair] = []
        if how.how == engine.ROUNDS and campaign_runs and headline(campaign_runs) == figure:
            by_label = _rounds_by_label(campaign_runs, on)
            rest = [
                engine.Pair(by_label[x], by_label[y], g, judged=False)
                for x, y, g in points.compared_labels(campaign_runs, campaign)
                if {x, y} != {a.point, b.point}
            ]
            ours = replace(ours, group=".")
        (c,) = engine.ask(engine.Question([ours, *rest], how, effect_pct, equivalence_pct))
    kinds = (points.figure_of(a.runs), points.figure_of(b.runs))
    if kinds[0] != kinds[1]:  # a TPC-C-like point beside a pgbench one: said, not hidden
        c = replace(
            c,
            warnings=(
                *c.warnings,
                f"not comparable: A's figure is {kinds[0]}, B's {kinds[1]}: their workloads differ",
            ),
        )
    return {
        "kind": "points",
        "pairs": [
            {
                "a": _side(a.point or "", a.campaign, a.runs, figure),
                "b": _side(b.point or "", b.campaign, b.runs, figure),
                "comparison": c,
            }
        ],
    }


def _rounds_by_label(runs: Sequence[RunRow], figure: str) -> dict[str, dict[int, float]]:
    by_label: dict[str, list[RunRow]] = {}
    for r in runs:
        by_label.setdefault(r.label, []).append(r)
    return {label: points.tps_by_round(mine, figure) for label, mine in by_label.items()}


def _campaign_answer(
    a: Target,
    b: Target,
    figure: str,
    how: engine.Pairing,
    runs: Sequence[RunRow],
    campaign: CampaignRow | None,
) -> verdicts.Comparison | None:
    """The campaign's own answer of B against A when it is one of its comparisons, judged on
    the same figure (None otherwise)."""
    if how.how == engine.APART or not runs or headline(runs) != figure:
        return None
    if (a.point, b.point) not in {(x, y) for x, y, _ in points.compared_labels(runs, campaign)}:
        return None
    rows = points.campaign_rows(runs, campaign)
    return next((r.comparison for r in rows if r.point == b.point), None)


# -- campaigns -------------------------------------------------------------------------------

_MATCHERS: tuple[tuple[str, Callable[[PointRow], str]], ...] = (
    ("label", lambda pt: pt.point),
    ("matrix coordinates", lambda pt: pt.coords),
    ("variant", lambda pt: pt.variant),
)


def match_points(
    rows_a: list[PointRow], rows_b: list[PointRow]
) -> tuple[str, list[tuple[PointRow, PointRow]]]:
    """Pairs of point rows (``points.point_rows``) of two campaigns, matched by whichever of
    label, matrix coordinates and variant pairs the most points one to one."""
    best: tuple[str, list[tuple[PointRow, PointRow]]] = ("nothing", [])
    for how, key in _MATCHERS:
        ka, kb = _unique(rows_a, key), _unique(rows_b, key)
        pairs = [(ka[k], kb[k]) for k in ka if k in kb and k]
        if len(pairs) > len(best[1]):
            best = (how, pairs)
    return best


def _unique(rows: list[PointRow], key: Callable[[PointRow], str]) -> dict[str, PointRow]:
    seen: dict[str, list[PointRow]] = {}
    for r in rows:
        seen.setdefault(key(r), []).append(r)
    return {k: v[0] for k, v in seen.items() if len(v) == 1}


def compare_campaigns(
    a: Target, b: Target, effect_pct: float = DEFAULT_EFFECT_PCT
) -> CampaignsComparison:
    runs_a, runs_b = a.runs, b.runs
    rows_a, rows_b = points.point_rows(runs_a), points.point_rows(runs_b)
    how, pairs = match_points(rows_a, rows_b)
    if not pairs:
        raise LabError(
            f"no point of campaign {a.campaign!r} matches one of {b.campaign!r} by label, matrix "
            "coordinates or variant",
            hint=f"compare single points: pglab compare '{a.campaign}:POINT' '{b.campaign}:POINT'",
        )
    out_pairs: list[PointPair] = []
    samples = []
    figure = headline([*runs_a, *runs_b])
    for pa, pb in pairs:
        ra = [r for r in runs_a if r.label == pa.point]
        rb = [r for r in runs_b if r.label == pb.point]
        samples.append((_ok_tps(ra, figure), _ok_tps(rb, figure)))
        out_pairs.append(
            {
                "a": _side(pa.point, a.campaign, ra, figure),
                "b": _side(pb.point, b.campaign, rb, figure),
                "comparison": None,
            }
        )
    tested = [i for i, (ta, tb) in enumerate(samples) if ta and tb]
    apart = engine.Pairing(
        engine.APART,
        f"points of campaigns {a.campaign} and {b.campaign} matched by {how}: compared apart",
    )
    question = [
        engine.Pair(engine.apart(samples[i][0]), engine.apart(samples[i][1])) for i in tested
    ]
    found = engine.ask(engine.Question(question, apart, effect_pct))
    for i, c in zip(tested, found, strict=True):
        out_pairs[i]["comparison"] = c
    unmatched_a = len(rows_a) - len(pairs)
    unmatched_b = len(rows_b) - len(pairs)
    return {
        "kind": "campaigns",
        "a": a.campaign,
        "b": b.campaign,
        "matched_by": how,
        "unmatched": {"a": unmatched_a, "b": unmatched_b},
        "corrected": sum(c.p_value is not None for c in found) > 1,  # Holm over the pairs
        "pairs": out_pairs,
    }


# -- scripts ---------------------------------------------------------------------------------


def script_rows(
    phases_a: Mapping[int, Sequence[PhaseRow]], phases_b: Mapping[int, Sequence[PhaseRow]]
) -> list[ScriptComparison]:
    """Each script that both sides ran in a measured phase of several scripts (matched by phase
    and script name, ``scripts.script_figures``), side by side: per side its runs' TPS and
    latency averages (``tps``, ``latency_avg_ms``: lists, a value per run that has one) and
    their medians; Δ% of the medians; ``comparison`` None (``compare_scripts`` judges them)."""
    sides = []
    for by_run in (phases_a, phases_b):
        found: dict[tuple[str, str], dict[str, list[float]]] = {}
        for phases in by_run.values():
            for key, (tps, lat) in scripts.script_figures(phases).items():
                side = found.setdefault(key, {"tps": [], "latency_avg_ms": []})
                if tps is not None and tps > 0:  # a log of it is taken
                    side["tps"].append(tps)
                if lat is not None:
                    side["latency_avg_ms"].append(lat)
        sides.append(found)
    fa, fb = sides
    rows = []
    for key in (k for k in fa if k in fb):
        sa, sb = _script_side(fa[key]), _script_side(fb[key])
        rows.append(
            ScriptComparison(
                phase=key[0],
                script=key[1],
                a=sa,
                b=sb,
                tps_delta_pct=_delta(sa["median_tps"], sb["median_tps"]),
                latency_delta_pct=_delta(sa["median_latency_ms"], sb["median_latency_ms"]),
                comparison=None,
            )
        )
    return rows


def _script_side(found: dict[str, list[float]]) -> ScriptSide:
    tps, latency = found["tps"], found["latency_avg_ms"]
    return {
        "tps": tps,
        "latency_avg_ms": latency,
        "n": len(tps),
        "median_tps": _median(tps),
        "median_latency_ms": _median(latency),
    }


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def compare_scripts(
    pairs: list[PointPair],
    runs_a: Sequence[RunRow],
    runs_b: Sequence[RunRow],
    phases: dict[int, tuple[PhaseRow, ...]],
    effect_pct: float = DEFAULT_EFFECT_PCT,
    how: engine.Pairing | None = None,
) -> None:
    """Add to each pair of points its ``scripts`` (``script_rows`` of its ok runs' phases) and
    judge each script whose TPS has 2 runs or more a side, as the points' TPS are (``engine``:
    paired by round when the runs pair, ``how``, else Welch's test; Δ% the ratio of geometric
    means), Holm-corrected over every script compared."""
    how = how or engine.Pairing(engine.APART, "the points' runs do not pair")
    judged: list[ScriptComparison] = []
    asked: list[engine.Pair] = []
    for pair in pairs:
        sides = [
            [
                r
                for r in runs
                if r.ok and r.label == side["point"] and r.campaign == side["campaign"]
            ]
            for side, runs in ((pair["a"], runs_a), (pair["b"], runs_b))
        ]
        rows = script_rows(*({r.id: phases.get(r.id, ()) for r in side} for side in sides))
        pair["scripts"] = rows
        for row in rows:
            if row["a"]["n"] >= 2 and row["b"]["n"] >= 2:
                judged.append(row)
                key = (row["phase"], row["script"])
                ra, rb = (_script_rounds(side, phases, key) for side in sides)
                asked.append(engine.Pair(ra, rb))
    found = engine.ask(engine.Question(asked, how, effect_pct))
    for row, c in zip(judged, found, strict=True):
        row["comparison"] = c
        row["tps_delta_pct"] = c.delta_pct


def _script_rounds(
    runs: Sequence[RunRow], phases: dict[int, tuple[PhaseRow, ...]], key: tuple[str, str]
) -> dict[int, float]:
    """A script's TPS by round (its run's repeat number) over ``runs``."""
    out = {}
    for r in runs:
        tps = scripts.script_figures(phases.get(r.id, ())).get(key, (None, None))[0]
        if tps is not None and tps > 0:
            out[r.repeat] = tps
    return out


# -- environment and settings ----------------------------------------------------------------


def storage_sides(
    runs_a: Sequence[StoredRun], runs_b: Sequence[StoredRun], measured: list[StorageRow]
) -> StorageSides | None:
    """The storage results (``pglab storage``) measured on the storage each side's runs used,
    by their headline figure; None when neither side has one."""
    sa, sb = (
        [
            StorageUsed(
                id=r["id"],
                tool=r["tool"],
                where=storage_tables.where(r),
                roles=sorted(r["roles"]),
                headline=storage_tables.headline(r),
            )
            for r in syncrate.storage_of_runs(runs, measured)
        ]
        for runs in (runs_a, runs_b)
    )
    return StorageSides(a=sa, b=sb) if sa or sb else None
