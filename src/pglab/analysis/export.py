"""Tidy tables (``tidy.py``) as the bytes of a file: CSV, JSON records or Parquet.

Parquet goes through pyarrow, an optional extra (``pip install 'pglab[parquet]'``): its absence is
a clear error naming the extra, found before anything is written. Columns keep one type each
(pyarrow infers it; a column mixing numbers and text becomes text)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from pglab.analysis.tidy import TidyTable
from pglab.errors import LabError
from pglab.jsonish import JsonObject

FORMATS = ("csv", "json", "parquet")


def encode(table: TidyTable, fmt: str) -> bytes:
    if fmt == "csv":
        return to_csv(table).encode()
    if fmt == "json":
        return (json.dumps(records(table), indent=1, default=str) + "\n").encode()
    if fmt == "parquet":
        return to_parquet(table)
    raise ValueError(fmt)


def records(table: TidyTable) -> list[JsonObject]:
    """The rows as JSON objects, column -> value (what ``--format json`` writes)."""
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def to_csv(table: TidyTable) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.columns)
    writer.writerows(["" if v is None else v for v in row] for row in table.rows)
    return out.getvalue()


def require_parquet() -> Any:
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet
    except ImportError as exc:
        raise LabError(
            "writing Parquet needs pyarrow, which is not installed",
            hint="pip install 'pglab[parquet]' (or pip install pyarrow), or use --format csv",
        ) from exc
    return pyarrow


def to_parquet(table: TidyTable) -> bytes:
    pa = require_parquet()
    import pyarrow.parquet as pq

    columns = {}
    for i, name in enumerate(table.columns):
        values = [row[i] for row in table.rows]
        kinds = {type(v) for v in values if v is not None}
        if kinds - {int, float, bool} and kinds & {int, float, bool}:
            values = [None if v is None else str(v) for v in values]  # mixed: text
        elif kinds == {int, float}:
            values = [None if v is None else float(v) for v in values]
        columns[name] = values
    arrow = pa.table(columns)
    sink = io.BytesIO()
    pq.write_table(arrow, sink)
    return sink.getvalue()
