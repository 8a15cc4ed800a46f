"""The numbers of a point's six panels for the page to draw in the browser (plotly.js, inlined),
when the point is opened and scrolled to: a report of 1,000 runs is not 200 PNGs drawn by
matplotlib first. The panels are those of ``charts.point_chart`` (which still draws them as PNG
for ``pglab report --png``): TPS (the other repeats beside it, each script of a mix, checkpoints
and phase starts), latency percentiles, wait events stacked, buffers written and WAL, CPU and
pgbench's share, disk throughput and dirty memory; for a run of maintenance operations, its
progress phases and their rates (``progress``) in place of TPS and latency; for kit = "tpch"'s
runs, each query where it ran (``queries``) in place of TPS, and no latency panel. A panel whose
series was not recorded is named in ``missing`` instead of drawn empty.

Only numbers and names PostgreSQL and pgbench gave go in (wait events, backend types); a
script's name is its number (the page lists the names, escaped), and every ``<``, ``>`` and
``&`` is taken out of the names that go in, since plotly.js reads a few HTML tags in its text.

The numbers are a ``PointData`` (JSON in the page, read by ``points.js``), its panels' series
each ``[xs, ys]`` (``XY``), the wait events a ``Waits``.
"""

from __future__ import annotations

import re
from typing import Any, NotRequired, TypedDict

from pglab.report import progress_chart, queries_chart
from pglab.report.flames import Flame, FlameDiff
from pglab.report.model import Point
from pglab.report.progress_chart import ProgressLine
from pglab.report.queries_chart import QueryStream
from pglab.report.series import RunSeries
from pglab.rows import StoredRun

TOP_WAITS = 7
XY = list[list[float | None]]  # [xs, ys]: seconds since the run's start, values (None: a gap)


class Waits(TypedDict):
    """The most sampled wait events (the rest as "other"), sessions per second, stacked."""

    x: list[float]
    names: list[str]
    layers: list[list[float]]  # a layer per name, a value per x


class PointData(TypedDict):
    """A point's panels as the page draws them (``point_data``), and its flame graphs
    (``flames.add``)."""

    run: int  # the representative run's id
    runs: int  # the point's runs
    missing: list[str]  # the panels not drawn, each with why
    tps: XY | None
    others: list[XY | None]  # the other repeats' TPS
    scripts: list[XY | None]  # each script's TPS, in ``script_names``'s order
    checkpoints: list[list[float]]  # [start, end] of each
    phases: list[float]  # where each phase after the first starts
    latency: dict[str, XY]  # "p50", "p95", "p99", "max"
    waits: Waits | None
    buffers: dict[str, XY | None]  # written by "checkpointer", "bgwriter", "backends"
    wal_mb_s: XY | None
    cpu: dict[str, XY]  # "user", "system", "iowait", "steal"
    pgbench_cpu: XY | None
    disk: dict[str, XY | None]  # "read", "write" MB/s
    dirty_mb: XY | None
    queries: NotRequired[list[QueryStream]]  # kit = "tpch"
    progress: NotRequired[list[ProgressLine]]  # maintenance operations
    flame: NotRequired[Flame]  # a profiled run
    flame_diff: NotRequired[FlameDiff]  # ... against the baseline point's


def _xy(xs: list[float], ys: list[Any], digits: int = 3) -> XY:
    return [[round(x, 2) for x in xs], [None if y is None else round(float(y), digits) for y in ys]]


def _pair(found: tuple[list[float], list[float]] | None, scale: float = 1.0) -> XY | None:
    if found is None:
        return None
    return _xy(found[0], [y * scale if y is not None else None for y in found[1]])


def _name(text: str) -> str:
    return re.sub(r"[<>&]", "", text)[:60]


def point_data(pt: Point) -> PointData | None:
    """The point's panels as plain numbers (None without a representative run)."""
    run = pt.representative
    if run is None:
        return None
    s = RunSeries(run)
    missing: list[str] = []
    tps = s.column("progress", "tps")
    if tps is None:
        missing.append("TPS: no per-second progress recorded")
    cols, rows = s.rows("latency")
    names = [c for c in ("p50_ms", "p95_ms", "p99_ms", "max_ms") if c in cols]
    latency = {
        c.removesuffix("_ms"): _xy([x for x, _ in rows], [r[cols[c]] for _, r in rows])
        for c in names
        if rows
    }
    if not latency:
        missing.append("Latency percentiles: no per-transaction latency log")
    waits = _waits(s)
    if waits is None:
        missing.append("Wait events: no wait event samples")
    buffers, wal = _buffers(s), _pair(s.column("pg.wal", "wal_bytes"), 1e-6)
    if not any(buffers.values()) and wal is None:
        missing.append("Buffers and WAL: no statistics samples")
    cpu, pgbench_cpu = _cpu(s)
    if not cpu:
        missing.append("CPU: no OS CPU samples")
    disk = {
        "read": _pair(s.summed("os.disk", "read_mb_s")),
        "write": _pair(s.summed("os.disk", "write_mb_s")),
    }
    dirty = _pair(s.column("os.mem", "dirty_mb"))
    if not any(disk.values()) and dirty is None:
        missing.append("Disk and memory: no OS disk or memory samples")
    out = PointData(
        run=run.id,
        runs=len(pt.runs),
        missing=missing,
        tps=_pair(tps),
        others=[_pair(xy) for o in pt.others if (xy := RunSeries(o).column("progress", "tps"))],
        scripts=[_pair(xy) for xy in s.script_tps().values()],
        checkpoints=[[round(a, 2), round(b, 2)] for a, b in s.checkpoint_spans()],
        phases=[round(p.started_at - s.t0, 2) for p in s.phases[1:]],
        latency=latency,
        waits=waits,
        buffers=buffers,
        wal_mb_s=wal,
        cpu=cpu,
        pgbench_cpu=pgbench_cpu,
        disk=disk,
        dirty_mb=dirty,
    )
    _instead_of_tps(out, run, s.t0)
    return out


def _instead_of_tps(out: PointData, run: StoredRun, t0: float) -> None:
    """What a run without TPS draws in its place: kit = "tpch"'s queries, maintenance
    operations' progress phases (and their TPS and latency are not missing)."""
    if queries_chart.is_queries_run(run):  # kit = "tpch": its queries where TPS goes
        out["queries"] = queries_chart.series(run, t0)
        out["missing"] = [m for m in out["missing"] if not m.startswith(("TPS", "Latency"))]
        if not out["queries"]:
            out["missing"].insert(0, "Queries: no query times recorded")
    if progress_chart.is_operation_run(run):  # its progress phases where TPS and latency go
        out["progress"] = progress_chart.series(run, t0)
        out["missing"] = [m for m in out["missing"] if not m.startswith(("TPS", "Latency"))]
        if not out["progress"]:
            out["missing"].insert(0, "Progress phases: no progress row recorded")


def _buffers(s: RunSeries) -> dict[str, XY | None]:
    """Buffers written per second by the checkpointer, the background writer and the client
    backends (``pg_stat_io``'s relation writes, else ``pg_stat_bgwriter``'s)."""
    return {
        "checkpointer": _pair(s.column("pg.checkpointer", "buffers_written")),
        "bgwriter": _pair(s.column("pg.bgwriter", "buffers_clean")),
        "backends": _pair(
            s.summed("pg.io", "writes", _client_writes)
            or s.column("pg.bgwriter", "buffers_backend")
        ),
    }


def script_names(pt: Point) -> list[str]:
    """The names of the scripts the TPS panel draws, in its order (the page lists them)."""
    if pt.representative is None:
        return []
    return list(RunSeries(pt.representative).script_tps())


def _client_writes(cols: dict[str, int], r: list[Any]) -> bool:
    return bool(r[cols["backend_type"]] == "client backend" and r[cols["object"]] == "relation")


def _waits(s: RunSeries) -> Waits | None:
    """The most sampled wait events (and the rest as "other"), sessions per second, stacked."""
    found = s.waits_stacked(TOP_WAITS)
    if found is None:
        return None
    xs, top, layers = found
    return Waits(
        x=[round(x, 2) for x in xs],
        names=[_name(n) for n in top],
        layers=[[round(v, 3) for v in layer] for layer in layers],
    )


def _cpu(s: RunSeries) -> tuple[dict[str, XY], XY | None]:
    cols, rows = s.rows("os.cpu")
    if not rows:
        return {}, None
    xs = [x for x, _ in rows]
    stacked = {
        c.removesuffix("_pct"): _xy(xs, [r[cols[c]] or 0 for _, r in rows], 1)
        for c in ("user_pct", "system_pct", "iowait_pct", "steal_pct")
        if c in cols
    }
    cpus = s.run.fingerprint.get("cpus") or 1
    return stacked, _pair(s.column("os.procs", "pgbench_cpu_pct"), 1 / cpus)
