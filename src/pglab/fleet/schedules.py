"""Scheduled executions (``pglab schedule FILE --cron EXPR``): a campaign measured again at the
times a cron expression names, by the fleet's workers, through procrastinate's periodic tasks
(pglab keeps no cron of its own).

A schedule is a row of ``pglab_schedules`` in the store's database: the campaign's document as
stored (without passwords), the directory its relative paths start from, the cron expression,
the queue, and ``last_due``, the last time it was due and submitted. Every worker registers one
periodic task per queue, :data:`TICK_TASK`, that procrastinate defers every :data:`TICK_CRON`
(once for all workers of the queue: procrastinate keeps one job per tick). The tick claims each
schedule whose last due time has passed (an ``UPDATE … WHERE last_due < due``, so one worker
only), and queues that execution, ``NAME@LABEL`` with the due time as its label, as
``pglab run FILE --execution LABEL --fleet`` would: checked, its files carried. A file that
builds from git is parsed again at each execution, so each builds the ref's commit of that
moment. Times missed while no worker ran are caught up once (the latest), not once each.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from croniter import croniter
from psycopg.rows import dict_row

from pglab.campaign import parse as campaigns
from pglab.campaign.execution import as_execution, label_of
from pglab.campaign.parse import Campaign
from pglab.campaign.spec import masked_document
from pglab.errors import LabError
from pglab.fleet import queue as fleet
from pglab.fleet.enqueue import enqueue
from pglab.jsonish import TomlTable

TABLE = "pglab_schedules"
TICK_TASK = "pglab.fleet.schedules_tick"
TICK_CRON = "* * * * * */10"  # every 10 s: how late after its time an execution is queued
_EPSILON = timedelta(microseconds=1)  # get_prev is strictly before its start
CRON_FORMS = (
    'five fields, minute hour day month weekday ("0 2 * * *": every day at 02:00 UTC; '
    '"30 1 * * 1-5": 01:30 on weekdays), or six with seconds last ("* * * * * */30": '
    "every 30 seconds)"
)


@dataclass(frozen=True)
class Schedule:
    name: str  # the campaign's
    queue: str
    cron: str
    document: TomlTable  # the campaign file as parsed (passwords masked), parsed again when due
    base_dir: str
    source_file: str | None
    created: datetime
    last_due: datetime  # the last due time submitted (at first: when it was made)
    last_execution: str | None  # NAME@LABEL
    last_error: str | None

    def next_times(self, n: int = 3, after: datetime | None = None) -> list[datetime]:
        it = croniter(self.cron, after or datetime.now(UTC))
        return [it.get_next(datetime) for _ in range(n)]

    def due(self, at: datetime) -> datetime | None:
        """The latest time the cron names at or before ``at`` if it is after ``last_due``."""
        latest = croniter(self.cron, at + _EPSILON).get_prev(datetime)
        return latest if latest > self.last_due else None


def checked_cron(expr: str) -> str:
    expr = " ".join(expr.split())
    if not croniter.is_valid(expr) or len(expr.split()) not in (5, 6):
        raise LabError(f"--cron {expr!r} is not a cron expression", hint=CRON_FORMS)
    return expr


def ensure_table(url: str) -> None:
    fleet.ensure_schema(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} (name text PRIMARY KEY, queue text NOT NULL, "
            "cron text NOT NULL, document jsonb NOT NULL, base_dir text NOT NULL, "
            "source_file text, created timestamptz NOT NULL DEFAULT now(), "
            "last_due timestamptz NOT NULL DEFAULT now(), last_execution text, last_error text)"
        )


def add(url: str, camp: Campaign, cron: str, queue: str) -> tuple[Schedule, bool]:
    """Store (or replace: the same campaign name) the schedule; True when it replaced one."""
    fleet.require_postgres(url)
    ensure_table(url)
    # kept as a JSON string in the jsonb column: a jsonb object orders its keys its own way,
    # and the order of the variants is the campaign's (its first is the baseline)
    doc = json.dumps(json.dumps(masked_document(camp.document)))
    with psycopg.connect(url, autocommit=True) as conn:
        existed = conn.execute(f"SELECT 1 FROM {TABLE} WHERE name = %s", (camp.name,)).fetchone()
        conn.execute(
            f"INSERT INTO {TABLE} (name, queue, cron, document, base_dir, source_file) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (name) DO UPDATE SET queue = "
            "excluded.queue, cron = excluded.cron, document = excluded.document, base_dir = "
            "excluded.base_dir, source_file = excluded.source_file, last_error = NULL",
            (camp.name, queue, cron, doc, str(camp.base_dir), camp.source_file),
        )
    (found,) = [s for s in listed(url) if s.name == camp.name]
    return found, existed is not None


def remove(url: str, name: str) -> bool:
    fleet.require_postgres(url)
    ensure_table(url)
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(f"DELETE FROM {TABLE} WHERE name = %s", (name,)).rowcount > 0


def listed(url: str, queue: str | None = None) -> list[Schedule]:
    with psycopg.connect(url, row_factory=dict_row) as conn:
        if conn.execute("SELECT to_regclass(%s) AS t", (TABLE,)).fetchone()["t"] is None:  # type: ignore[index]
            return []
        rows = conn.execute(
            f"SELECT * FROM {TABLE} WHERE %(q)s::text IS NULL OR queue = %(q)s ORDER BY name",
            {"q": queue},
        ).fetchall()
    return [Schedule(**{**row, "document": _document(row["document"])}) for row in rows]


def _document(stored: TomlTable | str) -> TomlTable:
    """A schedule's document in its file's order (a JSON string; a schedule stored by an
    older pglab is the jsonb object, in jsonb's order)."""
    return json.loads(stored) if isinstance(stored, str) else stored


def _claim(url: str, schedule: Schedule, due: datetime) -> bool:
    """Whether this worker is the one to submit ``due`` (another may have, meanwhile)."""
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(
            f"UPDATE {TABLE} SET last_due = %s WHERE name = %s AND last_due < %s",
            (due, schedule.name, due),
        )
        return cur.rowcount == 1


def _said(url: str, name: str, execution: str | None, error: str | None) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            f"UPDATE {TABLE} SET last_execution = coalesce(%s, last_execution), "
            "last_error = %s WHERE name = %s",
            (execution, error, name),
        )


def fire_due(
    url: str, lab_home: Path, queue: str, at: datetime, say: Callable[[str], None]
) -> list[str]:
    """Queue the executions of ``queue``'s schedules due by ``at``; their names."""
    queued = []
    for schedule in listed(url, queue):
        due = schedule.due(at)
        if due is None or not _claim(url, schedule, due):
            continue
        name = f"{schedule.name}@{label_of(due)}"
        try:
            camp = campaigns.parse(
                schedule.document,
                schedule.name,
                base_dir=Path(schedule.base_dir),
                source_file=schedule.source_file,
            )
            camp = as_execution(camp, label_of(due))
            done = enqueue(url, lab_home, camp, queue)
        except LabError as exc:
            said = exc.message + (f" ({exc.hint})" if exc.hint else "")
            say(f"schedule {schedule.name}: {name} not queued: {said}")
            _said(url, schedule.name, None, said)
            continue
        say(
            f"schedule {schedule.name}: {name} queued, {len(done.submitted.added)} job(s) "
            f"for {done.runs} run(s)"
        )
        _said(url, schedule.name, name, None)
        queued.append(name)
    return queued


def forget_ticks(url: str, queue: str) -> None:
    """Delete the queue's ended ticks but the last (procrastinate's record of periodic defers
    still names it): a tick every 10 s would fill the jobs table."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "DELETE FROM procrastinate_jobs WHERE task_name = %s AND queue_name = %s AND "
            "status IN ('succeeded', 'failed') AND id NOT IN (SELECT job_id FROM "
            "procrastinate_periodic_defers WHERE job_id IS NOT NULL)",
            (TICK_TASK, queue),
        )
