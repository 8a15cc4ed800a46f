"""The workload file: a captured window of a server's sessions, kept as gzipped JSON in a
versioned format (``FORMAT``, ``VERSION``): each session's user, database, start and end and
its statements at their times (as the log told them, with their parameters and errors), the
databases and users seen, the window's duration, a summary (``Summary``), and the dump of the
data as it was when the window began, if one was made.

A file of a later version than this pglab reads is refused, naming both. The file holds the
statements' values (the data they wrote and looked up): it is written with mode 0600.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypedDict

from pglab import __version__
from pglab.errors import WorkloadError
from pglab.workloads.replay.classes import class_of, kind_of
from pglab.workloads.replay.logfile import Entry, Parsed, Session

FORMAT = "pglab-workload"
VERSION = 1
BUSIEST = 10  # statement classes the summary lists


class ClassCount(TypedDict):
    statement: str  # the class (classes.class_of)
    count: int


class Summary(TypedDict):
    sessions: int
    statements: int
    by_kind: dict[str, int]  # SELECT, UPDATE, BEGIN ...
    busiest: list[ClassCount]
    errors: int
    errors_by_class: list[ClassCount]
    before_window: int  # sessions connected before the window: not replayed
    open_at_end: int  # sessions still connected when it closed


class SessionJson(TypedDict):
    id: str
    user: str
    database: str
    start: float
    end: float | None
    # [t, message, detail, error]
    entries: list[tuple[float, str, str | None, str | None]]


class WorkloadJson(TypedDict):
    format: str
    version: int
    pglab: str
    source: str  # the masked dsn, or the log's path
    start: str  # ISO time of the window's start (the server's log_timezone)
    duration_s: float
    databases: list[str]
    users: list[str]
    # the roles a replay's server needs: the users, and (a live capture's) every role of the
    # source, which its dump's owners and grants may name
    roles: list[str]
    summary: Summary
    dump: str | None  # a pg_dump -Fd directory of the data at the start, if made
    sessions: list[SessionJson]


@dataclass(frozen=True, slots=True)
class Workload:
    """A workload file read back."""

    path: Path | None
    data: WorkloadJson

    @property
    def sessions(self) -> list[Session]:
        out = []
        for s in self.data["sessions"]:
            entries = [Entry(t, m, d, e) for t, m, d, e in s["entries"]]
            out.append(Session(s["id"], s["user"], s["database"], s["start"], s["end"], entries))
        return out

    @property
    def start(self) -> datetime:
        return datetime.fromisoformat(self.data["start"])

    @property
    def duration(self) -> float:
        return self.data["duration_s"]


def summary(parsed: Parsed) -> Summary:
    kinds: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for s in parsed.sessions:
        for e in s.entries:
            kinds[kind_of(e.text)] += 1
            cls = class_of(e.text)
            classes[cls] += 1
            if e.error is not None:
                errors[cls] += 1
    return Summary(
        sessions=len(parsed.sessions),
        statements=sum(kinds.values()),
        by_kind=dict(kinds.most_common()),
        busiest=[ClassCount(statement=c, count=n) for c, n in classes.most_common(BUSIEST)],
        errors=sum(errors.values()),
        errors_by_class=[ClassCount(statement=c, count=n) for c, n in errors.most_common(BUSIEST)],
        before_window=parsed.before_window,
        open_at_end=sum(s.end is None for s in parsed.sessions),
    )


def of(
    parsed: Parsed, source: str, dump: str | None = None, roles: list[str] | None = None
) -> Workload:
    """The workload file's document for what ``logfile.read`` made of a log."""
    if not any(s.entries for s in parsed.sessions):
        raise WorkloadError(
            "the window holds no statement of a session that began in it: nothing to replay",
            hint="capture for longer, or while the application connects (sessions open before "
            "the window are not replayed: their state is unknown)",
        )
    sessions = [
        SessionJson(
            id=s.id,
            user=s.user,
            database=s.database,
            start=round(s.start, 6),
            end=None if s.end is None else round(s.end, 6),
            entries=[(round(e.t, 6), e.message, e.detail, e.error) for e in s.entries],
        )
        for s in parsed.sessions
    ]
    data = WorkloadJson(
        format=FORMAT,
        version=VERSION,
        pglab=__version__,
        source=source,
        start=parsed.start.isoformat(sep=" "),
        duration_s=round(parsed.duration, 6),
        databases=sorted({s.database for s in parsed.sessions}),
        users=sorted({s.user for s in parsed.sessions}),
        roles=sorted({s.user for s in parsed.sessions} | set(roles or ())),
        summary=summary(parsed),
        dump=dump,
        sessions=sessions,
    )
    return Workload(None, data)


def split(workload: Workload, parts: int) -> list[Workload]:
    """The sessions in ``parts`` disjoint sets (one per generator host), each session whole
    with its statements in their order, balanced by statement count: the sessions with the
    most statements first, each to the set with the fewest so far (the first such set on a
    tie). Each set is a workload of the same window (its start and duration: pgreplay keeps
    the captured times) whose summary counts its own sessions and statements."""
    sets: list[list[SessionJson]] = [[] for _ in range(parts)]
    counts = [0] * parts
    ranked = sorted(workload.data["sessions"], key=lambda s: -len(s["entries"]))
    for s in ranked:  # sorted() is stable: sessions of equal size keep the file's order
        i = counts.index(min(counts))
        sets[i].append(s)
        counts[i] += len(s["entries"])
    order = {id(s): n for n, s in enumerate(workload.data["sessions"])}
    out = []
    for sessions, count in zip(sets, counts, strict=True):
        sessions.sort(key=lambda s: order[id(s)])
        summary: Summary = {
            **workload.data["summary"],
            "sessions": len(sessions),
            "statements": count,
        }
        data: WorkloadJson = {**workload.data, "sessions": sessions, "summary": summary}
        out.append(Workload(workload.path, data))
    return out


def write(workload: Workload, path: Path) -> Workload:
    """Write it whole (a partial file renamed), readable by its owner only (0600)."""
    partial = path.with_name(path.name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb") as f:
            f.write(json.dumps(workload.data).encode())
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(path)
    return Workload(path, workload.data)


def read(path: Path) -> Workload:
    """A workload file, checked: pglab's format, a version this pglab reads."""
    try:
        with gzip.open(path, "rb") as f:
            data = json.loads(f.read())
    except FileNotFoundError as exc:
        raise WorkloadError(f"no workload file {path}") from exc
    except (OSError, EOFError, ValueError) as exc:
        raise WorkloadError(
            f"{path} is not a workload file of pglab's ({exc})",
            hint="make one with `pglab capture DSN --for 10m` or `pglab capture --from-log FILE`",
        ) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise WorkloadError(f"{path} is not a workload file of pglab's (no format {FORMAT!r})")
    version = data.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise WorkloadError(
            f"{path} is a workload file of format version {version} (written by pglab "
            f"{data.get('pglab', '?')}); this pglab ({__version__}) reads version {VERSION} "
            "and earlier",
            hint="replay it with the pglab that captured it, or a later one",
        )
    return Workload(path, WorkloadJson(**data))  # type: ignore[typeddict-item]
