"""Checkpoints as events, read from the server log (``log_checkpoints=on``).

pglab starts every server with ``log_line_prefix='%m [%p] '`` and ``log_timezone=UTC``, so a
line reads ``2026-11-22 15:37:50.971 UTC [4540] LOG:  checkpoint starting: time``. A checkpoint is
a "starting" line (its reason: time, wal, immediate force wait, ...) and a "complete" line with
what it wrote and how long it took; PostgreSQL 17+ adds ``wrote N SLRU buffers`` and ``lsn=``.
A checkpoint still running when the log was read has no end (None), never invented figures.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from pglab.telemetry.base import Table

_STAMP = r"^(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) UTC \[\d+\] LOG:  "
_STARTING = re.compile(_STAMP + r"checkpoint starting: (?P<reason>.*)$", re.M)
_COMPLETE = re.compile(
    _STAMP + r"checkpoint complete: wrote (?P<buffers>\d+) buffers \((?P<pct>[\d.]+)%\)"
    r"(?:, wrote (?P<slru>\d+) SLRU buffers)?; "
    r"(?P<added>\d+) WAL file\(s\) added, (?P<removed>\d+) removed, (?P<recycled>\d+) recycled; "
    r"write=(?P<write>[\d.]+) s, sync=(?P<sync>[\d.]+) s, total=(?P<total>[\d.]+) s;"
    r"(?:.*?distance=(?P<distance>\d+) kB, estimate=(?P<estimate>\d+) kB)?",
    re.M,
)

COLUMNS = [
    "t",
    "t_end",
    "reason",
    "buffers",
    "buffers_pct",
    "slru_buffers",
    "wal_added",
    "wal_removed",
    "wal_recycled",
    "write_s",
    "sync_s",
    "total_s",
    "distance_kb",
    "estimate_kb",
]


def _epoch(stamp: str) -> float:
    fmt = "%Y-%m-%d %H:%M:%S.%f" if "." in stamp else "%Y-%m-%d %H:%M:%S"
    return datetime.strptime(stamp + "+0000", fmt + "%z").timestamp()


def parse(log: str) -> Table:
    """Every checkpoint in ``log`` as a row: ``t`` its start, ``t_end`` its completion.

    A "complete" line whose "starting" line is not in the text (the checkpoint began before)
    gives a row with ``t`` None and ``reason`` None.
    """
    events: list[tuple[int, str, re.Match[str]]] = [
        (m.start(), "start", m) for m in _STARTING.finditer(log)
    ] + [(m.start(), "end", m) for m in _COMPLETE.finditer(log)]
    table = Table(list(COLUMNS))
    open_start: re.Match[str] | None = None
    for _, kind, m in sorted(events, key=lambda e: e[0]):
        if kind == "start":
            if open_start is not None:  # a start without completion (a crash, a shutdown)
                table.add(*_row(open_start, None))
            open_start = m
        else:
            table.add(*_row(open_start, m))
            open_start = None
    if open_start is not None:
        table.add(*_row(open_start, None))
    return table


def _row(start: re.Match[str] | None, end: re.Match[str] | None) -> list[object]:
    def num(name: str, cast: Callable[[str], object] = float) -> object:
        if end is None or end.group(name) is None:
            return None
        return cast(end.group(name))

    return [
        _epoch(start.group("ts")) if start else None,
        _epoch(end.group("ts")) if end else None,
        start.group("reason").strip() if start else None,
        num("buffers", int),
        num("pct"),
        num("slru", int),
        num("added", int),
        num("removed", int),
        num("recycled", int),
        num("write"),
        num("sync"),
        num("total"),
        num("distance", int),
        num("estimate", int),
    ]


def summarize(table: Table | None) -> dict[str, float]:
    """Count and buffers written of the checkpoints that completed; {} without a table."""
    if table is None:
        return {}
    idx = {c: i for i, c in enumerate(table.columns)}
    done = [r for r in table.rows if r[idx["t_end"]] is not None]
    out = {"checkpoints": float(len(done))}
    if done:
        out["checkpoint_buffers"] = float(sum(r[idx["buffers"]] for r in done))
        out["checkpoint_write_s"] = float(sum(r[idx["write_s"]] for r in done))
        out["checkpoint_sync_s"] = float(sum(r[idx["sync_s"]] for r in done))
    return out
