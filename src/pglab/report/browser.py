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
"""

from __future__ import annotations

import re
from typing import Any

from pglab.report import progress_chart, queries_chart
from pglab.report.model import Point
from pglab.report.series import RunSeries

TOP_WAITS = 7
XY = list[list[float | None]]


def _xy(xs: list[float], ys: list[Any], digits: int = 3) -> XY:
    return [[round(x, 2) for x in xs], [None if y is None else round(float(y), digits) for y in ys]]


def _pair(found: tuple[list[float], list[float]] | None, scale: float = 1.0) -> XY | None:
    if found is None:
        return None
    return _xy(found[0], [y * scale if y is not None else None for y in found[1]])


def _name(text: str) -> str:
    return re.sub(r"[<>&]", "", text)[:60]


def point_data(pt: Point) -> dict[str, Any] | None:
    """The point's panels as plain numbers (None without a representative run)."""
    run = pt.representative
    if run is None:
        return None
    s = RunSeries(run)
    out: dict[str, Any] = {"run": run.id, "runs": len(pt.runs), "missing": []}
    tps = s.column("progress", "tps")
    out["tps"] = _pair(tps)
    if tps is None:
        out["missing"].append("TPS: no per-second progress recorded")
    out["others"] = [_pair(xy) for o in pt.others if (xy := RunSeries(o).column("progress", "tps"))]
    out["scripts"] = [_pair(xy) for xy in s.script_tps().values()]
    out["checkpoints"] = [[round(a, 2), round(b, 2)] for a, b in s.checkpoint_spans()]
    out["phases"] = [round(p.started_at - s.t0, 2) for p in s.phases[1:]]
    cols, rows = s.rows("latency")
    names = [c for c in ("p50_ms", "p95_ms", "p99_ms", "max_ms") if c in cols]
    out["latency"] = {
        c.removesuffix("_ms"): _xy([x for x, _ in rows], [r[cols[c]] for _, r in rows])
        for c in names
        if rows
    }
    if not out["latency"]:
        out["missing"].append("Latency percentiles: no per-transaction latency log")
    out["waits"] = _waits(s)
    if out["waits"] is None:
        out["missing"].append("Wait events: no wait event samples")
    out["buffers"] = {  # fmt: skip
        "checkpointer": _pair(s.column("pg.checkpointer", "buffers_written")),
        "bgwriter": _pair(s.column("pg.bgwriter", "buffers_clean")),
        "backends": _pair(
            s.summed("pg.io", "writes", _client_writes)
            or s.column("pg.bgwriter", "buffers_backend")
        ),
    }
    out["wal_mb_s"] = _pair(s.column("pg.wal", "wal_bytes"), 1e-6)
    if not any(out["buffers"].values()) and out["wal_mb_s"] is None:
        out["missing"].append("Buffers and WAL: no statistics samples")
    out["cpu"], out["pgbench_cpu"] = _cpu(s)
    if not out["cpu"]:
        out["missing"].append("CPU: no OS CPU samples")
    out["disk"] = {"read": _pair(s.summed("os.disk", "read_mb_s")),
                   "write": _pair(s.summed("os.disk", "write_mb_s"))}  # fmt: skip
    out["dirty_mb"] = _pair(s.column("os.mem", "dirty_mb"))
    if not any(out["disk"].values()) and out["dirty_mb"] is None:
        out["missing"].append("Disk and memory: no OS disk or memory samples")
    if queries_chart.is_queries_run(run):  # kit = "tpch": its queries where TPS goes
        out["queries"] = queries_chart.series(run, s.t0)
        out["missing"] = [m for m in out["missing"] if not m.startswith(("TPS", "Latency"))]
        if not out["queries"]:
            out["missing"].insert(0, "Queries: no query times recorded")
    if progress_chart.is_operation_run(run):  # its progress phases where TPS and latency go
        out["progress"] = progress_chart.series(run, s.t0)
        out["missing"] = [m for m in out["missing"] if not m.startswith(("TPS", "Latency"))]
        if not out["progress"]:
            out["missing"].insert(0, "Progress phases: no progress row recorded")
    return out


def script_names(pt: Point) -> list[str]:
    """The names of the scripts the TPS panel draws, in its order (the page lists them)."""
    if pt.representative is None:
        return []
    return list(RunSeries(pt.representative).script_tps())


def _client_writes(cols: dict[str, int], r: list[Any]) -> bool:
    return bool(r[cols["backend_type"]] == "client backend" and r[cols["object"]] == "relation")


def _waits(s: RunSeries) -> dict[str, Any] | None:
    """The most sampled wait events (and the rest as "other"), sessions per second, stacked."""
    found = s.waits_stacked(TOP_WAITS)
    if found is None:
        return None
    xs, top, layers = found
    return {"x": [round(x, 2) for x in xs], "names": [_name(n) for n in top],
            "layers": [[round(v, 3) for v in layer] for layer in layers]}  # fmt: skip


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
