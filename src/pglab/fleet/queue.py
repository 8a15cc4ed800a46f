"""The fleet's queue: the procrastinate app on the store's database, the comparison groups a
plan is cut into, their submission (idempotent), and what the queue says of a campaign.

A job's arguments name the campaign (its document as stored, without passwords, and the
directory its relative paths start from) and the point keys of its group. Jobs of one group
share a procrastinate ``lock`` (never two at once) and ``queueing_lock`` (never two waiting):
submitting again after anything adds only groups that have runs to do and no job waiting or
running.

Typed: a job's arguments are a :class:`JobArgs` (procrastinate keeps them as JSON; the worker
passes them on to its child with the worker's own keys, a :class:`JobPayload`), a job of the
queue a :class:`JobRow`, a worker a :class:`WorkerRow`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

import procrastinate
import psycopg
from procrastinate import exceptions as pq_errors

from pglab.campaign.parse import Campaign
from pglab.campaign.spec import RunSpec, masked_document
from pglab.errors import LabError
from pglab.fleet.files import Carried
from pglab.jsonish import JsonObject, TomlTable
from pglab.planning.plan import Plan

TASK = "pglab.fleet.run_group"
DEFAULT_QUEUE = "pglab"
WORKERS_TABLE = "pglab_fleet_workers"
ACTIVE = ("todo", "doing")


class JobArgs(TypedDict):
    """A job's arguments, as submitted (keys a job queued by an older pglab may lack: not
    required)."""

    campaign: str
    document: TomlTable  # the campaign's file as parsed, passwords masked
    # the same as JSON text: procrastinate keeps a job's arguments as jsonb, which orders an
    # object's keys its own way, and the order of the variants is the campaign's (its first is
    # the baseline): ``document_of`` reads this one when the job has it
    document_text: NotRequired[str]
    base_dir: str  # where its relative paths start
    source_file: NotRequired[str | None]
    files: NotRequired[list[Carried]]
    points: list[str]  # the group's point keys
    group: str  # its label
    rounds: NotRequired[list[int]]  # [fleet] spread = "rounds": the group's round


class JobPayload(JobArgs):
    """What the worker gives its child (``fleet/job.py``, JSON on its stdin)."""

    store: str
    lab_home: str
    worker: str


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def require_postgres(url: str) -> None:
    if not is_postgres_url(url):
        raise LabError(
            "a fleet needs the PostgreSQL results store: workers on other hosts cannot reach "
            "a SQLite file",
            hint="give --store postgresql://user@host/db (or PGLAB_STORE) to run, worker and "
            "status alike",
        )


def app_for(url: str) -> procrastinate.App:
    return procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))


def ensure_schema(url: str) -> None:
    """procrastinate's tables and pglab's list of workers, once per database (a lock keeps
    two workers starting at once from both applying them)."""
    app = app_for(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(7073817547876)")
        try:
            row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
            if row is None or row[0] is None:
                with app.open():
                    app.schema_manager.apply_schema()
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {WORKERS_TABLE} (worker_id bigint PRIMARY KEY, "
                "name text NOT NULL, queue text NOT NULL, started_at timestamptz NOT NULL "
                "DEFAULT now(), fingerprint jsonb)"
            )
        finally:
            conn.execute("SELECT pg_advisory_unlock(7073817547876)")


# -- comparison groups ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    key: str  # campaign + matrix coordinate, hashed: the jobs' lock
    label: str  # the coordinate as people read it ("clients=4 scale=10", or "all points")
    points: tuple[str, ...]  # point keys
    runs: int  # runs still to do
    rounds: tuple[int, ...] = ()  # [fleet] spread = "rounds": the job's round (repeat); () all


def groups(plan: Plan) -> list[Group]:
    """The plan's runs to do, by matrix coordinate: every variant there with all its repeats
    (what ``show`` and ``compare`` hold against each other), in the plan's order; with
    ``[fleet] spread = "rounds"``, by coordinate and round (every variant there once: the
    comparisons are made within rounds, so a round may run on any host)."""
    by_rounds = plan.campaign.spread == "rounds"
    by_coord: dict[tuple[str, int], list[RunSpec]] = {}
    for run in plan.runs:
        by_coord.setdefault((_coordinate(run), run.repeat if by_rounds else 0), []).append(run)
    out = []
    for (coord, rnd), runs in by_coord.items():
        key = hashlib.sha256(
            f"{plan.campaign.name}\0{coord}".encode() + (f"\0{rnd}".encode() if rnd else b"")
        ).hexdigest()[:16]
        points = tuple(dict.fromkeys(r.point_key for r in runs))
        label = (coord or "all points") + (f" round {rnd}" if rnd else "")
        out.append(Group(f"pglab:{key}", label, points, len(runs), (rnd,) if rnd else ()))
    return out


def _coordinate(run: RunSpec) -> str:
    return " ".join(f"{name.removeprefix('settings.')}={value}" for name, value in run.axes)


# -- submitting ----------------------------------------------------------------------------------


@dataclass
class Submitted:
    added: list[Group]
    already: list[Group]  # a job waiting or running for them


def document_of(job: JobArgs) -> TomlTable:
    """A job's campaign document in its file's order (``document_text``; a job queued by an
    older pglab has only ``document``, in jsonb's order)."""
    text = job.get("document_text")
    return json.loads(text) if isinstance(text, str) else job["document"]


def submit(
    url: str,
    campaign: Campaign,
    plan: Plan,
    queue: str = DEFAULT_QUEUE,
    files: list[Carried] | None = None,
) -> Submitted:
    """Queue a job per group of the plan's runs; ``files``: what ``fleet.files.carry`` kept of
    the files the campaign names (each job says them, the worker writes what it lacks)."""
    ensure_schema(url)
    # the campaign's name, which an execution (NAME@LABEL) changes, over the file's
    document: TomlTable = {**masked_document(campaign.document), "name": campaign.name}
    done = Submitted([], [])
    app = app_for(url)
    with app.open():
        active = {
            job.lock
            for status in ACTIVE
            for job in app.job_manager.list_jobs(task=TASK, status=status)
        }
        for group in groups(plan):
            if group.key in active:
                done.already.append(group)
                continue
            try:
                app.configure_task(
                    TASK, queue=queue, lock=group.key, queueing_lock=group.key
                ).defer(
                    **as_json(
                        JobArgs(
                            campaign=campaign.name,
                            document=document,
                            document_text=json.dumps(document),
                            base_dir=str(campaign.base_dir),
                            source_file=campaign.source_file,
                            files=files or [],
                            points=list(group.points),
                            group=group.label,
                            rounds=list(group.rounds),
                        )
                    )
                )
            except pq_errors.AlreadyEnqueued:
                done.already.append(group)
                continue
            done.added.append(group)
    return done


# -- what the queue says ---------------------------------------------------------------------------


# a job's state as procrastinate says it (procrastinate.jobs.Status; "aborting": its older
# versions')
JobStatus = Literal["todo", "doing", "succeeded", "failed", "cancelled", "aborting", "aborted"]


@dataclass
class JobRow:
    id: int
    group: str
    status: JobStatus
    worker: str | None
    since: float | None  # when it was queued, or started (a timestamp)
    attempts: int


def jobs_of(url: str, campaign: str | None = None) -> list[JobRow]:
    """The fleet's jobs (of one campaign), oldest first, with the worker running each."""
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone() in (None, (None,)):
            return []
        rows = conn.execute(
            f"""
            SELECT j.id, j.args, j.status::text, j.attempts, w.name,
                   coalesce((SELECT max(e.at) FROM procrastinate_events e
                             WHERE e.job_id = j.id), j.scheduled_at) AS since
            FROM procrastinate_jobs j LEFT JOIN {WORKERS_TABLE} w ON w.worker_id = j.worker_id
            WHERE j.task_name = %s AND (%s::text IS NULL OR j.args->>'campaign' = %s)
            ORDER BY j.id
            """,
            (TASK, campaign, campaign),
        ).fetchall()
    return [
        JobRow(
            id=r[0],
            group=_args(r[1]).get("group", "?"),
            status=r[2],
            worker=r[4],
            since=r[5].timestamp() if r[5] is not None else None,
            attempts=r[3],
        )
        for r in rows
    ]


def as_json(args: JobArgs) -> JsonObject:
    """A job's arguments as procrastinate writes them (JSON)."""
    return dict(args)


def _args(value: Any) -> JobArgs:
    """A job's arguments as the database gives them (jsonb as psycopg decodes it, or text)."""
    args: JobArgs = json.loads(value) if isinstance(value, str) else value
    return args


class WorkerRow(TypedDict):
    """A worker the queue knows (``workers_of``)."""

    name: str
    queue: str
    started_at: float  # timestamps
    heartbeat: float
    host: str | None  # the host it runs on (its hostname), None when not written down
    job: int | None  # the job it runs, and that job's comparison group
    group: str | None


def workers_of(url: str) -> list[WorkerRow]:
    """The workers procrastinate still knows (it forgets those long silent): name, queue, the
    host they run on, when they started, their last heartbeat, and the job they run (its id
    and comparison group) or None."""
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute(f"SELECT to_regclass('{WORKERS_TABLE}')").fetchone() in (None, (None,)):
            return []
        rows = conn.execute(
            f"""
            SELECT w.name, w.queue, w.started_at, p.last_heartbeat, w.fingerprint->>'hostname',
                   j.id, j.args
            FROM {WORKERS_TABLE} w JOIN procrastinate_workers p ON p.id = w.worker_id
            LEFT JOIN procrastinate_jobs j ON j.worker_id = w.worker_id AND j.status = 'doing'
                 AND j.task_name = %s
            ORDER BY w.name, w.started_at
            """,
            (TASK,),  # not the schedules' ticks
        ).fetchall()
    return [
        WorkerRow(
            name=r[0],
            queue=r[1],
            started_at=r[2].timestamp(),
            heartbeat=r[3].timestamp(),
            host=r[4],
            job=r[5],
            group=_args(r[6]).get("group") if r[6] is not None else None,
        )
        for r in rows
    ]


def counts(rows: Iterable[JobRow]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r.status] = out.get(r.status, 0) + 1
    return out
