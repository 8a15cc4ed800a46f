"""The report's charts, drawn with matplotlib (Agg, no display) as PNG images.

Campaign charts compare points (TPS against clients with CI bars, every run's TPS in the order
it ran, latency percentiles); a point's chart draws the per-second series of its representative
run: TPS (and each script's, when a phase mixes several) with checkpoints marked, latency
percentiles, wait events stacked (as in seed 004), buffers written and WAL, CPU, disk and dirty
memory; a run of maintenance operations has its progress phases and their rates
(``progress_chart``) in place of TPS and latency. A panel whose series is missing says so
instead of drawing zeros.
"""

from __future__ import annotations

import io
import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pglab.analysis import points
from pglab.analysis.queries import query_points
from pglab.report import cores_chart, progress_chart, queries_chart
from pglab.report.model import Point, Report, on_cores
from pglab.report.panels import (
    _TWINS,
    PALETTE,
    _missing,
    _panel_buffers,
    _panel_cpu,
    _panel_disk,
    _panel_latency,
    _panel_tps,
    _panel_waits,
    _short,
)
from pglab.report.series import RunSeries
from pglab.workloads import query_tables

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from pglab.tune.summary import TuneSummary


def load() -> None:
    """Import matplotlib (about a second: only when a chart is drawn, not with every command)
    and set it up for drawing PNGs without a display. Idempotent; the report calls it before it
    forks its drawing workers, so that they inherit it."""
    import matplotlib

    matplotlib.use("Agg")
    # a fixed title height: placing titles by the tick labels' extents measures every text twice
    matplotlib.rcParams["axes.titley"] = 1.01
    # unhinted glyphs: a sixth less drawing time for text that reads the same at this size
    matplotlib.rcParams["text.hinting"] = "no_hinting"


def _figure(**kwargs: Any) -> Figure:
    load()
    from matplotlib.figure import Figure

    return Figure(**kwargs)


DPI = 80


@dataclass(frozen=True)
class Chart:
    name: str  # file name stem, safe for any file system
    title: str
    png: bytes
    missing: tuple[str, ...] = ()  # panels drawn empty: their series was not recorded


def campaign_charts(rep: Report) -> list[Chart]:
    charts = [campaign_chart(rep, i) for i in range(CAMPAIGN_CHARTS)]
    return [c for c in charts if c is not None]


CAMPAIGN_CHARTS = 5
LATENCY_CHART = 2  # the one chart of the runs' series (their latency percentiles)


def campaign_chart(rep: Report, i: int) -> Chart | None:
    """The i-th campaign chart: TPS (against clients, or per point), every run in order,
    latency percentiles per point, kit = "tpch"'s time per query per point, TPS against cores
    (an os.cpus axis); None when the runs give it nothing to draw."""
    return (_tps_chart, _runs_in_order, _latency_chart, _query_chart, _cores_chart)[i](rep)


def _query_chart(rep: Report) -> Chart | None:
    """kit = "tpch": each query's median seconds per point (log scale: queries differ by orders
    of magnitude), bars its 95% CI (of the mean rate, from 3 repeats) or min–max."""
    found = query_points(rep.runs, rep.campaign)
    if not found:
        return None
    labels = [row.point for row in found[0].rows]
    fig = _figure(figsize=(10, 1.5 + 0.12 * len(found) * max(2, len(labels))), layout="constrained")
    ax = fig.add_subplot()
    step = 0.8 / len(labels)
    for j, label in enumerate(labels):
        ys, secs, lows, highs = [], [], [], []
        for i, q in enumerate(found):
            row = next((r for r in q.rows if r.point == label), None)
            if row is None or not row.tps_median:
                continue
            # the rate's interval (queries per second): its high end is the short time
            slow, fast = row.ci if row.ci and row.ok_runs >= 3 else (row.tps_min, row.tps_max)
            med = 1.0 / row.tps_median
            ys.append(len(found) - 1 - i + 0.4 - (j + 0.5) * step)
            secs.append(med)
            lows.append(max(med - 1.0 / fast, 0.0) if fast else 0.0)
            highs.append(max(1.0 / slow - med, 0.0) if slow and slow > 0 else 0.0)
        ax.barh(
            ys,
            secs,
            height=step,
            xerr=[lows, highs],
            capsize=2,
            alpha=0.85,
            color=PALETTE[j % len(PALETTE)],
            label=_short(label),
        )
    ax.set_yticks(range(len(found))[::-1], [f"Q{q.number}" for q in found], fontsize="small")
    ax.set_xscale("log")
    ax.set_xlabel("seconds (median of repeats; bars: 95% CI, or min–max under 3 repeats)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title("time per query per point (TPC-H-like power run)")
    name = next((q.chart for q in query_tables()), "queries")  # the kind's own name for it
    return Chart(name, "time per query per point", _png(fig))


def point_chart(pt: Point, number: int) -> Chart | None:
    """Six panels of the point's representative run; None without one."""
    from matplotlib import ticker

    run = pt.representative
    if run is None:
        return None
    canvas = _Canvas.get()
    fig, axes = canvas.fig, canvas.axes
    s = RunSeries(run)
    operations = progress_chart.is_operation_run(run)
    queries = queries_chart.is_queries_run(run)
    if operations:  # maintenance operations: their progress phases, not TPS and latency
        for ax, panel in zip(
            axes[0], (progress_chart.panel_progress, progress_chart.panel_rate), strict=True
        ):
            if not panel(ax, run, s.t0):
                _missing(ax, s, ax.get_title(), "no progress row recorded")
    elif queries:  # kit = "tpch": each query where it ran; no latency can exist
        if not queries_chart.panel_queries(axes[0][0], run, s.t0):
            _missing(axes[0][0], s, queries_chart.TITLE, "no query times recorded")
        axes[0][1].set_visible(False)
    else:
        _panel_tps(axes[0][0], s, [RunSeries(other) for other in pt.others])
        _panel_latency(axes[0][1], s)
    _panel_waits(axes[1][0], s)
    _panel_buffers(axes[1][1], s)
    _panel_cpu(axes[2][0], s, pgbench=not queries)  # no pgbench runs a TPC-H-like run
    _panel_disk(axes[2][1], s)
    for ax in axes[2]:
        ax.set_xlabel("seconds since the first measured phase started")
    for ax in fig.axes:  # fewer ticks: text is most of the drawing time
        ax.xaxis.set_major_locator(ticker.MaxNLocator(6))
        if ax.get_yscale() == "linear":
            ax.yaxis.set_major_locator(ticker.MaxNLocator(5))
    figure = "MB/s" if operations else "TPS"
    if queries:
        figure = "QthH" if "throughput" in run.metrics else "QphH"
    fig.suptitle(f"{pt.label} — run {run.id} (median {figure} of {len(pt.runs)} run(s))")
    title = f"{pt.label}: run {run.id} second by second"
    return Chart(f"point-{number:03d}", title, _png(fig), tuple(s.missing))


class _Canvas:
    """The six panels of a point chart (and the two twin axes), made once per process and
    cleared for each point: making axes and their ticks is most of what a chart costs."""

    _current: _Canvas | None = None

    def __init__(self) -> None:
        self.fig = _figure(figsize=(12, 10.5))
        self.fig.subplots_adjust(
            left=0.06, right=0.93, bottom=0.06, top=0.93, wspace=0.32, hspace=0.22
        )
        self.axes = self.fig.subplots(3, 2, sharex=True)
        for ax in (self.axes[1][1], self.axes[2][1]):
            _TWINS[id(ax)] = ax.twinx()

    @classmethod
    def get(cls) -> _Canvas:
        if cls._current is None:
            cls._current = cls()
        cls._current.clear()
        return cls._current

    def clear(self) -> None:
        for ax in self.fig.axes:
            ax.set_visible(True)  # a TPC-H-like point hides its latency panel
            for artist in [*ax.lines, *ax.collections, *ax.patches, *ax.texts]:
                artist.remove()
            legend = ax.get_legend()
            if legend is not None:
                legend.remove()
            ax.set_yscale("linear")
            ax.set_title("")
            ax.set_ylabel("")
            ax.relim()
            ax.set_autoscale_on(True)
        for twin in _TWINS.values():
            twin.set_visible(False)


# -- campaign charts ------------------------------------------------------------------------


def _tps_chart(rep: Report) -> Chart | None:
    pts = [pt for pt in rep.points if pt.row.tps_median is not None]
    if not pts:
        return None
    variants = {pt.row.variant for pt in pts}
    by_line: dict[str, list[tuple[float, Point]]] = defaultdict(list)
    for pt in pts:
        axes = pt.row.axes
        if "clients" not in axes:
            return _tps_bars(pts, _headline(rep))
        rest = " ".join(f"{k}={v}" for k, v in axes.items() if k != "clients")
        variant = pt.row.variant if len(variants) > 1 else ""
        key = " ".join(x for x in (variant, rest) if x) or "TPS"
        by_line[key].append((float(axes["clients"]), pt))
    if all(len(v) == 1 for v in by_line.values()):
        return _tps_bars(pts, _headline(rep))
    return _tps_vs_clients(by_line)


def _cores_chart(rep: Report) -> Chart | None:
    """TPS against the cores the server had ([matrix.os] cpus), a line per series."""
    by_line: dict[str, list[tuple[float, Point]]] = defaultdict(list)
    for pt in rep.points:
        if pt.on_cores is not None:
            by_line[_short(pt.on_cores.series)].append((float(pt.on_cores.cpus), pt))
    if not by_line:
        return None
    return _tps_vs_clients(by_line, "cores", waits=on_cores(rep))


def _tps_vs_clients(
    by_line: dict[str, list[tuple[float, Point]]],
    x: str = "clients",
    waits: list[Point] | None = None,
) -> Chart:
    """A line per series against ``x``; ``waits``: their points' top waits beside (cores)."""
    from matplotlib import ticker

    fig = _figure(figsize=(16 if waits else 10, 5.5), layout="constrained")
    ax = fig.add_subplot(1, 2 if waits else 1, 1)
    for i, (name, items) in enumerate(sorted(by_line.items())):
        items.sort(key=lambda x: x[0])
        xs = [c for c, _ in items]
        ys = [pt.row.tps_median or 0.0 for _, pt in items]
        low, high = zip(*(_spread(pt) for _, pt in items), strict=True)
        err = [
            [y - lo for y, lo in zip(ys, low, strict=True)],
            [hi - y for y, hi in zip(ys, high, strict=True)],
        ]
        ax.errorbar(
            xs, ys, yerr=err, marker="o", capsize=4, label=name, color=PALETTE[i % len(PALETTE)]
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({c for items in by_line.values() for c, _ in items}))
    ax.get_xaxis().set_major_formatter(ticker.ScalarFormatter())
    ax.set_xlabel(x)
    ax.set_ylabel("TPS (median of repeats; bars: 95% CI, or min–max under 3 repeats)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(f"TPS against {x}")
    if waits:
        cores_chart.panel_waits(fig.add_subplot(1, 2, 2), waits, PALETTE)
    return Chart(
        f"tps-vs-{x}", f"TPS against {x}" + (" and the top waits" if waits else ""), _png(fig)
    )


def _headline(rep: Report) -> str:
    """What the per-point and per-run charts draw: TPS, maintenance operations' MB/s, or
    kit = "tpch"'s QphH / QthH."""
    return rep.figure


def _tps_bars(pts: list[Point], figure: str = "TPS") -> Chart:
    fig = _figure(figsize=(10, 1.2 + 0.35 * len(pts)), layout="constrained")
    ax = fig.add_subplot()
    ys = list(range(len(pts)))[::-1]
    med = [pt.row.tps_median or 0.0 for pt in pts]
    low, high = zip(*(_spread(pt) for pt in pts), strict=True)
    err = [
        [m - lo for m, lo in zip(med, low, strict=True)],
        [hi - m for m, hi in zip(med, high, strict=True)],
    ]
    colors = [PALETTE[i % len(PALETTE)] for i in range(len(pts))]
    ax.barh(ys, med, xerr=err, capsize=3, color=colors, alpha=0.8)
    ax.set_yticks(ys, [_short(pt.label) for pt in pts], fontsize="small")
    ax.set_xlabel(f"{figure} (median of repeats; bars: 95% CI, or min–max under 3 repeats)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(f"{figure} per point")
    return Chart("tps-per-point", f"{figure} per point", _png(fig))


def _spread(pt: Point) -> tuple[float, float]:
    row = pt.row
    if row.ci and row.ok_runs >= 3:
        return max(row.ci[0], 0.0), row.ci[1]
    return row.tps_min or 0.0, row.tps_max or 0.0


def _runs_in_order(rep: Report) -> Chart | None:
    runs = sorted(rep.runs, key=lambda r: r.started_at or 0)
    if len(runs) < 2:
        return None
    labels = list(dict.fromkeys(r.label for r in runs))
    color = {lab: PALETTE[i % len(PALETTE)] for i, lab in enumerate(labels)}
    fig = _figure(figsize=(10, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for lab in labels:
        xs = [i for i, r in enumerate(runs, 1) if r.label == lab and r.ok]
        ys = [points.headline_value(r) or 0.0 for r in runs if r.label == lab and r.ok]
        ax.plot(xs, ys, "o-", color=color[lab], label=_short(lab), markersize=4, lw=0.8)
    failed = [i for i, r in enumerate(runs, 1) if not r.ok]
    if failed:
        ax.plot(failed, [0] * len(failed), "x", color="red", markersize=9, label="failed")
    ax.set_xlabel("run, in the order it ran")
    ax.set_ylabel(_headline(rep))
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if len(labels) <= 12:
        ax.legend(fontsize="x-small", ncols=2)
    figure = _headline(rep)
    ax.set_title(
        f"Every run's {figure} in the order the runs ran (drift across repeats shows here)"
    )
    return Chart("runs-in-order", f"Every run's {figure} in the order it ran", _png(fig))


def tune_history(tune: TuneSummary) -> Chart:
    """A tune study's optimization history: each measured trial's value, the best so far, and
    the trials that failed (the server refused them) along the bottom."""
    fig = _figure(figsize=(10, 4), layout="constrained")
    ax = fig.add_subplot()
    unit = "p99 latency, ms" if tune.spec.objective == "p99" else "TPS"
    ok = [(r.number, r.value) for r in tune.records if r.outcome == "ok" and r.value is not None]
    ax.scatter([n for n, _ in ok], [v for _, v in ok], color=PALETTE[0], zorder=3, label="trial")
    steps = [
        (r.number, b) for r, b in zip(tune.records, tune.best_so_far, strict=True) if b is not None
    ]
    if steps:
        ax.step(
            [n for n, _ in steps],
            [b for _, b in steps],
            where="post",
            color=PALETTE[1],
            label="best so far",
        )
    failed = [r.number for r in tune.records if r.outcome == "failed"]
    if failed:
        low = min((v for _, v in ok), default=0.0)
        ax.scatter(failed, [low] * len(failed), marker="x", color="#c00", label="failed")
    ax.set_xlabel("trial")
    ax.set_ylabel(unit)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(f"Optimization history of {tune.name}", loc="left")
    return Chart("tune-history", "Optimization history", _png(fig))


def _latency_chart(rep: Report) -> Chart | None:
    return latency_chart(rep.points)


def latency_chart(points: Sequence[Point]) -> Chart | None:
    """The latency percentiles per point: only their percentiles and labels, known as soon as
    every point's runs are read (``pglab report`` draws it then, before the statistics)."""
    pts = [pt for pt in points if pt.latency_ms]
    if not pts:
        return None
    fig = _figure(figsize=(10, 1.4 + 0.35 * len(pts)), layout="constrained")
    ax = fig.add_subplot()
    ys = list(range(len(pts)))[::-1]
    marks = {50.0: "o", 90.0: "s", 95.0: "^", 99.0: "D", 99.9: "v"}
    for i, (q, marker) in enumerate(marks.items()):
        ax.scatter(
            [pt.latency_ms[q] for pt in pts],
            ys,
            marker=marker,
            label=f"p{q:g}",
            color=PALETTE[i],
            zorder=3,
        )
    ax.hlines(
        ys,
        [pt.latency_ms[50.0] for pt in pts],
        [pt.latency_ms[99.9] for pt in pts],
        color="#999",
        lw=1,
    )  # one collection: a line per point costs a second at 200
    ax.set_xscale("log")
    ax.set_yticks(ys, [_short(pt.label) for pt in pts], fontsize="small")
    ax.set_xlabel("latency, ms (all measured transactions of the point's runs)")
    ax.grid(axis="x", alpha=0.3, which="both")
    ax.legend(
        fontsize="small", ncols=5, loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False
    )  # above the plot, right of the title
    ax.set_title("Latency percentiles per point", loc="left")
    return Chart("latency-percentiles", "Latency percentiles per point", _png(fig))


# -- a run, second by second ------------------------------------------------------------------


# -- helpers ----------------------------------------------------------------------------------


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():  # a name in a script the font lacks: drawn as boxes
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()
