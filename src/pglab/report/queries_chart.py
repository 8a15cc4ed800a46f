"""The first panel of a point's chart when its run is kit = "tpch"'s (a power run, or a
throughput run's streams): no per-second TPS and no latency log can exist for it, so in their
place each query of the run is a bar where it ran on the time axis (from its start to its end,
as long as its seconds), as tall as its seconds (a stream per colour), and the latency panel is
hidden. Drawn as PNG (``pglab report --png``) or as numbers for the page (``series``); the
telemetry panels beneath are the usual ones.

The page's numbers are a ``QueryStream`` per stream (JSON in the page,
``browser.PointData["queries"]``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from pglab.analysis.tidy import measured_phases, table
from pglab.rows import StoredRun
from pglab.workloads import query_tables

if TYPE_CHECKING:
    from matplotlib.axes import Axes

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
TITLE = "Each query: its seconds, drawn where it ran (timeouts hatched)"


class QueryStream(TypedDict):
    """A stream's queries in the order they ran: each one's start (seconds since the run's
    start), seconds, number and whether it timed out."""

    name: str  # the phase's name, and "stream N" when it had several
    start: list[float]
    seconds: list[float]
    query: list[int]
    timed_out: list[bool]


def is_queries_run(run: StoredRun) -> bool:
    """Whether the run's measured phases are kit = "tpch"'s power or throughput runs."""
    idxs = measured_phases(run)
    kinds = [name for q in query_tables() for name in (q.single, q.streams)]
    return bool(idxs) and all(any(k in run.series.get(str(i), {}) for k in kinds) for i in idxs)


def series(run: StoredRun, t0: float) -> list[QueryStream]:
    """A stream per measured phase and stream (a power run is one): each query's start (s
    since ``t0``), seconds, number and whether it timed out, in the order it ran (a stream's
    queries run one after another from the phase's start)."""
    phases = {p.idx: p for p in run.phases}
    out = []
    for idx in measured_phases(run):
        start = (phases[idx].started_at or t0) - t0
        by_stream: dict[int, list[tuple[int, float, bool]]] = {}  # (query, seconds, timed out)
        kept = run.series.get(str(idx), {})
        for q in query_tables():
            if q.single in kept:  # one session: a stream
                found = table(run, idx, q.single)["rows"]
                by_stream[0] = [(int(r[0]), float(r[1]), bool(r[3])) for r in found]
            elif q.streams in kept:
                for r in table(run, idx, q.streams)["rows"]:
                    by_stream.setdefault(int(r[0]), []).append((int(r[1]), float(r[2]), bool(r[4])))
        for stream, rows in sorted(by_stream.items()):
            at, starts = start, []
            for _, secs, _ in rows:
                starts.append(round(at, 3))
                at += secs
            name = phases[idx].name + (f" stream {stream}" if len(by_stream) > 1 else "")
            out.append(
                QueryStream(
                    name=name,
                    start=starts,
                    seconds=[round(secs, 4) for _, secs, _ in rows],
                    query=[n for n, _, _ in rows],
                    timed_out=[late for _, _, late in rows],
                )
            )
    return out


def panel_queries(ax: Axes, run: StoredRun, t0: float) -> int:
    """The queries as bars where they ran (see the module); the bars drawn."""
    drawn = 0
    for i, st in enumerate(series(run, t0)):
        color = COLORS[i % len(COLORS)]
        bars = ax.bar(
            st["start"],
            st["seconds"],
            width=st["seconds"],
            align="edge",
            color=color,
            alpha=0.75,
            label=st["name"],
            edgecolor="white",
        )
        for bar, out in zip(bars, st["timed_out"], strict=True):
            if out:
                bar.set_hatch("//")
        drawn += len(st["seconds"])
    ax.set_title(TITLE, fontsize="medium")
    ax.set_ylabel("seconds")
    if drawn:
        ax.legend(fontsize="x-small", loc="upper left")
    return drawn
