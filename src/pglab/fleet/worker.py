"""``pglab worker``: one lab host's worker, taking one job at a time from the fleet's queue.

Each job runs in a child pglab (``python -m pglab.fleet.job``) under this worker's lab home,
started through ``setpriv --pdeathsig INT``: if the worker dies (even by SIGKILL) the child is
interrupted, stops its server and stores nothing half. The worker's event loop stays free while
the child works, so its heartbeat goes on (every ``HEARTBEAT_S``); every ``RESCUE_S`` it also
gives back to the queue the jobs of workers whose heartbeat stopped (``STALLED_S``), so that a
dead host's job runs again elsewhere.

Ctrl-C or SIGTERM: the child is interrupted (its run abandoned, the server stopped, targets torn
down), its job goes back to the queue (``Interrupted`` is retried), and the worker exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Unpack

import procrastinate
import psycopg
from procrastinate.worker import Worker

from pglab import procs
from pglab.fleet import schedules
from pglab.fleet.queue import TASK, WORKERS_TABLE, JobArgs, JobPayload, app_for

HEARTBEAT_S = 2.0
STALLED_S = 10.0  # no heartbeat for this long: the worker is dead, its job goes to another
RESCUE_S = 3.0
# the child's exit codes (``job.py``)
OK, SOME_FAILED, CANNOT, INTERRUPTED = 0, 1, 2, 3

Say = Callable[[str], None]  # where the worker says what it does (its log line)


@dataclass
class _State:
    """The worker's: the child running a job (None between jobs), and whether it stops."""

    child: asyncio.subprocess.Process | None = None
    stopping: bool = False


class Interrupted(Exception):
    """The job's child was interrupted (the worker is stopping): the job is queued again."""


class JobFailed(Exception):
    """The job could not run at all (its campaign cannot run here): not retried."""


def serve(
    url: str,
    lab_home: Path,
    name: str,
    queue: str,
    say: Callable[[str], None] = print,
) -> None:
    """Run the worker until Ctrl-C or SIGTERM."""
    schedules.ensure_table(url)  # and procrastinate's
    asyncio.run(_serve(url, lab_home, name, queue, say))


async def _serve(
    url: str, lab_home: Path, name: str, queue: str, say: Callable[[str], None]
) -> None:
    app = app_for(url)
    state = _State()

    @app.task(
        name=TASK,
        pass_context=True,
        retry=procrastinate.RetryStrategy(max_attempts=1000, retry_exceptions={Interrupted}),
    )
    async def run_group(
        context: procrastinate.JobContext, /, **args: Unpack[JobArgs]
    ) -> dict[str, int]:
        if state.stopping:
            raise Interrupted
        await _register(url, worker, name, queue)
        say(
            f"job {context.job.id}: {args['campaign']} [{args['group']}], "
            f"{len(args['points'])} point(s)"
        )
        payload = JobPayload(**args, store=url, lab_home=str(lab_home), worker=name)
        code = await _run_child(payload, state, say)
        say(f"job {context.job.id}: exit {code}")
        if code == INTERRUPTED or state.stopping:
            raise Interrupted
        if code not in (OK, SOME_FAILED):
            raise JobFailed(f"the campaign could not run on {name} (exit {code})")
        return {"exit": code}

    @app.periodic(cron=schedules.TICK_CRON, periodic_id=queue)
    @app.task(name=schedules.TICK_TASK, queue=queue, queueing_lock=f"{schedules.TICK_TASK}:{queue}")
    async def tick(timestamp: int) -> None:
        """The queue's schedules due by ``timestamp``, queued as executions (once for all the
        queue's workers: procrastinate defers one job per tick)."""
        at = datetime.fromtimestamp(timestamp, UTC)
        await asyncio.to_thread(schedules.fire_due, url, lab_home, queue, at, say)
        await asyncio.to_thread(schedules.forget_ticks, url, queue)

    worker = Worker(
        app,
        queues=[queue],
        name=name,
        concurrency=1,
        install_signal_handlers=False,
        update_heartbeat_interval=HEARTBEAT_S,
        stalled_worker_timeout=STALLED_S,
        fetch_job_polling_interval=1.0,
    )

    def stop() -> None:
        if not state.stopping:
            busy = state.child is not None
            say(
                "stopping: "
                + (
                    "the current run is abandoned, its job queued again"
                    if busy
                    else "no job was running"
                )
            )
        state.stopping = True
        child = state.child
        if child is not None and child.returncode is None:
            child.send_signal(signal.SIGINT)
        worker.stop()  # type: ignore[no-untyped-call]  # procrastinate leaves it untyped

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    async with app.open_async():
        rescue = asyncio.create_task(_rescue_stalled(app, say))
        started = asyncio.create_task(_register_at_start(url, worker, name, queue, say))
        try:
            await worker.run()  # type: ignore[no-untyped-call]  # procrastinate leaves it untyped
        finally:
            for task in (rescue, started):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


async def _run_child(payload: JobPayload, state: _State, say: Callable[[str], None]) -> int:
    # its own session (Ctrl-C in the worker's terminal is the worker's to pass on), its PG*
    # variables the worker's (an existing server's PGPASSWORD), INT when the worker dies
    child = await procs.start_async(
        [sys.executable, "-m", "pglab.fleet.job"],
        inherit_env=True,
        pdeathsig="INT",
        stdin=asyncio.subprocess.PIPE,
    )
    state.child = child
    try:
        assert child.stdin is not None and child.stdout is not None and child.stderr is not None
        child.stdin.write(json.dumps(payload).encode())
        await child.stdin.drain()
        child.stdin.close()

        async def lines(stream: asyncio.StreamReader) -> None:
            async for line in stream:  # its stderr: a traceback, what went wrong
                say("  " + line.decode(errors="replace").rstrip())

        await asyncio.gather(lines(child.stdout), lines(child.stderr))
        return await child.wait()
    finally:
        state.child = None
        if child.returncode is None:  # cancelled: never leave it running
            child.send_signal(signal.SIGINT)
            await child.wait()


async def _register_at_start(
    url: str, worker: Worker, name: str, queue: str, say: Callable[[str], None]
) -> None:
    """Register this host as soon as procrastinate has registered the worker (an idle worker
    shows in ``pglab status --workers`` and on ``pglab serve``'s fleet page, not only once it
    took a job), then say it waits."""
    while worker.worker_id is None:
        await asyncio.sleep(0.05)
    try:
        await _register(url, worker, name, queue)
    except psycopg.Error as exc:  # its jobs register it again
        say(f"worker {name} could not write down its host yet: {exc}")
    say(f"worker {name} on queue {queue}: waiting for jobs (Ctrl-C to stop)")


async def _register(url: str, worker: Worker, name: str, queue: str) -> None:
    """Write down which worker id is this host (``pglab status`` names it)."""
    if worker.worker_id is None:
        return
    facts = {"hostname": platform.node(), "pid": os.getpid(), "cpus": os.cpu_count()}
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(
            f"INSERT INTO {WORKERS_TABLE} (worker_id, name, queue, fingerprint) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (worker_id) DO NOTHING",
            (worker.worker_id, name, queue, json.dumps(facts)),
        )


async def _rescue_stalled(app: procrastinate.App, say: Say) -> None:
    """Give back to the queue the jobs of workers whose heartbeat stopped."""
    while True:
        await asyncio.sleep(RESCUE_S)
        try:
            stalled = await app.job_manager.get_stalled_jobs(
                task_name=TASK, seconds_since_heartbeat=STALLED_S
            )
            for job in stalled:
                say(f"job {job.id}: its worker stopped sending heartbeats; queued again")
                await app.job_manager.retry_job(job)
        except (psycopg.Error, procrastinate.exceptions.ProcrastinateException) as exc:
            say(f"warning: could not look for stalled jobs: {exc}")
