"""A server's statement log read into sessions: the stderr log that pgreplay reads, written
with ``log_line_prefix = '%m|%u|%d|%c|'`` (``PREFIX``), ``log_statement = 'all'``,
connections and disconnections logged, English messages (``lc_messages = 'C'``); or the same
events in a CSV log (``log_destination = 'csvlog'``), whose columns say what the prefix does
(``log_line_prefix`` then does not matter).

``read`` keeps what a replay needs: each session's connection (user, database), its
statements (simple ``statement:`` and extended ``execute NAME:`` with their parameters) at
their time, the error each one raised, its end. A log that lacks one of those settings or
speaks another language is refused with what to set (``WorkloadError``), never half read.
pglab's own sessions (``application_name = pglab``) are left out.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import datetime

from pglab.errors import WorkloadError

PREFIX = "%m|%u|%d|%c|"
# what pgreplay needs of a server's logging, as ALTER SYSTEM sets it (``capture``)
SETTINGS = {
    "log_statement": "all",
    "log_connections": "on",
    "log_disconnections": "on",
    "log_min_error_statement": "log",
    "log_line_prefix": PREFIX,
    "lc_messages": "C",
}
_LINE = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)(?: [^|]*)?\|([^|]*)\|([^|]*)\|([^|]*)\|"
    r"([^:|]{1,20}):  (.*)$"
)
ENGLISH = frozenset(
    {
        "LOG",
        "ERROR",
        "FATAL",
        "PANIC",
        "WARNING",
        "NOTICE",
        "INFO",
        "DETAIL",
        "HINT",
        "STATEMENT",
        "CONTEXT",
        "QUERY",
        "LOCATION",
        "DEBUG",
        "DEBUG1",
        "DEBUG2",
        "DEBUG3",
        "DEBUG4",
        "DEBUG5",
    }
)
_AUTHORIZED = re.compile(r"connection authorized: user=(\S+)(?: database=(\S+))?(.*)$")
_EXECUTE = re.compile(r"execute ([^:]+): ", re.DOTALL)
OWN_APPLICATION = "pglab"  # pglab's own sessions (postgres/reach.py), never captured


@dataclass(slots=True)
class Entry:
    """One statement as the log told it: ``message`` is ``statement: TEXT`` or ``execute
    NAME: TEXT`` (lines joined by newlines), ``detail`` its parameters (``parameters: $1 =
    '5'``) or what an EXECUTE ran, ``error`` the ERROR it raised."""

    t: float  # seconds after the log's (or the window's) start
    message: str
    detail: str | None = None
    error: str | None = None

    @property
    def text(self) -> str:
        """The statement's SQL."""
        if self.message.startswith("statement: "):
            return self.message[len("statement: ") :]
        found = _EXECUTE.match(self.message)
        return self.message[found.end() :] if found else self.message


@dataclass(slots=True)
class Session:
    """A session whose connection the log saw."""

    id: str  # the server's session id (%c)
    user: str
    database: str
    start: float
    end: float | None = None  # None: still connected when the window closed
    entries: list[Entry] = field(default_factory=list)


@dataclass(slots=True)
class Parsed:
    """What ``read`` made of a log."""

    start: datetime  # the first line's time (naive, the server's log_timezone)
    duration: float  # seconds from the first line to the last
    sessions: list[Session]
    before_window: int  # sessions connected before the log began: their statements left out
    lines: int


def read(text: str, since: datetime | None = None) -> Parsed:
    """The sessions of a stderr log written with ``PREFIX``, or of a CSV log (``since``: times
    counted from there, else from the first line)."""
    records, foreign = _csv_records(text) if is_csv(text) else _records(text)
    if not records:
        raise _missing_prefix(text, foreign)
    _check_language(records)
    start = since or records[0][0]
    sessions: dict[str, Session] = {}
    unknown: set[str] = set()
    own: set[str] = set()
    last: dict[str, Entry] = {}
    for when, _user, _db, sid, severity, message in records:
        t = (when - start).total_seconds()
        if sid in own:
            continue
        if severity == "LOG" and message.startswith("connection authorized: "):
            found = _AUTHORIZED.match(message)
            user, db = (found.group(1), found.group(2) or "") if found else (_user, _db)
            if found and f"application_name={OWN_APPLICATION}" == found.group(3).strip():
                own.add(sid)
                continue
            sessions[sid] = Session(sid, user.strip('"'), db.strip('"'), t)
        elif sid not in sessions:
            if severity == "LOG" and _is_statement(message):
                unknown.add(sid)
        elif severity == "LOG" and _is_statement(message):
            entry = Entry(t, message)
            sessions[sid].entries.append(entry)
            last[sid] = entry
        elif severity == "LOG" and message.startswith("disconnection: "):
            sessions[sid].end = t
        elif severity == "DETAIL" and sid in last and last[sid].detail is None:
            last[sid].detail = _lower_first(message)
        elif severity == "ERROR" and sid in last and last[sid].error is None:
            last[sid].error = message
    _check_settings(records, sessions)
    duration = (records[-1][0] - start).total_seconds()
    return Parsed(
        start, max(duration, 0.0), list(sessions.values()), len(unknown), len(records) + foreign
    )


Record = tuple[datetime, str, str, str, str, str]


def _records(text: str) -> tuple[list[Record], int]:
    """The log's records (a record's continuation lines, which start with a tab, joined to
    it) and how many lines had no prefix of ``PREFIX``'s shape."""
    records: list[Record] = []
    foreign = 0
    for line in text.splitlines():
        if line.startswith("\t") and records:
            w, u, d, s, sev, msg = records[-1]
            records[-1] = (w, u, d, s, sev, f"{msg}\n{line[1:]}")
            continue
        found = _LINE.match(line)
        if found is None:
            foreign += bool(line.strip())
            continue
        stamp, user, db, sid, severity, message = found.groups()
        try:
            when = datetime.fromisoformat(stamp)
        except ValueError:
            foreign += 1
            continue
        records.append((when, user, db, sid, severity, message))
    return records, foreign


_CSV_START = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: [^,|]*)?,")
# csvlog's columns (the same from PostgreSQL 9.0 on; 13 and 14 added three at the end)
_CSV_TIME, _CSV_USER, _CSV_DB, _CSV_SESSION, _CSV_SEVERITY, _CSV_MESSAGE, _CSV_DETAIL = (
    0,
    1,
    2,
    5,
    11,
    13,
    14,
)


def is_csv(text: str) -> bool:
    """Whether ``text`` is a CSV log: its first line starts with a time and a comma, where a
    stderr log's prefix has a ``|``."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    return _CSV_START.match(first) is not None


def _csv_records(text: str) -> tuple[list[Record], int]:
    """A CSV log's rows as records: a row's DETAIL (a statement's parameters) is a record of
    its own after it, as the stderr log writes it. Rows too short or without a time are
    counted as foreign."""
    records: list[Record] = []
    foreign = 0
    for row in csv.reader(io.StringIO(text, newline="")):
        if len(row) <= _CSV_DETAIL:
            foreign += bool(row)
            continue
        try:
            when = datetime.fromisoformat(" ".join(row[_CSV_TIME].split(" ")[:2]))  # no zone
        except ValueError:
            foreign += 1
            continue
        head = (when, row[_CSV_USER], row[_CSV_DB], row[_CSV_SESSION])
        records.append((*head, row[_CSV_SEVERITY], row[_CSV_MESSAGE]))
        if row[_CSV_DETAIL]:
            records.append((*head, "DETAIL", row[_CSV_DETAIL]))
    return records, foreign


def _is_statement(message: str) -> bool:
    return message.startswith("statement: ") or _EXECUTE.match(message) is not None


def _lower_first(detail: str) -> str:
    """``Parameters: $1 = '5'`` (PostgreSQL 13 and later) as ``parameters: ...``, which is
    what pgreplay 1.2 reads."""
    return detail[0].lower() + detail[1:] if detail.startswith("Parameters: ") else detail


def _missing_prefix(text: str, foreign: int) -> WorkloadError:
    if not text.strip():
        return WorkloadError(
            "the log is empty: nothing was captured",
            hint="was the server's log the file given, and did anything run?",
        )
    sample = next(line for line in text.splitlines() if line.strip())[:120]
    return WorkloadError(
        f"no line of the log ({foreign:,} lines) starts with log_line_prefix = '{PREFIX}' "
        f"(the first: {sample!r})",
        hint=f"capture with `pglab capture DSN`, which sets it, or set log_line_prefix = "
        f"'{PREFIX}' (and {_settings_said()}) on the server before the window",
    )


def _check_language(records: list[Record]) -> None:
    foreign = sorted({r[4] for r in records} - ENGLISH)
    english_logs = sum(
        r[4] == "LOG" and (_is_statement(r[5]) or r[5].startswith(("connection ", "disconn")))
        for r in records
    )
    if foreign or (english_logs == 0 and any(r[4] == "LOG" for r in records)):
        seen = ", ".join(foreign[:5]) or next(r[5] for r in records if r[4] == "LOG")[:60]
        raise WorkloadError(
            f"the log's messages are not in English ({seen!r}): pgreplay and pglab read "
            "PostgreSQL's English messages only",
            hint="capture again with lc_messages = 'C' on the server (pglab capture DSN sets it)",
        )


def _check_settings(records: list[Record], sessions: dict[str, Session]) -> None:
    said = [r[5] for r in records if r[4] == "LOG"]
    if not any(m.startswith("connection authorized: ") for m in said):
        raise WorkloadError(
            "the log has no connection (no 'connection authorized' line): log_connections was "
            "off, and a replay cannot tell where sessions begin",
            hint=f"capture with {_settings_said()} (pglab capture DSN sets them)",
        )
    if not any(_is_statement(m) for m in said):
        raise WorkloadError(
            "the log has no statement (no 'statement:' or 'execute' line): log_statement was "
            "not 'all'",
            hint=f"capture with {_settings_said()} (pglab capture DSN sets them)",
        )
    if (
        not any(m.startswith("disconnection: ") for m in said)
        and len(sessions) > 1
        and any(s.entries for s in sessions.values())
    ):
        raise WorkloadError(
            "the log has sessions but no disconnection: log_disconnections was off, and a "
            "replay would keep every session open to its end",
            hint=f"capture with {_settings_said()} (pglab capture DSN sets them)",
        )


def _settings_said() -> str:
    return ", ".join(f"{k} = '{v}'" for k, v in SETTINGS.items())
