"""Stored runs as tidy data: a row per run (or per measured phase), a column per factor and per
figure; per-second series in long form. What ``pglab export`` writes, for pandas, polars, R and
DuckDB.

The fixed columns are declared in ``COLUMNS`` (name, meaning), which the documentation's table
is made from; the factor columns that depend on the campaign follow them: ``setting.NAME`` for
every setting whose value varies between the runs (all non-default ones with ``all_settings``), and
``axis.NAME`` for every other matrix axis. Timestamps are ISO 8601 with the zone (UTC).

A row's values by column name are a ``dict[str, Cell]`` (``factors``: what defines a run's
point, ``pglab show --json`` gives it per point); a phase's stored series is read as a
``telemetry.base.Table`` (``phase_table``).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pglab.errors import LabError
from pglab.metric_units import phase_metric
from pglab.pgbench import latency as latency_hist
from pglab.records import TableJson
from pglab.rows import PhaseRow, StoredRun
from pglab.telemetry import pg_stats
from pglab.telemetry.base import Table as TelemetryTable
from pglab.telemetry.summary import phase_summary
from pglab.workloads import columns as figure_columns

if TYPE_CHECKING:  # the store's type only: its module is not imported to run this
    from pglab.store.base import Store

PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)

Cell = str | int | float | bool | None  # a value of a tidy table (a number, text or empty)


@dataclass(frozen=True)
class Column:
    name: str
    doc: str


def _pct_name(q: float) -> str:
    return f"latency_p{q:g}_ms".replace(".", "_")


COLUMNS: tuple[Column, ...] = (
    Column("run_id", "the run's id in the store"),
    Column("campaign", "campaign name"),
    Column("variant", "variant name"),
    Column("point", "the point's label (variant and matrix coordinates)"),
    Column("point_key", "the point's identity: runs of one point share it"),
    Column("repeat", "repeat number, from 1"),
    Column("status", "ok or failed"),
    Column("started_at", "when the run started, ISO 8601 UTC"),
    Column("finished_at", "when it ended, ISO 8601 UTC"),
    Column("phase", "the phase (with --by phase; else the measured phases together)"),
    Column("iteration", "the phase's iteration (with --by phase)"),
    Column("clients", "pgbench -c (of the measured phase)"),
    Column("threads", "pgbench -j as run"),
    Column("script", "script(s), with @weight when mixed; or the maintenance operation"),
    Column("scale", "pgbench scale of the dataset"),
    Column("rate", "pgbench -R target rate, tps (empty: unthrottled)"),
    Column("protocol", "pgbench -M"),
    Column("duration_s", "seconds the measured phase(s) ran"),
    Column("server_source", "embedded, bindir:PATH or existing"),
    Column("server_version", "PostgreSQL version the server reported"),
    Column("pgbench_version", "pgbench version"),
    Column("server", "an existing server's masked dsn (empty: a server pglab made)"),
    Column("client", "where pgbench ran relative to the server"),
    Column("data_storage", "storage target of PGDATA (empty: the lab home)"),
    Column("data_fstype", "filesystem of PGDATA"),
    Column("data_mount_options", "mount options of PGDATA"),
    Column("wal_storage", "storage target of pg_wal (empty: inside PGDATA)"),
    Column("wal_fstype", "filesystem of pg_wal"),
    Column("host", "the machine pglab (and pgbench) ran on"),
    Column(
        "tps",
        "transactions per second (mean of the measured phases); empty where the figure is not "
        f"one ({', '.join(figure_columns.NOT_TPS)})",
    ),
    Column("tps_steady", "TPS after the warm-up (MSER-5)"),
    Column("transactions", "transactions pgbench completed"),
    Column("failed", "transactions that failed"),
    Column("latency_avg_ms", "pgbench's mean latency"),
    *(
        Column(_pct_name(q), f"{q:g}th percentile of every transaction's latency")
        for q in PERCENTILES
    ),
    Column("wal_mb_s", "WAL written per second (pg_stat_wal)"),
    Column("fpi_share", "full-page images per WAL record"),
    Column("read_hit_ratio", "shared buffer hits / reads (pg_stat_database)"),
    Column("top_wait", "the most sampled wait event, type:event (CPU:running: none)"),
    Column("top_wait_pct", "its share of the sampled waits, %"),
    Column("buffers_checkpointer", "buffers written by the checkpointer"),
    Column("buffers_bgwriter", "buffers written by the background writer"),
    Column("buffers_backends", "buffers written by client backends"),
    Column("checkpoints", "checkpoints completed (from the server log)"),
    Column("cpu_user_pct", "machine CPU, user %"),
    Column("cpu_system_pct", "machine CPU, system %"),
    Column("cpu_iowait_pct", "machine CPU, iowait %"),
    Column("pgbench_cpu_pct", "pgbench's CPU, % of one core"),
    Column("disk_read_mb_s", "read MB/s of PGDATA's and pg_wal's devices"),
    Column("disk_write_mb_s", "written MB/s of those devices"),
    Column("error", "why a failed run failed"),
)
NAMES = tuple(c.name for c in COLUMNS)
# the kinds' figures (run metrics, workloads/KIND/metrics.py) as they declare them: columns
# after COLUMNS when a run of the table has them (the store's pglab_runs view keeps COLUMNS only)
KIT_COLUMNS = tuple(Column(name, doc) for name, doc in figure_columns.COLUMNS)
KIT_FIGURES = tuple(c.name for c in KIT_COLUMNS)


@dataclass(frozen=True)
class TidyTable:
    """A tidy table: its columns, and a row of cells per run (phase, script, …)."""

    columns: list[str]
    rows: list[list[Cell]]


def iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat()


# -- what the report reads too ---------------------------------------------------------------


def measured_phases(run: StoredRun) -> list[int]:
    """Indexes of the measured phase iterations of a stored run."""
    return [p.idx for p in run.phases if p.measured]


def table(run: StoredRun, idx: int, kind: str) -> TableJson:
    """A stored series table of a phase as stored (``rows.Series``: its ``columns`` and
    ``rows``), ``{"columns": [], "rows": []}`` when absent."""
    return run.series.get(str(idx), {}).get(kind) or {"columns": [], "rows": []}


def phase_table(run: StoredRun, idx: int, kind: str) -> TelemetryTable:
    """A stored series table of a phase as a ``Table`` (no columns nor rows when absent)."""
    found = run.series.get(str(idx), {}).get(kind)
    return TelemetryTable.from_json(found) if found else TelemetryTable([])


def row_histogram(tab: TelemetryTable, row: list[Any]) -> latency_hist.Histogram:
    """The histogram of one per-second latency row (empty for aggregate-only logs)."""
    if "histogram" not in tab.columns:
        return ()
    return row[tab.columns.index("histogram")] or ()  # [bucket, count] lists: merge takes them


def sampling_rate(phase: PhaseRow) -> float | None:
    """The share of the phase's transactions its per-transaction log kept (pgbench
    --sampling-rate, ``sampling_rate``): its percentiles and per-second counts are of that
    sample; None when it kept every one."""
    for arg in phase.argv:
        if arg.startswith("--sampling-rate="):
            return float(arg.split("=", 1)[1])
    return None


def logged_histogram(run: StoredRun, idx: int) -> latency_hist.Histogram:
    """A phase's logged latencies as one histogram, its per-second ones merged: a sample's
    own counts where the log kept a sample (what its percentiles' intervals need)."""
    tab = phase_table(run, idx, "latency")
    return latency_hist.merge(row_histogram(tab, row) for row in tab.rows)


def phase_histogram(run: StoredRun, idx: int) -> latency_hist.Histogram:
    """A phase's latencies as one histogram, a sampled log's counts weighted by 1/rate, so
    that the phases and runs of a point (a first run that logged every transaction, later ones
    a sample) merge in proportion to the transactions they ran."""
    hist = logged_histogram(run, idx)
    phase = next((p for p in run.phases if p.idx == idx), None)
    rate = sampling_rate(phase) if phase is not None else None
    return latency_hist.scaled(hist, 1 / rate) if rate else hist


def percentiles(runs: Sequence[StoredRun], idxs: dict[int, list[int]]) -> dict[float, float]:
    """Latency percentiles (ms) over every transaction of the runs' phases ``idxs[run.id]``,
    from their per-second histograms merged (never percentiles averaged; sampled logs weighted
    by 1/rate: ``phase_histogram``)."""
    hist = latency_hist.merge(
        phase_histogram(run, idx) for run in runs for idx in idxs.get(run.id, [])
    )
    return {q: latency_hist.percentile(hist, q) for q in PERCENTILES} if hist else {}


# -- runs ----------------------------------------------------------------------------------------


def runs_table(
    runs: Sequence[StoredRun], by_phase: bool = False, all_settings: bool = False
) -> TidyTable:
    """A row per run (``by_phase``: per measured phase iteration), the ``COLUMNS``, the
    ``KIT_COLUMNS`` some run has, then a ``setting.NAME`` column per setting that varies
    (``all_settings``: every non-default one) and an ``axis.NAME`` column per other matrix
    axis."""
    settings = _setting_names(runs, all_settings)
    axes = list(dict.fromkeys(k for r in runs for k in r.axes if not k.startswith("settings.")))
    kit = [k for k in KIT_FIGURES if any(k in r.metrics for r in runs)]
    columns = [*NAMES, *kit, *(f"setting.{n}" for n in settings), *(f"axis.{a}" for a in axes)]
    rows = []
    for run in runs:
        groups = [[i] for i in measured_phases(run)] if by_phase else [measured_phases(run)]
        for idxs in groups or [[]]:
            values = _figures(run, idxs, by_phase)
            values.update(_factors(run, idxs))
            row = [values.get(n) for n in (*NAMES, *kit)]
            own = _settings_of(run)
            row += [own.get(n) for n in settings]
            row += [run.axes.get(a) for a in axes]
            rows.append(row)
    return TidyTable(columns, rows)


FACTORS = (
    "clients",
    "threads",
    "script",
    "scale",
    "rate",
    "protocol",
    "server_source",
    "server_version",
    "pgbench_version",
    "server",
    "client",
    "data_storage",
    "data_fstype",
    "data_mount_options",
    "wal_storage",
    "wal_fstype",
    "host",
)


def factors(run: StoredRun) -> dict[str, Cell]:
    """What defines a run's point, as the export's factor columns: ``FACTORS``, then
    ``setting.NAME`` for each setting the campaign sets and ``axis.NAME`` for the other axes
    (``pglab show --json`` gives it per point)."""
    found = _factors(run, measured_phases(run))
    out = {k: found.get(k) for k in FACTORS}
    chosen = _settings_of(run)
    for name in _setting_names([run], all_settings=False):
        out[f"setting.{name}"] = chosen.get(name)
    for axis, value in run.axes.items():
        if not axis.startswith("settings."):
            out[f"axis.{axis}"] = value
    return out


def _settings_of(run: StoredRun) -> dict[str, str]:
    """The run's settings: the campaign's (as written) over the server's non-defaults."""
    fp = run.fingerprint.get("settings") or {}
    out = {n: str(s.get("shown", s.get("setting"))) for n, s in fp.items()}
    server = run.spec.get("server") or {}
    out.update({str(n): str(v) for n, v in server.get("settings") or []})
    out.update({str(n): str(v) for n, v in (run.spec.get("lab_settings") or {}).items()})
    return out


def _setting_names(runs: Sequence[StoredRun], all_settings: bool) -> list[str]:
    """Settings a campaign chose (in any run), with those whose value differs between runs;
    with ``all_settings`` every one any run reported."""
    chosen: dict[str, set[str]] = {}
    for run in runs:
        server = run.spec.get("server") or {}
        for n, v in server.get("settings") or []:
            chosen.setdefault(str(n), set()).add(str(v))
    if not all_settings:
        return sorted(chosen)
    names = set(chosen)
    for run in runs:
        names |= set(run.fingerprint.get("settings") or {})
    return sorted(names)


def _factors(run: StoredRun, idxs: list[int]) -> dict[str, Cell]:
    spec, fp = run.spec, run.fingerprint
    phases = {p.idx: p for p in run.phases}
    spec_phases = spec.get("phases") or []
    measured = next((p for p in spec_phases if p.get("measured", True)), None) or (
        spec_phases[0] if spec_phases else {}
    )
    if idxs and idxs[0] in phases:  # the measured phase that ran: its own spec
        name = phases[idxs[0]].name
        measured = next((p for p in spec_phases if p.get("name") == name), measured)
    server = spec.get("server") or {}
    storage = spec.get("storage") or {}
    data_mount = fp.get("pgdata_mount") or {}
    wal_mount = fp.get("pg_wal_mount") or {}
    threads = None
    if idxs and idxs[0] in phases:
        argv = phases[idxs[0]].argv
        threads = int(argv[argv.index("-j") + 1]) if "-j" in argv else None
    scripts = measured.get("scripts") or []
    script = "+".join(
        (s.get("builtin") or s.get("label") or str(s.get("path", "")).rsplit("/", 1)[-1])
        + (f"@{s.get('weight')}" if len(scripts) > 1 else "")
        for s in scripts
    )
    own: Mapping[str, Any] = measured  # with its kind's own keys (stored_spec.PhaseJson)
    if own.get("kit"):  # a kit's scripts by the kit's name, as the spec's script_label
        script = f"{own['kit']} ({own.get('mode')})"
    if own.get("operation"):  # a maintenance operation: no pgbench script nor clients
        script, measured = str(own["operation"]), {}
    return {
        "clients": measured.get("clients"),
        "threads": threads,
        "script": script or None,
        "scale": (spec.get("dataset") or {}).get("scale"),
        "rate": measured.get("rate"),
        "protocol": measured.get("protocol"),
        "server_source": "existing" if server.get("dsn") else fp.get("source"),
        "server_version": fp.get("server_version"),
        "pgbench_version": fp.get("pgbench_version"),
        "server": server.get("dsn"),
        "client": fp.get("client"),
        "data_storage": ((storage.get("data") or {}).get("name")),
        "data_fstype": data_mount.get("fstype"),
        "data_mount_options": data_mount.get("options") or data_mount.get("mount_options"),
        "wal_storage": ((storage.get("wal") or {}).get("name")),
        "wal_fstype": wal_mount.get("fstype"),
        "host": fp.get("hostname"),
    }


def _figures(run: StoredRun, idxs: list[int], by_phase: bool) -> dict[str, Cell]:
    phases = [p for p in run.phases if p.idx in idxs]
    out: dict[str, Cell] = {
        "run_id": run.id,
        "campaign": run.campaign,
        "variant": run.variant,
        "point": run.label,
        "point_key": run.point_key,
        "repeat": run.repeat,
        "status": run.status,
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
        "error": run.error,
    }
    if by_phase and phases:
        out["phase"], out["iteration"] = phases[0].name, phases[0].iteration
        out["tps"] = phases[0].tps
        out["latency_avg_ms"] = phases[0].latency_avg_ms
        out["tps_steady"] = run.metrics.get(phase_metric(phases[0].name, "tps_steady"))
        for key in KIT_FIGURES:
            out[key] = run.metrics.get(phase_metric(phases[0].name, key))
    else:
        out["phase"] = "+".join(dict.fromkeys(p.name for p in phases)) or None
        out["tps"] = run.tps
        out["latency_avg_ms"] = run.metrics.get("latency_avg_ms")
        out["tps_steady"] = run.metrics.get("tps_steady")
        for key in KIT_FIGURES:
            out[key] = run.metrics.get(key)
    if phases:
        out["duration_s"] = sum(p.elapsed_s for p in phases)
        out["transactions"] = sum(p.transactions or 0 for p in phases)
        out["failed"] = sum(p.failed or 0 for p in phases)
    for q, v in percentiles([run], {run.id: idxs}).items():
        out[_pct_name(q)] = v
    out.update(_telemetry(run, phases))
    return out


_SUMMED = ("buffers_checkpointer", "buffers_bgwriter", "buffers_backends", "checkpoints")
_MEANS = (
    "wal_mb_s",
    "read_hit_ratio",
    "cpu_user_pct",
    "cpu_system_pct",
    "cpu_iowait_pct",
    "pgbench_cpu_pct",
    "disk_read_mb_s",
    "disk_write_mb_s",
)


def _telemetry(run: StoredRun, phases: list[PhaseRow]) -> dict[str, float | str]:
    """Telemetry figures over the phases: counters summed, rates and ratios averaged; the top
    wait over every sample; the FPI share from the WAL counters."""
    summaries = []
    fpi = records = 0.0
    waits: dict[str, float] = {}
    for p in phases:
        stored = run.series.get(str(p.idx), {})
        if not stored:
            continue
        summary = phase_summary(stored, p.elapsed_s)
        summaries.append(summary["figures"])
        for name, pct, _ in summary["top_waits"]:
            waits[name] = waits.get(name, 0.0) + pct / len(phases)
        tables = {k: TelemetryTable.from_json(v) for k, v in stored.items() if "columns" in v}
        wal = pg_stats.phase_delta(tables, "pg.wal")
        if wal.get("wal_records"):
            fpi += float(wal.get("wal_fpi") or 0)
            records += float(wal["wal_records"])
    out: dict[str, float | str] = {}
    for key in _SUMMED:
        found = [f[key] for f in summaries if key in f]
        if found:
            out[key] = sum(found)
    for key in _MEANS:
        found = [f[key] for f in summaries if key in f]
        if found:
            out[key] = statistics.fmean(found)
    if records:
        out["fpi_share"] = fpi / records
    if waits:
        top = max(waits, key=lambda k: waits[k])
        out["top_wait"], out["top_wait_pct"] = top, waits[top]
    return out


# -- series ----------------------------------------------------------------------------------------

SERIES_COLUMNS = ["run_id", "phase", "iteration", "kind", "t", "label", "metric", "value"]
NOT_SERIES = frozenset({"pg.snapshots"})  # a phase's before and after, not per second


def series_kinds(runs: Sequence[StoredRun]) -> list[str]:
    """The per-second kinds the runs keep (tables with a time column: ``t`` or ``epoch``)."""
    kinds = set()
    for run in runs:
        for stored in run.series.values():
            kinds |= {
                k
                for k, v in stored.items()
                if _time_column(v.get("columns") or []) is not None and k not in NOT_SERIES
            }
    return sorted(kinds)


def _time_column(cols: list[str]) -> int | None:
    return next((cols.index(c) for c in ("t", "epoch") if c in cols), None)


def series_table(runs: Sequence[StoredRun], kind: str | None = None) -> TidyTable:
    """Every per-second table in long form: a row per (run, phase, second, metric) with a
    number; a row's text columns (a wait event's type and name, a table's) joined by "." are
    its ``label`` (empty without). The store's ``pglab_series`` view gives the same rows."""
    known = series_kinds(runs)
    if kind is not None and kind not in known:
        raise LabError(
            f"no per-second series {kind!r} in these runs",
            hint="the kinds they keep: " + ", ".join(known) if known else "they keep none",
        )
    rows: list[list[Any]] = []
    for run in runs:
        names = {p.idx: (p.name, p.iteration) for p in run.phases}
        for idx, stored in sorted(run.series.items(), key=lambda kv: int(kv[0])):
            phase, iteration = names.get(int(idx), (None, None))
            for k, tab in sorted(stored.items()):
                if (kind is not None and k != kind) or k not in known:
                    continue
                rows += _long(run.id, phase, iteration, k, TelemetryTable.from_json(tab))
    return TidyTable(SERIES_COLUMNS, rows)


def _long(
    run_id: int, phase: str | None, iteration: int | None, kind: str, tab: TelemetryTable
) -> list[list[Any]]:
    cols = tab.columns
    t_at = _time_column(cols)
    assert t_at is not None  # series_kinds keeps only these
    out = []
    for row in tab.rows:
        label = ".".join(v for v in row if isinstance(v, str)) or None
        for i, value in enumerate(row):
            if i == t_at or isinstance(value, bool) or not isinstance(value, int | float):
                continue
            out.append([run_id, phase, iteration, kind, row[t_at], label, cols[i], value])
    return out


def refresh(store: Store, campaign: str, loaded: Sequence[StoredRun] = ()) -> int:
    """Store the tidy row of every run of ``campaign`` that has none yet (or one made by
    another pglab): what the store's ``pglab_runs`` view shows. ``loaded``: runs already read
    (not read again). The number written."""
    ids = store.runs_without_tidy(campaign)
    have = {r.id: r for r in loaded}
    rows = {}
    for run_id in ids:
        run = have.get(run_id) or store.get_run(run_id)
        if run is not None:
            table = runs_table([run])
            rows[run_id] = dict(zip(table.columns, table.rows[0], strict=True))
    store.save_tidy(rows)
    return len(rows)


def docs_table() -> str:
    """The export's columns as a Markdown table, for the documentation (made at its build)."""
    lines = ["| column | meaning |", "|---|---|"]
    lines += [f"| `{c.name}` | {c.doc} |" for c in COLUMNS]
    lines += [f"| `{c.name}` | {c.doc} (when a run has it) |" for c in KIT_COLUMNS]
    lines.append(
        "| `setting.NAME` | each setting the campaign sets, as set (empty: the server's "
        "default; `--all-settings`: every non-default one the server reported) |"
    )
    lines.append("| `axis.NAME` | each other matrix axis (clients, script, …) |")
    return "\n".join(lines)
