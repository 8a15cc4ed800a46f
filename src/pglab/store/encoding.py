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

from pglab import __version__
from pglab.records import (
    SERIES_KINDS,
    PgbenchReport,
    PhaseResult,
    RunResult,
    TableJson,
)
from pglab.rows import PhaseRow, StoredRun


def encode_run(
    run: RunResult,
) -> tuple[dict[str, Any], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The rows of a run (column -> value), of its phases and of its series, without ids."""
    if run.status not in ("ok", "failed"):
        raise ValueError(f"run status must be 'ok' or 'failed', not {run.status!r}")
    measured = [p.report.tps for p in run.phases if p.measured]
    run_row = {
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
        "metrics_json": dumps(run.metrics),
        "timings_json": dumps(run.timings),
        "server_log": text(run.server_log),
        "pglab_version": __version__,
    }
    phase_rows: list[tuple[Any, ...]] = []
    series_rows: list[tuple[Any, ...]] = []
    for idx, ph in enumerate(run.phases):
        rep = ph.report
        phase_rows.append((
            idx, ph.name, ph.iteration, int(ph.measured), ph.started_at, ph.elapsed_s,
            dumps(list(ph.argv)), real(rep.tps), rep.transactions, rep.failed,
            real(rep.latency_avg_ms), real(rep.latency_stddev_ms),
            real(rep.initial_connection_ms), dumps(asdict(rep)), text(ph.output),
        ))  # fmt: skip
        for kind, table in sorted(ph.tables.items()):
            if kind in SERIES_KINDS:
                raise ValueError(f"telemetry table {kind!r} would shadow a pgbench series")
            series_rows.append((idx, kind, dumps(table)))
        for kind in SERIES_KINDS:
            samples = getattr(ph, kind)
            if samples:
                series_rows.append((idx, kind, dumps(encode_series(samples))))
    return run_row, phase_rows, series_rows


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


def decode_phase(row: dict[str, Any]) -> PhaseRow:
    row.pop("run_id", None)
    row["measured"] = bool(row["measured"])
    row["argv"] = json.loads(row.pop("argv_json"))
    # the report as stored; the row's TPS and count where it has none (what older versions wrote)
    base = {"tps": row["tps"] or 0.0, "transactions": row["transactions"] or 0}
    row["report"] = PgbenchReport.from_dict({**base, **json.loads(row.pop("report_json"))})
    return PhaseRow(**row)


def run_result(run: StoredRun) -> RunResult:
    phases = []
    for ph in run.phases:
        series = run.series.get(str(ph.idx), {})
        phases.append(PhaseResult(
            name=ph.name, iteration=ph.iteration, measured=ph.measured,
            started_at=ph.started_at, elapsed_s=ph.elapsed_s, argv=tuple(ph.argv),
            report=ph.report,
            output=ph.output,
            **{kind: decode_series(kind, series[kind]) for kind in SERIES_KINDS if kind in series},
            tables={k: v for k, v in series.items() if k not in SERIES_KINDS},
        ))  # fmt: skip
    return RunResult(
        campaign=run.campaign, run_key=run.run_key, point_key=run.point_key,
        repeat=run.repeat, variant=run.variant, label=run.label, spec=run.spec,
        status=run.status, started_at=run.started_at, finished_at=run.finished_at,
        error=run.error, fingerprint=run.fingerprint, phases=tuple(phases),
        metrics=run.metrics, timings=run.timings, server_log=run.server_log,
    )  # fmt: skip


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
