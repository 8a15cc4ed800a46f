"""What the stored runs of a kind that times numbered queries (``workloads.query_tables``: the
TPC-H-like kit's) say per query: each query's time per point over its
repeats, compared with the reference point as the headline is (``points.point_rows``: the CI,
the verdict), and where two compared points' plans for a query differ in shape, in words.

A query's figure is compared as its rate (1 / seconds, queries per second), so that, as for
TPS, + is faster and − slower; the table shows the median seconds beside it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pglab.analysis import engine, points, tidy, verdicts
from pglab.analysis.comparisons import QueryComparison
from pglab.analysis.tidy import TidyTable
from pglab.jsonish import JsonObject
from pglab.rows import CampaignRow, RunRow, StoredRun
from pglab.store import Store
from pglab.workloads import query_tables


def metric(number: int) -> str:
    """``q09_s``: a query's seconds among a run's metrics."""
    return f"q{number:02d}_s"


def query_numbers(runs: Sequence[RunRow]) -> list[int]:
    """The queries the runs timed, in number order."""
    found = {k for r in runs if r.ok for k in r.metrics if points.QUERY_METRIC.match(k)}
    return sorted(int(k[1:3]) for k in found)


def as_rates(runs: Sequence[RunRow], number: int) -> list[RunRow]:
    """The runs with the query's rate (1 / its seconds) as their ``tps`` and figure (their
    metrics left out: the power figure is not the query's); None without one."""
    key = metric(number)
    out = []
    for r in runs:
        secs = r.metrics.get(key)
        out.append(replace(r, tps=1.0 / secs if secs else None, metrics={}))
    return out


@dataclass(frozen=True, slots=True)
class QueryPoints:
    number: int
    rows: list[points.PointRow]  # as the headline's, of the query's rate
    seconds: dict[str, float]  # each point's median seconds, by label


def query_points(runs: Sequence[RunRow], campaign: CampaignRow | None) -> list[QueryPoints]:
    """Each query's points over their repeats, compared with the reference point: every
    query's comparisons Holm-corrected together (22 queries × the campaign's comparisons are
    one family, as ``compare_queries`` has them)."""
    numbers = query_numbers(runs)
    found = points.families_rows([as_rates(runs, n) for n in numbers], campaign)
    out = []
    for n, rows in zip(numbers, found, strict=True):
        seconds = {r.point: 1.0 / r.tps_median for r in rows if r.tps_median}
        out.append(QueryPoints(n, rows, seconds))
    return out


@dataclass(frozen=True, slots=True)
class PlanChange:
    number: int
    point: str  # the point whose plan differs
    reference: str  # the point it is compared with
    change: str  # "hash join → merge join"


def stored_plans(store: Store, run: RunRow) -> dict[int, JsonObject]:
    """A run's plan per query (its first phase that has them) as EXPLAIN (FORMAT JSON) gave it
    (``QueryTables.change`` parses it), {} if it stored none."""
    stored = store.get_run(run.id)
    if stored is None:
        return {}
    for tables in stored.series.values():
        for kind in query_tables():
            if table := tables.get(kind.plans):
                return {int(row[0]): row[1] for row in table["rows"]}
    return {}


def change(a: JsonObject, b: JsonObject) -> str | None:
    """How plan ``b`` of a query differs from ``a`` in words, as the kind that stores them
    says (``QueryTables.change``), None: alike."""
    for kind in query_tables():
        if (said := kind.change(a, b)) is not None:
            return said
    return None


def plan_changes(
    store: Store, runs: Sequence[RunRow], campaign: CampaignRow | None
) -> list[PlanChange]:
    """Where a point's plan for a query differs (its shape, or where its nodes outgrew
    work_mem: ``QueryTables.change``) from its reference point's (the baseline
    variant's at the same coordinates), from each point's first ok run."""
    rows = points.campaign_rows(runs, campaign)
    first: dict[str, RunRow] = {}
    for r in runs:
        if r.ok:
            first.setdefault(r.label, r)
    base = {row.coords: row.point for row in rows if row.is_base}
    out = []
    cache: dict[str, dict[int, JsonObject]] = {}
    for row in rows:
        ref = base.get(row.coords)
        if row.is_base or ref is None or row.point not in first or ref not in first:
            continue
        for label in (row.point, ref):
            if label not in cache:
                cache[label] = stored_plans(store, first[label])
        mine, theirs = cache[row.point], cache[ref]
        for n in sorted(set(mine) & set(theirs)):
            said = change(theirs[n], mine[n])
            if said is not None:
                out.append(PlanChange(n, row.point, ref, said))
    return out


def compare_queries(
    store: Store,
    a: Sequence[RunRow],
    b: Sequence[RunRow],
    effect_pct: float,
    how: engine.Pairing | None = None,
    campaign_runs: Sequence[RunRow] = (),
    campaign: CampaignRow | None = None,
) -> list[QueryComparison]:
    """Two points' queries side by side (``pglab compare``): each one's median seconds, B
    against A on the query's rate as ``engine`` answers it (when B against A is one of the
    campaign's comparisons, ``campaign_runs``: the campaign's answers, as ``pglab show`` has
    them; else paired by round when the runs pair, ``how``, or by Welch's test; Holm over the
    queries), and how B's plan differs from A's (their first ok runs)."""
    numbers = [n for n in query_numbers(a) if n in query_numbers(b)]
    if not numbers:
        return []
    label_a, label_b = a[0].label, b[0].label
    shown = _campaign_answers(campaign_runs, campaign, label_a, label_b, how)
    if shown is None:
        asked = [engine.Pair(_rates_by_round(a, n), _rates_by_round(b, n)) for n in numbers]
        how = how or engine.Pairing(engine.APART, "the points' runs do not pair")
        found = engine.ask(engine.Question(asked, how, effect_pct))
        comps = dict(zip(numbers, found, strict=True))
    else:
        comps = {n: c for n, c in shown.items() if n in numbers}
    first_a = next((r for r in a if r.ok), None)
    first_b = next((r for r in b if r.ok), None)
    plans_a = stored_plans(store, first_a) if first_a else {}
    plans_b = stored_plans(store, first_b) if first_b else {}
    out = []
    for n in numbers:
        plan = None
        if n in plans_a and n in plans_b:
            plan = change(plans_a[n], plans_b[n])
        if n not in comps:
            continue
        out.append(
            QueryComparison(
                query=n,
                a_s=1.0 / statistics.median(_rates_by_round(a, n).values()),
                b_s=1.0 / statistics.median(_rates_by_round(b, n).values()),
                comparison=comps[n],
                plan=plan,
            )
        )
    return out


def _rates_by_round(runs: Sequence[RunRow], number: int) -> dict[int, float]:
    """A query's rate (1 / its seconds) by round (its run's repeat number)."""
    key = metric(number)
    return {r.repeat: 1.0 / secs for r in runs if r.ok and (secs := r.metrics.get(key))}


def _campaign_answers(
    runs: Sequence[RunRow],
    campaign: CampaignRow | None,
    label_a: str,
    label_b: str,
    how: engine.Pairing | None,
) -> dict[int, verdicts.Comparison] | None:
    """Each query's answer of B against A as the campaign's table has it (``query_points``),
    when B against A is one of the campaign's comparisons and its runs pair; else None."""
    if how is None or how.how == engine.APART or not runs:
        return None
    if (label_a, label_b) not in {(x, y) for x, y, _ in points.compared_labels(runs, campaign)}:
        return None
    out = {}
    for q in query_points(runs, campaign):
        row = next((r for r in q.rows if r.point == label_b), None)
        if row is not None and row.comparison is not None:
            out[q.number] = row.comparison
    return out


QUERY_COLUMNS = (
    "run_id",
    "campaign",
    "variant",
    "point",
    "repeat",
    "phase",
    "iteration",
    "stream",
    "query",
    "seconds",
    "rows",
    "timed_out",
    "seed",
)


def _query_rows(run: StoredRun, idx: int) -> list[list[Any]]:
    """A phase's queries as (stream, query, seconds, rows, timed_out, seed): a throughput run's
    a row per stream and query (in each stream's order), a power run's a row per query (its
    stream empty: one session runs them)."""
    kept = run.series.get(str(idx), {})
    for kind in query_tables():
        if kept.get(kind.streams):
            return [list(row[:6]) for row in tidy.phase_table(run, idx, kind.streams).rows]
        if kept.get(kind.single):
            table = tidy.phase_table(run, idx, kind.single)
            return [[None, *row[:4], row[4] if len(row) > 4 else None] for row in table.rows]
    return []


def queries_table(runs: Sequence[StoredRun]) -> TidyTable:
    """``pglab export --by query``: a row per run, measured phase iteration, stream and query
    (its seconds, the rows it returned, whether it timed out, the seed of its parameters; a
    power run's stream empty), then the run's factor columns as ``pglab export`` has them."""
    found = [tidy.factors(run) for run in runs]
    names = list(dict.fromkeys(k for f in found for k in f))
    rows = []
    for run, factors in zip(runs, found, strict=True):
        for ph in run.phases:
            if not ph.measured:
                continue
            for row in _query_rows(run, ph.idx):
                rows.append(
                    [
                        run.id,
                        run.campaign,
                        run.variant,
                        run.label,
                        run.repeat,
                        ph.name,
                        ph.iteration,
                        *row,
                        *(factors.get(n) for n in names),
                    ]
                )
    return TidyTable([*QUERY_COLUMNS, *names], rows)
