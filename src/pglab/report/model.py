"""What a report shows, gathered from the store: the campaign's plan and environment, its points
(summary and comparison rows from ``points``), each point's runs, and for each point the run whose
TPS is the median of its repeats (the *representative* run, whose per-second series are drawn).

Pure data, no drawing: ``charts`` turns this into figures and ``html`` into the page.

A point's telemetry is a ``PointTelemetry`` (the figures, top waits and lines of text of
``telemetry.summary``); the campaign's environment is the first ok run's ``Fingerprint``
without its settings (``Report.settings`` has the non-default ones).
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from pglab.analysis import (
    cores,
    evidence,
    named_items,
    points,
    queries,
    run_facts,
    run_warnings,
    spreads,
    syncrate,
)
from pglab.analysis.points import PointRow
from pglab.analysis.profiles import run_stacks
from pglab.analysis.syncrate import RunStorage
from pglab.analysis.tidy import PERCENTILES, measured_phases, phase_histogram
from pglab.errors import LabError
from pglab.fingerprints import Fingerprint
from pglab.gc_pause import gc_paused
from pglab.pgbench import latency as latency_hist
from pglab.postgres import build
from pglab.records import reason_of
from pglab.report.cache import RunCache
from pglab.rows import CampaignRow, RunRow, StoredRun
from pglab.store.base import Store
from pglab.telemetry.summary import lines, phase_summary


@dataclass(frozen=True, slots=True)
class PointTelemetry:
    """The telemetry of a point's representative run, over its measured phases: the summary
    ``pglab show`` prints (``telemetry.summary.phase_summary``) and its lines of text."""

    figures: dict[str, float]  # read_hit_ratio, wal_mb_s, cpu_user_pct, ...
    top_waits: list[tuple[str, float, float]]  # (type:event, % of waits, sessions)
    lines: list[str]  # ``telemetry.summary.lines``: what the point's section lists


@dataclass
class Point:
    label: str
    runs: list[RunRow]  # in the order they ran
    summary: PointRow | None = None  # median, CI, CV, comparison, derived: once all are read
    representative: StoredRun | None = None  # the median-TPS ok run, whole
    others: list[StoredRun] = field(default_factory=list)  # the other ok runs: their phases
    # and per-second progress only (drawn beside the representative's TPS)
    latency_ms: dict[float, float] = field(default_factory=dict)  # percentile -> ms, all ok runs
    latency_avg_ms: float | None = None  # median over ok runs
    telemetry: PointTelemetry | None = None  # of the representative's measured phases
    scaling: run_facts.ScalingPoint | None = None  # TPS per client and efficiency on a clients axis
    on_cores: cores.CoresPoint | None = None  # TPS per core and efficiency on an os.cpus axis
    # single-client commits vs the WAL storage's syncs (``syncrate.commit_vs_fsync``), which
    # only the page reads (by its keys)
    vs_fsync: Mapping[str, object] | None = None

    @property
    def row(self) -> PointRow:
        """The point's summary row; ``gather`` sets it after reading every point's runs (a chart
        drawn while they are read uses only the runs)."""
        assert self.summary is not None, "the point's row is set once every point is read"
        return self.summary


@dataclass
class Report:
    title: str  # the campaign name
    campaign: CampaignRow  # get_campaign row (with its spec)
    baseline: str | None
    points: list[Point]
    runs: list[RunRow]  # every run, in the order stored
    environment: Fingerprint  # the facts shared by the runs (first ok run's), no settings
    versions: list[str]  # server versions seen
    settings: dict[str, str]  # non-default settings of the first ok run
    notices: list[run_warnings.Notice] = field(default_factory=list)  # warnings
    storage: list[RunStorage] = field(default_factory=list)  # syncrate.storage_of_runs
    only_run: int | None = None  # the report of a single run
    builds: list[dict[str, str]] = field(default_factory=list)  # servers pglab built (in words)
    # kit = "tpch": where a point's plan for a query differs (shape or work_mem spills) from
    # its reference's
    plan_changes: list[queries.PlanChange] = field(default_factory=list)
    # why each significant comparison changed: (title, its top items in words, what its runs
    # could not measure), ``evidence``
    evidence: list[tuple[str, list[str], list[str]]] = field(default_factory=list)
    # a replay's statement classes: each compared point's sentence and the classes that moved
    named: list[tuple[str, list[str]]] = field(default_factory=list)
    named_legend: str = ""

    @functools.cached_property
    def figure(self) -> str:
        """What the runs' headline figure is: "TPS", or "MB/s" of maintenance operations (read
        once: the page asks for it at every point, and each answer looks at every run)."""
        by_variant: dict[str, list[RunRow]] = {}
        for r in self.runs:
            by_variant.setdefault(r.variant, []).append(r)
        found = dict.fromkeys(points.figure_of(runs) for runs in by_variant.values()) or {
            "tps": None
        }
        return "/".join("TPS" if f == "tps" else f for f in found)  # "TPS/NOPM": each its own

    @property
    def failed_runs(self) -> list[tuple[RunRow, str]]:
        """The failed runs, each with its reason (``records.reason_of``)."""
        return [(r, reason_of(r.error)) for r in self.runs if not r.ok]


def on_cores(rep: Report) -> list[Point]:
    """The points on a curve over cores (an os.cpus axis), each series' together, by cores."""
    with_cores = [(pt, pt.on_cores) for pt in rep.points if pt.on_cores is not None]
    first = {c.series: i for i, (_, c) in reversed(list(enumerate(with_cores)))}
    return [pt for pt, c in sorted(with_cores, key=lambda x: (first[x[1].series], x[1].cpus))]


# series no report figure reads from the runs that are not drawn (the largest ones)
DRAWN_ONLY = ("pg.io", "waits", "pg.buffercache")


def gather(
    store: Store,
    ident: str | int,
    on_point: Callable[[int, Point], None] | None = None,
    home: Path | None = None,
    outline: bool = False,
    *,
    on_read: Callable[[list[Point]], None] | None = None,
    on_report: Callable[[Report], None] | None = None,
) -> Report:
    """The report of a campaign (by name) or of one run (by id: an int, or digits that name no
    campaign: ``campaign_of``). ``on_point(number, point)`` is called as soon as a point's runs
    are read (before the statistics), so that its chart can be drawn while the rest is read.
    ``home``: the lab home, where what a report keeps of each run for the next one is
    (``cache``). ``outline``: only what needs no per-second series (a served page's first
    view: the points and their verdicts, each representative run without its series; no
    latency percentiles, telemetry, warnings or storage, which ``pglab serve`` fetches later
    from the whole report). ``on_read(points)``: every point's runs are read (their latency
    percentiles known), before the statistics; ``on_report(report)``: the points' rows are
    made, before the warnings and storage are read (so that the campaign's charts are drawn
    meanwhile)."""
    with gc_paused():  # thousands of runs' series decoded: nothing cyclic to collect
        return _gather(store, ident, on_point, home, outline, on_read, on_report)


def _gather(
    store: Store,
    ident: str | int,
    on_point: Callable[[int, Point], None] | None,
    home: Path | None,
    outline: bool,
    on_read: Callable[[list[Point]], None] | None,
    on_report: Callable[[Report], None] | None,
) -> Report:
    cache = RunCache(home)
    camp, only_run = campaign_of(store, ident)
    runs = store.list_runs(camp["name"])
    if only_run is not None:
        runs = [r for r in runs if r.id == only_run]
    baseline = points.reference_variant(camp, runs) if only_run is None else None
    axis_base = points.axis_baseline_of(camp, runs) if only_run is None else {}
    by_label: dict[str, list[RunRow]] = {}  # in the order of point_rows: first run first
    for r in runs:
        by_label.setdefault(r.label, []).append(r)
    pts = [Point(label, point_runs) for label, point_runs in by_label.items()]
    loaded: dict[int, StoredRun] = {}
    for n, pt in enumerate(pts, 1):
        if outline:
            _outline_point(store, pt, loaded)
            continue
        _fill_point(store, pt, loaded, cache)
        if on_point is not None and pt.representative is not None:
            on_point(n, pt)
    if on_read is not None:
        on_read(pts)
    # the answers every view renders (analysis/engine.py); one run's report compares nothing
    rows = (  # which build each point ran: two builds are held to their spread (spreads)
        points.campaign_rows(spreads.fingerprinted(store, runs), camp)
        if only_run is None
        else points.point_rows(runs)
    )
    for pt, row in zip(pts, rows, strict=True):
        assert row.point == pt.label
        pt.summary = row
    series = run_facts.scaling(runs)
    for pt in pts:
        key = run_facts.scaling_key(pt.row.axes, pt.row.variant, pt.row.point)
        if key is not None and len(series.get(key[0], ())) > 1:
            pt.scaling = next((sp for sp in series[key[0]] if sp.clients == key[1]), None)
    curves = cores.over_cores(runs)
    for pt in pts:
        at = cores.cores_key(pt.row.axes, pt.row.variant, pt.row.point)
        if at is not None and at[0] in curves:
            pt.on_cores = next(c for c in curves[at[0]] if c.cpus == at[1])
    first = next((loaded[r.id] for r in runs if r.id in loaded), None)
    fp: Fingerprint = first.fingerprint if first is not None else {}
    environment = fp.copy()
    environment.pop("settings", None)
    builds = {
        str(v.fingerprint["build"].get("key")): build.facts(v.fingerprint)
        for v in loaded.values()
        if v.fingerprint.get("build")
    }
    rep = Report(
        title=camp["name"],
        campaign=camp,
        baseline=baseline or (points.reference_of(camp, runs) if axis_base else None),
        points=pts,
        runs=runs,
        environment=environment,
        versions=sorted({v.fingerprint.get("server_version", "?") for v in loaded.values()}),
        settings=non_default_settings(fp),
        only_run=only_run,
        builds=list(builds.values()),
    )
    if on_report is not None:
        on_report(rep)
    if not outline:
        _fill_campaign(store, rep, loaded, rows)
    return rep


def campaign_of(store: Store, ident: str | int) -> tuple[CampaignRow, int | None]:
    """The campaign of ``ident`` and the run asked for: a name is a campaign's, even all
    digits; an int, or digits no campaign is named, a run's id (None: the whole campaign)."""
    if isinstance(ident, str):
        camp = store.get_campaign(ident)
        if camp is not None and camp["name"] == ident:  # by name, not by the campaign's id
            return camp, None
        if not ident.isdigit():
            raise LabError(f"no campaign named {ident!r}", hint="pglab ls --campaigns lists them")
    run = store.get_run(int(ident), series=False)
    if run is None:
        raise LabError(f"no run with id {ident}", hint="pglab ls lists the runs")
    found = store.get_campaign(run.campaign)
    assert found is not None  # a run's campaign is deleted with it
    return found, run.id


def point_of(store: Store, outline: Report, n: int, home: Path | None = None) -> Report:
    """The ``outline`` with its point ``n`` read whole, as the whole report has it, and the
    point a flame graph's differential is against when ``n`` was profiled (the baseline's,
    else the first): what a served page's point needs, without reading every other run."""
    cache = RunCache(home)
    pts = list(outline.points)
    synced = store.list_storage_results("pg_test_fsync")
    base = next((i for i, pt in enumerate(pts) if pt.label == outline.baseline), 0)
    for i in dict.fromkeys((n - 1, base)):
        pt = pts[i] = replace(pts[i], representative=None, others=[], latency_ms={})
        _fill_point(store, pt, {}, cache)
        if pt.representative is not None:
            pt.vs_fsync = syncrate.commit_vs_fsync(pt.representative, synced)
        if i == n - 1 and not (pt.representative and run_stacks(pt.representative)):
            break  # not profiled: no differential to draw
    return replace(outline, points=pts)


def _fill_campaign(
    store: Store, rep: Report, loaded: dict[int, StoredRun], rows: list[PointRow]
) -> None:
    """What the whole report adds to the outline: commits against the storage's syncs,
    warnings, the storage results, the plans that changed (a TPC-H-like kit)."""
    measured = store.list_storage_results()
    synced = [row for row in measured if row["tool"] == "pg_test_fsync"]
    for pt in rep.points:
        if pt.representative is not None:
            pt.vs_fsync = syncrate.commit_vs_fsync(pt.representative, synced)
    full = [loaded.get(r.id) or store.get_run(r.id) for r in rep.runs]
    if rep.only_run is None:
        rep.notices = run_warnings.campaign_notices(store, rep.title, runs=full, rows=rows)
        why = evidence.of_campaign(store, rep.title, rows)
        rep.evidence = [
            (title, [i.text for i in items[: evidence.TOP]], list(items.notes))
            for title, items in why
        ]
        _fill_named(store, rep)
    else:
        rep.notices = run_warnings.run_notices(full[0] or rep.runs[0])
    rep.storage = syncrate.storage_of_runs([run for run in full if run], measured)
    if queries.query_numbers(rep.runs):
        rep.plan_changes = queries.plan_changes(store, rep.runs, rep.campaign)


def _fill_named(store: Store, rep: Report) -> None:
    """A replay's statement classes: each compared point's sentence and its classes that
    moved, as ``pglab show`` says them (``analysis.named_items``)."""
    found = named_items.campaign_items(store, rep.runs, rep.campaign)
    if found is None or not found.points:
        return
    unit = found.named.unit
    rep.named = [
        (named_items.said(p, found.named, p.point, p.reference), named_items.lines(p, unit))
        for p in found.points
    ]
    every = [r.comparison for item in found.items for r in item.rows]
    rep.named_legend = named_items.legend(found.named, every, len(found.items))


def _outline_point(store: Store, pt: Point, loaded: dict[int, StoredRun]) -> None:
    """The point's representative run without its series, and its mean latency (from the
    runs' metrics): what the outline shows."""
    figure = points.figure_of(pt.runs)  # the point's own: TPS, MB/s, QphH...
    value = {r.id: v for r in pt.runs if (v := points.figure_value(r, figure)) is not None}
    ok = [r for r in pt.runs if r.id in value]
    if not ok:
        return
    median = statistics.median_low(value.values())
    drawn = next(r.id for r in ok if value[r.id] == median)
    run = store.get_run(drawn, series=False)
    if run is None:  # deleted while the page was read
        return
    loaded[drawn] = pt.representative = replace(run, server_log="")
    averages = [a for r in ok if (a := r.metrics.get("latency_avg_ms")) is not None]
    pt.latency_avg_ms = statistics.median(averages) if averages else None


def _fill_point(store: Store, pt: Point, loaded: dict[int, StoredRun], cache: RunCache) -> None:
    figure = points.figure_of(pt.runs)  # the point's own: TPS, MB/s, QphH...
    value = {r.id: v for r in pt.runs if (v := points.figure_value(r, figure)) is not None}
    ok = [r for r in pt.runs if r.id in value]
    if not ok:
        return
    median = statistics.median_low(value.values())
    drawn = next(r.id for r in ok if value[r.id] == median)
    full, hists = [], []
    for r in ok:
        kept = cache.histogram(r)  # the drawn run's too: its series are read, not merged again
        skip = () if r.id == drawn else DRAWN_ONLY + (("latency",) if kept is not None else ())
        run = store.get_run(r.id, skip_kinds=skip)
        if run is None:  # deleted while the report was read
            continue
        if kept is None:
            kept = _histogram(run)
            cache.keep(r, kept)
        hists.append(kept)
        loaded[r.id] = run
        full.append(run)
    if drawn not in loaded:
        return
    pt.representative = loaded[drawn]
    averages = [a for run in full if (a := run.metrics.get("latency_avg_ms")) is not None]
    merged = latency_hist.merge(hists)
    pt.latency_ms = {q: latency_hist.percentile(merged, q) for q in PERCENTILES} if merged else {}
    pt.representative = _without_histograms(pt.representative)
    pt.others = [_progress_only(run) for run in full if run.id != drawn]
    pt.latency_avg_ms = statistics.median(averages) if averages else None
    rep = pt.representative
    idxs = measured_phases(rep)
    if idxs:
        seconds = sum(p.elapsed_s or 0 for p in rep.phases if p.idx in idxs)
        summary = phase_summary(rep.series.get(str(idxs[-1]), {}), seconds / len(idxs))
        client = next(p.client for p in rep.phases if p.idx == idxs[-1])
        pt.telemetry = PointTelemetry(
            summary["figures"], summary["top_waits"], lines(summary, client)
        )


def _histogram(run: StoredRun) -> latency_hist.Histogram:
    """Every transaction of the run's measured phases, as one latency histogram (a sampled
    log weighted by 1/rate: ``tidy.phase_histogram``)."""
    return latency_hist.merge(phase_histogram(run, idx) for idx in measured_phases(run))


def _without_histograms(run: StoredRun) -> StoredRun:
    """A run without its per-second latency histograms (the bulk of its series): charts draw
    the pre-computed per-second percentiles."""
    series = {}
    for idx, kinds in run.series.items():
        kinds = dict(kinds)
        tab = kinds.get("latency")
        if tab and "histogram" in tab["columns"]:
            i = tab["columns"].index("histogram")
            kinds["latency"] = {
                "columns": [c for j, c in enumerate(tab["columns"]) if j != i],
                "rows": [[v for j, v in enumerate(r) if j != i] for r in tab["rows"]],
            }
        series[idx] = kinds
    return replace(run, series=series, server_log="")


def _progress_only(run: StoredRun) -> StoredRun:
    series = {
        idx: {"progress": kinds["progress"]}
        for idx, kinds in run.series.items()
        if "progress" in kinds
    }
    return replace(run, series=series, server_log="")


def non_default_settings(fp: Fingerprint) -> dict[str, str]:
    """Settings whose value does not come from PostgreSQL's defaults (as the fingerprint has
    them), minus the ones every server of the lab sets for its own sake."""
    skip = {
        "application_name",
        "client_encoding",
        "DateStyle",
        "TimeZone",
        "lc_messages",
        "lc_monetary",
        "lc_numeric",
        "lc_time",
        "default_text_search_config",
    }
    out = {}
    for name, s in sorted((fp.get("settings") or {}).items()):
        if name in skip or s.get("source") in ("default", "override", "client", None):
            continue
        out[name] = s.get("shown") or s.get("setting") or ""
    return out
