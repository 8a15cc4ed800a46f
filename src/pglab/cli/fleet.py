"""The fleet's commands: ``pglab run FILE --fleet`` (submit), ``pglab worker`` (on each lab
host), ``pglab status [CAMPAIGN]`` (what the queue and the workers are doing; ``--wait``
follows it to the end with a progress bar and an ETA; ``--workers``: each worker's host,
heartbeat and job)."""

from __future__ import annotations

import argparse
import os
import platform
import stat
import time
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from pglab.campaign.parse import Campaign
from pglab.cli import commands, fmt
from pglab.cli.common import Where, console
from pglab.errors import LabError
from pglab.fleet import queue as fleet
from pglab.fleet.enqueue import enqueue
from pglab.fleet.worker import STALLED_S, serve
from pglab.lab import Lab
from pglab.store import mask_url

ENDED = ("succeeded", "failed", "cancelled", "aborted")


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    w = sub.add_parser(
        "worker",
        parents=[common],
        help=commands.help_of("worker"),
        description="Take jobs from the fleet's queue in the PostgreSQL results store, one at a "
        "time, each in this host's lab directory; Ctrl-C or SIGTERM abandons the current run "
        "(server stopped, nothing half stored) and queues its job again.\n\n"
        "  pglab worker --store postgresql://lab@store-host/pglab --name bench1",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    w.add_argument(
        "--queue",
        default=fleet.DEFAULT_QUEUE,
        help=f"queue to take jobs from (default {fleet.DEFAULT_QUEUE})",
    )
    w.add_argument(
        "--name",
        default=platform.node(),
        help="this host's name in `pglab status` and in every run it stores "
        "(default: the host name)",
    )
    w.add_argument(
        "--passfile",
        type=Path,
        metavar="FILE",
        help="libpq's password file (mode 0600) for the existing servers its jobs "
        "reach: jobs never hold a password (default: libpq's, ~/.pgpass)",
    )
    w.set_defaults(func=lambda a: worker(Where.from_args(a), a.queue, a.name, a.passfile))
    s = sub.add_parser(
        "status",
        parents=[common],
        help=commands.help_of("status"),
    )
    s.add_argument("campaign", nargs="?", help="one campaign's jobs (default: all)")
    s.add_argument(
        "--wait", action="store_true", help="follow until every job has ended, with an ETA"
    )
    s.add_argument(
        "--workers",
        action="store_true",
        help="the workers instead: name, host, queue, last heartbeat, the job each runs",
    )
    s.set_defaults(
        func=lambda a: (
            workers_status(Where.from_args(a))
            if a.workers
            else status(Where.from_args(a), a.campaign, a.wait)
        )
    )


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fleet",
        action="store_true",
        help="submit the runs as jobs for `pglab worker` on lab hosts (PostgreSQL store): one "
        "job per matrix coordinate, so what is compared runs on one host (with [fleet] spread = "
        '"rounds": a job per coordinate and round, each comparison made within rounds); '
        "submitting again "
        "adds only what is missing",
    )
    p.add_argument("--queue", default=fleet.DEFAULT_QUEUE, help="--fleet: the queue")
    p.add_argument("--wait", action="store_true", help="--fleet: follow the jobs to the end")


def submit(where: Where, camp: Campaign, queue: str, wait: bool) -> int:
    done = enqueue(where.store_url, where.home, camp, queue)
    result, carried, runs = done.submitted, done.carried, done.runs
    console.print(
        f"campaign [bold]{escape(camp.name)}[/]: {len(result.added)} job(s) queued on "
        f"[bold]{escape(queue)}[/] for {runs} run(s), one per matrix coordinate"
        + (" and round" if camp.spread == "rounds" else "")
        + (f"; {len(result.already)} already queued or running" if result.already else "")
        + ("; nothing left to do" if not done.plan.runs else "")
        + (f"; {len(carried)} file(s) it names go with them" if carried else ""),
        soft_wrap=True,
    )
    console.print(
        "workers: "
        + where.command("worker", "--queue", queue)
        + "   on each lab host; follow: "
        + where.command("status", camp.name, "--wait"),
        markup=False,
        soft_wrap=True,
    )
    return follow(where, camp.name) if wait else 0


def worker(where: Where, queue: str, name: str, passfile: Path | None = None) -> int:
    fleet.require_postgres(where.store_url)
    Lab.open(where.home)  # the lab directory exists and its server account is there
    if passfile is not None:
        # the jobs' libpq (pglab's connections and pgbench's) inherit it
        os.environ["PGPASSFILE"] = str(checked_passfile(passfile))
    serve(
        where.store_url,
        where.home,
        name,
        queue,
        say=lambda line: console.print(line, markup=False, soft_wrap=True),
    )
    return 0


def checked_passfile(path: Path) -> Path:
    """``path`` as libpq will read it: a readable file that only its owner can read (libpq
    ignores, with a warning only, a password file others can read)."""
    try:
        mode = path.stat().st_mode
        path.open().close()
    except OSError as exc:
        hint = "a libpq password file: lines of host:port:database:user:password"
        raise LabError(f"--passfile {path}: {exc.strerror}", hint=hint) from exc
    if not stat.S_ISREG(mode) or mode & (stat.S_IRWXG | stat.S_IRWXO):
        said = f"--passfile {path}: group or others may read it, so libpq would ignore it"
        raise LabError(said, hint=f"chmod 600 {path}")
    return path.absolute()


def status(where: Where, campaign: str | None, wait: bool) -> int:
    fleet.require_postgres(where.store_url)
    if wait:
        return follow(where, campaign)
    rows = fleet.jobs_of(where.store_url, campaign)
    if not rows:
        console.print(
            f"no fleet jobs{' of ' + campaign if campaign else ''} in {mask_url(where.store_url)}",
            markup=False,
        )
        return 0
    columns: list[fmt.Column] = [
        ("job", "right", [str(r.id) for r in rows]),
        ("group", "left", [r.group for r in rows]),
        ("status", "left", [_status(r) for r in rows]),
        ("worker", "left", [r.worker or "" for r in rows]),
        ("since", "left", [fmt.when(r.since) for r in rows]),
    ]
    console.print(fmt.table(f"jobs{' of ' + campaign if campaign else ''}", columns))
    counts = fleet.counts(rows)
    console.print(_counted(counts), markup=False)
    workers = fleet.workers_of(where.store_url)
    if workers:
        console.print(
            "workers: "
            + ", ".join(
                f"{w['name']} (queue {w['queue']}, heartbeat {fmt.when(w['heartbeat'])})"
                for w in workers
            ),
            markup=False,
            soft_wrap=True,
        )
    return 1 if counts.get("failed") else 0


def workers_status(where: Where) -> int:
    """The fleet's workers: each one's host, queue, heartbeat and job; a worker silent for
    longer than a stalled job waits (``STALLED_S``) is said to be silent: its job goes to
    another worker."""
    fleet.require_postgres(where.store_url)
    found = fleet.workers_of(where.store_url)
    if not found:
        console.print(
            f"no workers in {mask_url(where.store_url)}: start one on each lab host "
            "with " + where.command("worker"),
            markup=False,
            soft_wrap=True,
        )
        return 0
    now = time.time()
    columns: list[fmt.Column] = [
        ("worker", "left", [w["name"] for w in found]),
        ("host", "left", [w["host"] or "?" for w in found]),
        ("queue", "left", [w["queue"] for w in found]),
        ("since", "left", [fmt.when(w["started_at"]) for w in found]),
        ("heartbeat", "right", [f"{max(0.0, now - w['heartbeat']):.0f} s ago" for w in found]),
        (
            "state",
            "left",
            ["silent" if now - w["heartbeat"] > STALLED_S else "alive" for w in found],
        ),
        (
            "job",
            "left",
            [f"{w['job']} ({w['group']})" if w["job"] is not None else "idle" for w in found],
        ),
    ]
    console.print(fmt.table("workers", columns))
    return 0


WORDS = {"todo": "queued", "doing": "running", "succeeded": "done"}


def _counted(counts: dict[str, int]) -> str:
    """ "2 done, 1 running, 1 queued" (in that order, then the rest)."""
    order = ["succeeded", "doing", "todo"]
    names = order + sorted(s for s in counts if s not in order)
    return ", ".join(f"{counts[s]} {WORDS.get(s, s)}" for s in names if counts.get(s))


def _status(row: Any) -> str:
    said = str(WORDS.get(row.status, row.status))
    return said + (
        f" (attempt {row.attempts + 1})" if row.attempts and row.status != "succeeded" else ""
    )


def follow(where: Where, campaign: str | None, interval: float = 2.0) -> int:
    """Until every job has ended: a bar over the jobs, its ETA from their pace."""
    with Progress(
        TextColumn("[bold]fleet[/]"),
        BarColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    ) as bar:
        task = bar.add_task("", total=None)
        while True:
            rows = fleet.jobs_of(where.store_url, campaign)
            counts = fleet.counts(rows)
            ended = sum(counts.get(s, 0) for s in ENDED)
            bar.update(
                task,
                total=max(len(rows), 1),
                completed=ended,
                description=f"{counts.get('doing', 0)} running, {counts.get('todo', 0)} "
                f"queued, {ended} ended",
            )
            if rows and ended == len(rows):
                break
            time.sleep(interval)
    console.print(_counted(counts), markup=False)
    return 1 if counts.get("failed") else 0
