"""``pglab report``: one self-contained HTML page per campaign (or run), and its charts as PNG.

``model.gather`` reads what the store holds, ``charts`` draws it with matplotlib, and the page is
rendered by jinja2 with autoescaping on, so every user string (variant names, settings, script
names, errors) is escaped. The PNGs are embedded in the page as data URIs and written beside it;
the page loads nothing from the network.
"""

from __future__ import annotations

import base64
import functools
import gc
import json
import multiprocessing
import os
import re
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
import markupsafe

from pglab import __version__
from pglab.analysis import environment as where_it_ran
from pglab.analysis import pacing, points, scripts, verdicts
from pglab.analysis.queries import query_points
from pglab.analysis.syncrate import RunStorage
from pglab.campaign.dsn import masked_document
from pglab.gc_pause import gc_paused
from pglab.records import StatementReport
from pglab.report import browser, charts, flames
from pglab.report.browser import PointData
from pglab.report.model import Point, Report, gather, on_cores, point_of
from pglab.report.views import EmbeddedChart, PageContext, PointView, StorageView
from pglab.store.base import Store
from pglab.targets import results as storage_tables

if TYPE_CHECKING:  # optuna, which tune.summary imports, takes a while
    from pglab.tune.summary import TuneSummary

OPEN_POINTS = 6  # the first points' details are open when the page loads
VERDICT_TEXT = {"+": "+", "-": "−", "=": "=", "~": "~", "?": "?"}
VERDICT_CLASS = {"+": "v-plus", "-": "v-minus", "=": "v-equal", "~": "v-same", "?": "v-none"}

__all__ = [
    "Served",
    "Written",
    "environment",
    "gather",
    "parts",
    "point_body",
    "point_of",
    "render",
    "write",
]


@dataclass(frozen=True)
class Written:
    html: Path
    pngs: list[Path]
    report: Report


def write(
    store: Store,
    ident: str | int,
    out: Path | None,
    home: Path,
    tune: TuneSummary | None = None,
    png: bool = False,
) -> Written:
    """Write the report of campaign or run ``ident`` (as ``gather`` reads it) to ``out``
    (default: under the lab home's ``reports/``) and its PNG charts into ``<out stem>-charts/``
    beside it; ``tune``: the campaign is a tune study, whose section (history, importance,
    confirmation) comes first. The points' charts are drawn by the page itself; ``png``: also
    as PNG files by matplotlib (a process per CPU), as the campaign's charts always are."""
    with gc_paused(), _Drawing(png) as drawing:  # the runs read: no cycles to look for
        drawing.start()  # the workers import matplotlib while the store is read here
        # the campaign's charts are drawn by the workers while the statistics, the warnings
        # and the points' numbers are made here
        rep = gather(
            store,
            ident,
            on_point=drawing.point if png else None,
            home=home,
            on_read=drawing.latency,
            on_report=drawing.campaign,
        )
        data = {n: d for n, pt in enumerate(rep.points, 1) if (d := browser.point_data(pt))}
        made, per_point = drawing.finish()
    if tune is not None:
        made.insert(0, charts.tune_history(tune))
    if out is None:
        out = home / "reports" / f"{safe_name(rep.title)}{_run_suffix(rep)}.html"
    out = out.absolute()
    with gc_paused():
        html = render(rep, made, per_point, tune, data)
    out.parent.mkdir(parents=True, exist_ok=True)
    chart_dir = out.with_name(out.stem + "-charts")
    chart_dir.mkdir(exist_ok=True)
    pngs = []
    for ch in [*made, *per_point.values()]:
        path = chart_dir / f"{ch.name}.png"
        path.write_bytes(ch.png)
        pngs.append(path)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out)
    return Written(out, pngs, rep)


def _drawer() -> None:
    """A drawing worker's start: forked in a pause of the collector (``gc_paused``), it
    collects again; matplotlib imported here, while the parent reads the store."""
    gc.enable()
    charts.load()


def _ready() -> None:
    """A worker's first task: nothing (its start has imported matplotlib)."""


def _slim(pt: Point) -> Point:
    """A point as the campaign's charts read it (its rows, percentiles, label), without its
    runs' series: what is sent to a worker."""
    return replace(pt, representative=None, others=[], telemetry=None, vs_fsync=None)


class _Drawing:
    """Charts drawn by as many worker processes as there are CPUs (matplotlib draws with one
    core; the charts are independent), forked once, before the store is read: with ``png``,
    each point's as soon as its runs are read, overlapping the reading of the store; the
    campaign's latency percentiles once every point is read (``latency``), its other charts
    once the points' rows are made (``campaign``), while the warnings and the page's numbers
    are made here. What a worker draws is sent to it without the runs' series."""

    def __init__(self, png: bool = True) -> None:
        self.workers = os.cpu_count() or 1
        self.pool: ProcessPoolExecutor | None = None
        self.drawn: dict[int, Future[charts.Chart | None] | charts.Chart | None] = {}
        self.made: list[Future[charts.Chart | None] | charts.Chart | None] = []
        self.latency_drawn: Future[charts.Chart | None] | None = None

    def __enter__(self) -> _Drawing:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def _fork(self) -> ProcessPoolExecutor | None:
        if self.pool is None and self.workers > 1:
            ctx = multiprocessing.get_context("fork")
            self.pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_drawer)
        return self.pool

    def start(self) -> None:
        """Fork the workers (a process pool forks them when given its first task)."""
        if (pool := self._fork()) is not None:
            pool.submit(_ready)

    def point(self, number: int, pt: Point) -> None:
        pool = self._fork()
        if pool is None:
            self.drawn[number] = charts.point_chart(pt, number)
        else:
            self.drawn[number] = pool.submit(charts.point_chart, pt, number)

    def latency(self, pts: list[Point]) -> None:
        pool = self._fork()
        if pool is not None:
            self.latency_drawn = pool.submit(charts.latency_chart, [_slim(pt) for pt in pts])

    def campaign(self, rep: Report) -> None:
        pool = self._fork()
        slim = replace(rep, points=[_slim(pt) for pt in rep.points])
        for i in range(charts.CAMPAIGN_CHARTS):
            if i == charts.LATENCY_CHART and self.latency_drawn is not None:
                self.made.append(self.latency_drawn)
            elif pool is not None:
                self.made.append(pool.submit(charts.campaign_chart, slim, i))
            else:
                self.made.append(charts.campaign_chart(rep, i))

    def finish(self) -> tuple[list[charts.Chart], dict[int, charts.Chart]]:
        made = [c for c in (f.result() if isinstance(f, Future) else f for f in self.made) if c]
        per_point = {}
        for number, drawn in self.drawn.items():
            chart = drawn.result() if isinstance(drawn, Future) else drawn
            if chart is not None:
                per_point[number] = chart
        return made, per_point


@dataclass(frozen=True)
class Served:
    """The page as ``pglab serve`` shows it, instead of a file: plotly.js loaded from
    ``plotly_url``, the campaign's charts drawn when the browser asks for them (``chart_url``
    with the chart's number), links to the runs' pages under ``root``, the serve's navigation
    bar (``nav.html.j2``) above."""

    root: str  # the application's path, ending in "/"
    plotly_url: str
    chart_url: str  # with "{n}" for the chart's number
    # the outline of a campaign (``gather(outline=True)``) is shown first; what it lacks is
    # fetched: the summary's cells and the warnings (``parts``) from ``parts_url``, each
    # point's body (``point_body``) from ``point_url`` (with "{n}") when it is opened
    parts_url: str = ""
    point_url: str = ""


QUERY_CHART_TITLE = "time per query per point"  # the fourth, kit = "tpch" only


def chart_titles(rep: Report) -> tuple[str, ...]:
    """The campaign charts' titles (``charts.campaign_chart``) for a page that draws them
    later, each named by the figure it draws (TPS, MB/s, QphH or QthH)."""
    figure = rep.figure
    titles = (
        f"{figure} per point",
        f"every run's {figure} in the order it ran",
        "latency per point",
    )
    return titles + ((QUERY_CHART_TITLE,) if query_points(rep.runs, rep.campaign) else ())


@functools.cache
def environment(*more: Path) -> jinja2.Environment:
    """The templates of the report and of the pages that share them (``more`` directories,
    searched first): autoescaped, every variable required."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([*more, Path(__file__).parent]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(
    rep: Report,
    made: list[charts.Chart],
    per_point: dict[int, charts.Chart],
    tune: TuneSummary | None = None,
    data: dict[int, PointData] | None = None,
    served: Served | None = None,
    env: jinja2.Environment | None = None,
) -> str:
    """The page; ``data``: the points' numbers (``browser.point_data``) when made already;
    ``served``: the page of ``pglab serve`` (its ``env``), whose charts are drawn on demand
    (and, with its ``parts_url``, of an outline: its missing parts fetched by the page)."""
    template = (env or environment()).get_template("page.html.j2")
    lazy = served is not None and bool(served.parts_url)
    if lazy:
        data = {}
    ctx = _context(rep, made, per_point, tune, data, served)
    ctx["points_total"] = sum(pt.representative is not None for pt in rep.points)
    lazy_js = markupsafe.Markup(_page_js("lazy.js")) if lazy else ""
    return template.render(**ctx, lazy=lazy, lazy_js=lazy_js)


def parts(rep: Report, served: Served, env: jinja2.Environment) -> dict[str, str | dict[str, str]]:
    """What the outline's page fetches of the whole report ``rep``: the summary's cells
    (``cells``, by "KEY-N", as the page writes them) and the warnings, storage and plans
    that changed (``sections``, HTML)."""
    ctx = _context(rep, [], {}, None, {}, served)
    cells = {
        f"{key}-{n}": text
        for n, pt in enumerate(rep.points, 1)
        for key, text in summary_cells(pt).items()
    }
    return {"cells": cells, "sections": env.get_template("sections.html.j2").render(**ctx)}


def point_body(rep: Report, n: int, served: Served, env: jinja2.Environment) -> str | None:
    """Point ``n``'s body in the page (its chart's numbers, telemetry, scripts) from the whole
    report ``rep``; None when there is no such point."""
    if not 1 <= n <= len(rep.points):
        return None
    pt = rep.points[n - 1]
    data = {n: d} if (d := browser.point_data(pt)) else {}
    ctx = _context(rep, [], {}, None, data, served)
    return env.get_template("point_body.html.j2").render(**ctx, pt=pt, pn=n)


def summary_cells(pt: Point) -> dict[str, str]:
    """A point's cells of the summary that its runs' series give (the outline's page fetches
    them): latency percentiles, top wait, read hit ratio, WAL."""
    return {
        "p95": _num(pt.latency_ms.get(95.0), 3),
        "p99": _num(pt.latency_ms.get(99.0), 3),
        "wait": _top_wait(pt),
        "hit": _figure(pt, "read_hit_ratio", 100, 2),
        "wal": _figure(pt, "wal_mb_s", 1, 2),
    }


def _context(
    rep: Report,
    made: list[charts.Chart],
    per_point: dict[int, charts.Chart],
    tune: TuneSummary | None,
    data: dict[int, PointData] | None,
    served: Served | None,
) -> PageContext:
    """What the page's templates are rendered with."""
    derived = sorted({k for pt in rep.points for k in pt.row.derived})
    if data is None:
        data = {n: d for n, pt in enumerate(rep.points, 1) if (d := browser.point_data(pt))}
    flames.add(data, rep.points, rep.baseline)  # CPU profiles (pglab run --profile)
    point_data = {n: _point_view(rep, n, d, per_point) for n, d in data.items()}
    spec = rep.campaign.get("spec") or {}
    shown_charts = _campaign_charts(made[1 if tune is not None else 0 :], served, rep)
    return PageContext(
        r=rep,
        tune=tune,
        tune_settings={c.label: c.settings for c in tune.candidates} if tune else {},
        tune_chart=_embedded(made[0]) if tune is not None else None,
        version=__version__,
        made=datetime.now().strftime("%Y-%m-%d %H:%M"),
        description=spec.get("description"),
        derived=derived,
        scaling=any(pt.scaling for pt in rep.points),
        cores=on_cores(rep),
        queries_kit=rep.figure in ("QphH", "QthH"),
        campaign_charts=shown_charts,
        point_data=point_data,
        points_total=len(point_data),
        plotly_js=markupsafe.Markup(_plotly_js()) if point_data and not served else "",
        page_js=markupsafe.Markup(_page_js()),
        charts_total=len(shown_charts) if served else len(made),
        served=served,
        open_points=OPEN_POINTS,
        effect=points.effect_of(rep.campaign),
        equivalence=points.equivalence_of(rep.campaign) or points.effect_of(rep.campaign),
        methods=verdicts.methods_text([pt.summary.comparison for pt in rep.points if pt.summary]),
        plan_facts=_plan_facts(rep),
        storage=[_storage_view(row) for row in rep.storage],
        paced=pacing.paced_points(rep.runs),
        env_facts=_env_facts(rep),
        campaign_json=json.dumps(masked_document(spec), indent=2, ensure_ascii=False, default=str),
        verdict_text=VERDICT_TEXT,
        verdict_class=VERDICT_CLASS,
        num=_num,
        spread=_spread_text,
        summary_cells=summary_cells,
        telemetry_lines=lambda pt: pt.telemetry.lines if pt.telemetry else [],
        when=_when,
        script_rows=_script_rows,
        statement_rows=_statement_rows,
        failure_lines=_failure_lines,
        version_of=lambda pt: (
            pt.representative.fingerprint.get("server_version", "?") if pt.representative else "?"
        ),
    )


def _point_view(rep: Report, n: int, d: PointData, per_point: dict[int, charts.Chart]) -> PointView:
    """Point ``n``'s numbers as the page puts them: JSON safe inside a <script>, and what its
    caption says."""
    text = json.dumps(d, separators=(",", ":")).replace("<", "\\u003c")
    png = f"{per_point[n].name}.png" if n in per_point else None
    return PointView(
        json=markupsafe.Markup(text),
        run=d["run"],
        png=png,
        runs=d["runs"],
        others=bool(d["others"]),
        missing=d["missing"],
        scripts=browser.script_names(rep.points[n - 1]),
        flame=d.get("flame"),
        flame_diff=d.get("flame_diff"),
    )


def _storage_view(row: RunStorage) -> StorageView:
    """A stored storage result as the page shows it: pg_test_fsync's ops/s per method and
    test, or fio's jobs."""
    if row["tool"] == "fio":
        columns = ["job", "IOPS", "MB/s", "mean latency µs", "fsync µs"]
        rows = [
            [
                j["name"],
                _num(j["iops"]),
                _num(j["mb_per_s"], 1),
                _num(j.get("lat_mean_us")),
                _num(j.get("sync_lat_mean_us")),
            ]
            for j in row["results"].get("jobs", [])
        ]
        text_columns = 1
    else:
        columns = ["test", "method", "ops/s", "µs/op"]
        rows = [
            [
                storage_tables.SECTION_NAMES.get(sec["key"], sec["title"]) if i == 0 else "",
                r["method"],
                _num(r["ops_per_s"]),
                _num(r["usecs_per_op"]),
            ]
            for sec in row["results"].get("sections", [])
            for i, r in enumerate(sec["rows"])
        ]
        text_columns = 2
    return StorageView(
        title=f"{row['tool']} {row['tool_version']} (storage result #{row['id']})",
        where=storage_tables.where(row),
        when=_when(row["measured_at"]),
        roles=" and ".join(sorted(row["roles"], key=["data", "WAL"].index)),
        points=len(row["points"]),
        matched_by="device, file system and mount options"
        if row["matched_by"] == "device"
        else "directory",
        columns=columns,
        numeric=[i >= text_columns for i in range(len(columns))],
        rows=rows,
    )


def _page_js(name: str = "points.js") -> str:
    """The page's own script (``points.js``): draws the points' charts, checks the images;
    or ``lazy.js``: the outline's page fetching its parts (``Served.parts_url``)."""
    js = (Path(__file__).parent / name).read_text()
    assert "</script" not in js.lower()
    return js


def _plotly_js() -> str:
    """plotly.js, the whole library (about 4.6 MB), put in the page once: the zoomable charts
    work from disk, with no network. It holds no ``</script``, which would end its element."""
    from plotly.offline import get_plotlyjs

    js = str(get_plotlyjs())
    if "</script" in js.lower():
        raise RuntimeError("this plotly.js cannot be inlined: it holds '</script'")
    return js


def safe_name(name: str) -> str:
    """A file name from any campaign name (hostile ones included)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "campaign"
    return cleaned[:80]


def _run_suffix(rep: Report) -> str:
    return f"-run{rep.only_run}" if rep.only_run else ""


def _embedded(ch: charts.Chart) -> EmbeddedChart:
    return EmbeddedChart(
        name=ch.name,
        title=ch.title,
        missing=ch.missing,
        url=None,
        b64=base64.b64encode(ch.png).decode(),
    )


def _campaign_charts(
    made: list[charts.Chart], served: Served | None, rep: Report
) -> list[EmbeddedChart]:
    """The campaign charts the page shows: drawn (embedded), or served, each at its URL (the
    time per query only for a TPC-H-like campaign)."""
    if served is None:
        return [_embedded(c) for c in made]
    titles = chart_titles(rep)
    return [
        EmbeddedChart(
            name=f"campaign-{n}",
            title=title,
            missing=(),
            b64="",
            url=served.chart_url.replace("{n}", str(n)),
        )
        for n, title in enumerate(titles)
    ]


def _num(v: float | None, digits: int = 0) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def _spread_text(pt: Point) -> str:
    row = pt.row
    if row.tps_median is None:
        return "–"
    if row.ci and row.ok_runs >= 3:
        return f"{max(row.ci[0], 0):,.0f} … {row.ci[1]:,.0f}"
    if row.ok_runs >= 2 and row.tps_min is not None and row.tps_max is not None:
        return f"{row.tps_min:,.0f} … {row.tps_max:,.0f} (min–max)"
    return "one run"


def _top_wait(pt: Point) -> str:
    waits = pt.telemetry.top_waits if pt.telemetry else []
    for name, pct, _ in waits:
        if name != "CPU:running":
            return f"{name} {pct:.0f}%"
    return "–" if not waits else "none (CPU)"


def _figure(pt: Point, name: str, scale: float, digits: int) -> str:
    v = pt.telemetry.figures.get(name) if pt.telemetry else None
    return "–" if v is None else f"{v * scale:,.{digits}f}"


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S") if ts else "–"


# for the other pages drawn from these templates (``report.history``)
num_text, when_text, plotly_js = _num, _when, _plotly_js


def _plan_facts(rep: Report) -> list[tuple[str, str]]:
    spec = rep.campaign.get("spec") or {}
    facts = [("campaign file", rep.campaign.get("source_file") or "(none: made by pglab quick)")]
    variants = spec.get("variants") or {}
    if variants:
        facts.append(("variants", ", ".join(variants)))
        if rep.baseline:
            facts.append(("baseline", rep.baseline))
    for axis, values in (spec.get("matrix") or {}).items():
        if isinstance(values, dict):
            for name, vals in values.items():
                facts.append((f"matrix {axis}.{name}", ", ".join(map(str, vals))))
        else:
            facts.append((f"matrix {axis}", ", ".join(map(str, values))))
    facts.append(("repeats", str(spec.get("repeats", 1))))
    facts.append(("order", str(spec.get("order", "interleaved"))))
    run = next((pt.representative for pt in rep.points if pt.representative), None)
    if run is not None:
        for ph in run.spec.get("phases") or []:
            scripts = "+".join(
                s.get("builtin") or Path(str(s.get("path"))).name for s in ph["scripts"]
            )
            length = f"{ph['duration']} s" if ph.get("duration") else f"{ph['transactions']} tx"
            facts.append(
                (
                    f"phase {ph['name']}",
                    f"{scripts}, {ph['clients']} client(s), {length} × {ph['times']}"
                    + ("" if ph["measured"] else ", not measured"),
                )
            )
        ds = run.spec.get("dataset") or {}
        reset = ds.get("reset")
        reset = f"per {reset}" if reset in ("run", "point") else reset
        facts.append(("dataset", f"pgbench scale {ds.get('scale')}, reset {reset}"))
    return facts


def _env_facts(rep: Report) -> list[tuple[str, str]]:
    return where_it_ran.facts(rep.environment, rep.versions, rep.builds)


def _script_rows(pt: Point) -> list[scripts.ScriptRow]:
    """The representative run's scripts of its measured phases, when a phase has several."""
    run = pt.representative
    if run is None:
        return []
    rows = scripts.run_scripts(run)
    return rows if any(r.number > 1 for r in rows) else []


def _statement_rows(pt: Point) -> list[tuple[scripts.ScriptRow, list[StatementReport]]]:
    """Each script of the representative run with its statements (pgbench -r), slowest first."""
    run = pt.representative
    if run is None:
        return []
    return [
        (r, scripts.slowest_first(r.statements)) for r in scripts.run_scripts(run) if r.statements
    ]


def _failure_lines(pt: Point) -> list[str]:
    """The representative run's failures and retries, a line per measured phase that had any."""
    run = pt.representative
    if run is None:
        return []
    found = [(ph, scripts.failures(ph)) for ph in run.phases if ph.measured]
    return [f"{ph.name} {ph.iteration}: {scripts.describe_failures(f)}" for ph, f in found if f]
