"""How records become store rows and back: a run's row, its phases' and its series (columnar
JSON), and the small conversions every value goes through (finite reals, text without NULs)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, fields
from typing import Any

import orjson

from pglab import __version__, stored_spec
from pglab.records import (
    SERIES_KINDS,
    PgbenchReport,
    PhaseResult,
    RunResult,
    StorageResult,
    StorageRow,
    TableJson,
)
from pglab.rows import PhaseRow, RunRow, Series, StoredRun
from pglab.store.columns import PhaseColumns, RunColumns, RunFullRow, RunListRow, StorageColumns
from pglab.store.numbers import metrics_json, metrics_of, timings_json, timings_of


def encode_run(
    run: RunResult,
) -> tuple[RunColumns, list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The rows of a run (column -> value), of its phases and of its series, without ids."""
    if run.status not in ("ok", "failed"):
        raise ValueError(f"run status must be 'ok' or 'failed', not {run.status!r}")
    # the run's TPS: of its measured phases whose figure is one (an operation's MB/s, a power
    # run's QphH are their kind's metrics, under their own names: ``tps`` is then NULL)
    measured = [p.report.tps for p in run.phases if p.measured and p.report.figure == "tps"]
    run_row: RunColumns = {
        "run_key": run.run_key,
        "point_key": run.point_key,
        "repeat": run.repeat,
        "variant": run.variant,
        "label": run.label,
        "status": run.status,
        "error": None if run.error is None else text(run.error),
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "stored_at": time.time(),
        # a failed run's phases are a partial picture: no TPS that a listing could mistake
        "tps": real(sum(measured) / len(measured)) if measured and run.status == "ok" else None,
        "spec_json": dumps(run.spec),
        "axes_json": dumps(run.spec.get("axes") or []),
        "fingerprint_json": dumps(run.fingerprint),
        "metrics_json": dumps(metrics_json(run.metrics)),
        "timings_json": dumps(timings_json(run.timings)),
        "server_log": text(run.server_log),
        "pglab_version": __version__,
    }
    phase_rows: list[tuple[Any, ...]] = []
    series_rows: list[tuple[Any, ...]] = []
    for idx, ph in enumerate(run.phases):
        rep = ph.report
        phase_rows.append(
            (
                idx,
                ph.name,
                ph.iteration,
                int(ph.measured),
                ph.started_at,
                ph.elapsed_s,
                dumps(list(ph.argv)),
                real(rep.tps) if rep.figure == "tps" else None,  # MB/s, QphH...: in the report
                rep.transactions,
                rep.failed,
                real(rep.latency_avg_ms),
                real(rep.latency_stddev_ms),
                real(rep.initial_connection_ms),
                dumps(report_json(rep)),
                text(ph.output),
            )
        )
        for kind, table in sorted(ph.tables.items()):
            if kind in SERIES_KINDS:
                raise ValueError(f"telemetry table {kind!r} would shadow a pgbench series")
            series_rows.append((idx, kind, dumps(table)))
        for kind in SERIES_KINDS:
            samples = getattr(ph, kind)
            if samples:
                series_rows.append((idx, kind, dumps(encode_series(samples))))
    return run_row, phase_rows, series_rows


def report_json(report: PgbenchReport) -> dict[str, Any]:
    """A phase's report as stored: its fields, ``figure`` only where it is not "tps" (what
    pgbench's own reports were stored as before it had one)."""
    out = asdict(report)
    if out["figure"] == "tps":
        del out["figure"]
    return out


def encode_series(samples: Sequence[Any]) -> TableJson:
    """Records of one dataclass type as ``{"columns": [field, ...], "rows": [[value, ...]]}``;
    a latency histogram becomes a list of [bucket, count]."""
    columns = [f.name for f in fields(type(samples[0]))]
    rows = [[plain_value(getattr(s, c)) for c in columns] for s in samples]
    return {"columns": columns, "rows": rows}


def decode_series(kind: str, data: TableJson) -> tuple[Any, ...]:
    """The records of a series; columns this pglab does not know are ignored."""
    cls = SERIES_KINDS[kind]
    known = {f.name for f in fields(cls)}
    out = []
    for row in data["rows"]:
        values = {c: v for c, v in zip(data["columns"], row, strict=True) if c in known}
        if "histogram" in values:
            values["histogram"] = tuple((int(b), int(n)) for b, n in values["histogram"])
        out.append(cls(**values))
    return tuple(out)


def decode_phase(row: PhaseColumns) -> PhaseRow:
    # the report as stored; the row's TPS and count where it has none (what older versions wrote)
    base = {"tps": row["tps"] or 0.0, "transactions": row["transactions"] or 0}
    return PhaseRow(
        idx=row["idx"],
        name=row["name"],
        iteration=row["iteration"],
        measured=bool(row["measured"]),
        started_at=row["started_at"],
        elapsed_s=row["elapsed_s"],
        argv=json.loads(row["argv_json"]),
        tps=row["tps"],
        transactions=row["transactions"],
        failed=row["failed"],
        latency_avg_ms=row["latency_avg_ms"],
        latency_stddev_ms=row["latency_stddev_ms"],
        initial_connection_ms=row["initial_connection_ms"],
        report=PgbenchReport.from_dict({**base, **json.loads(row["report_json"])}),
        output=row["output"],
    )


def run_row(r: RunListRow) -> RunRow:
    """A listing's row: its metrics, and its axes (axis -> value, in axis order)."""
    return RunRow(
        id=r["id"],
        campaign=r["campaign"],
        run_key=r["run_key"],
        point_key=r["point_key"],
        variant=r["variant"],
        label=r["label"],
        repeat=r["repeat"],
        status=r["status"],
        tps=r["tps"],
        started_at=r["started_at"],
        finished_at=r["finished_at"],
        error=r["error"],
        metrics=loads(r["metrics"]) if r["metrics"] else {},
        axes=dict(loads(r["axes"])) if r["axes"] else {},
    )


def stored_run(run: RunFullRow, phases: tuple[PhaseRow, ...], series: Series) -> StoredRun:
    """Everything stored of a run: its row's JSON parsed (the spec by ``stored_spec.read``),
    its axes from its spec as ``list_runs`` gives them."""
    spec = stored_spec.read(loads(run["spec_json"]) or {})
    return StoredRun(
        id=run["id"],
        campaign=run["campaign"],
        run_key=run["run_key"],
        point_key=run["point_key"],
        variant=run["variant"],
        label=run["label"],
        repeat=run["repeat"],
        status=run["status"],
        tps=run["tps"],
        started_at=run["started_at"],
        finished_at=run["finished_at"],
        error=run["error"],
        metrics=loads(run["metrics_json"]),
        axes={str(k): v for k, v in spec.get("axes") or []},
        spec=spec,
        fingerprint=loads(run["fingerprint_json"]),
        timings=loads(run["timings_json"]),
        server_log=run["server_log"],
        stored_at=run["stored_at"],
        pglab_version=run["pglab_version"],
        phases=phases,
        series=series,
    )


def storage_row(r: StorageColumns) -> StorageRow:
    """A storage result as stored, its results and facts parsed (the keys in the order
    ``pglab storage --json`` has always printed them: the tool's output, where asked for,
    after tool_version)."""
    results, facts = json.loads(r["results_json"]), json.loads(r["facts_json"])
    if "output" in r:
        return StorageRow(
            id=r["id"],
            measured_at=r["measured_at"],
            elapsed_s=r["elapsed_s"],
            target_path=r["target_path"],
            mountpoint=r["mountpoint"],
            fstype=r["fstype"],
            mount_options=r["mount_options"],
            device=r["device"],
            tool=r["tool"],
            tool_version=r["tool_version"],
            output=r["output"],
            results=results,
            facts=facts,
        )
    return StorageRow(
        id=r["id"],
        measured_at=r["measured_at"],
        elapsed_s=r["elapsed_s"],
        target_path=r["target_path"],
        mountpoint=r["mountpoint"],
        fstype=r["fstype"],
        mount_options=r["mount_options"],
        device=r["device"],
        tool=r["tool"],
        tool_version=r["tool_version"],
        results=results,
        facts=facts,
    )


def run_result(run: StoredRun) -> RunResult:
    phases = []
    for ph in run.phases:
        series = run.series.get(str(ph.idx), {})
        phases.append(
            PhaseResult(
                name=ph.name,
                iteration=ph.iteration,
                measured=ph.measured,
                started_at=ph.started_at,
                elapsed_s=ph.elapsed_s,
                argv=tuple(ph.argv),
                report=ph.report,
                output=ph.output,
                **{
                    kind: decode_series(kind, series[kind])
                    for kind in SERIES_KINDS
                    if kind in series
                },
                tables={k: v for k, v in series.items() if k not in SERIES_KINDS},
            )
        )
    return RunResult(
        campaign=run.campaign,
        run_key=run.run_key,
        point_key=run.point_key,
        repeat=run.repeat,
        variant=run.variant,
        label=run.label,
        spec=run.spec,
        status=run.status,
        started_at=run.started_at,
        finished_at=run.finished_at,
        error=run.error,
        fingerprint=run.fingerprint,
        phases=tuple(phases),
        metrics=metrics_of(run.metrics),
        timings=timings_of(run.timings),
        server_log=run.server_log,
    )


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def loads(text: str | bytes) -> Any:
    """JSON read back by orjson (3-4x faster on series), or by json when the text holds what
    only json.dumps writes (NaN, Infinity)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def plain_value(value: Any) -> Any:
    if isinstance(value, tuple):
        return [plain_value(v) for v in value]
    return value


def real(value: float | None) -> float | None:
    """A float column's value: NaN and infinities are stored as NULL (SQLite would anyway)."""
    if value is None or not math.isfinite(value):
        return None
    return float(value)


def text(value: str) -> str:
    """Text both databases accept: no NUL (PostgreSQL refuses it), no lone surrogates."""
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


def storage_columns(result: StorageResult) -> dict[str, object]:
    """A pg_test_fsync or fio result as the storage_results table's columns."""
    mount = result.mount
    return {
        "measured_at": result.measured_at,
        "elapsed_s": result.elapsed_s,
        "target_path": text(result.target_path),
        "mountpoint": mount.get("mountpoint"),
        "fstype": mount.get("fstype"),
        # mount and superblock options together where known (ext4's data= is among the latter)
        "mount_options": mount.get("options") or mount.get("mount_options"),
        "device": mount.get("device"),
        "tool": result.tool,
        "tool_version": text(result.tool_version),
        "results_json": dumps(result.results),
        "facts_json": dumps({"mount": mount, "host": result.host}),
        "output": text(result.output),
        "pglab_version": __version__,
    }
