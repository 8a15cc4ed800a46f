"""``pglab schedule FILE --cron EXPR``: a campaign measured again at the times a cron expression
names, by the fleet's workers (``fleet.schedules``); ``--list`` and ``--remove NAME``."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

from rich.markup import escape

from pglab.campaign import parse as campaigns
from pglab.cli import commands, fmt
from pglab.cli.common import Where, console
from pglab.errors import LabError
from pglab.fleet import queue as fleet
from pglab.fleet import schedules
from pglab.lab import Lab
from pglab.planning.preflight import preflight

HELP = f"""\
Measure a campaign again at the times a cron expression names, for a series that
`pglab history NAME` reads: each time, the fleet's workers queue the execution NAME@TIME (as
`pglab run FILE --execution TIME --fleet` would) and run it. There is no cron of pglab's own:
the workers of the queue (`pglab worker`, at least one running) keep time through
procrastinate's periodic tasks, in the PostgreSQL results store. A file that builds from git
(`build = {{ git = "…", ref = "master" }}`) builds the ref's commit of each execution's time.

The file is checked now as a run would be; its relative paths (scripts, patches) must exist on
the worker that queues each execution, which sends them with the jobs. Scheduling a campaign
again replaces its schedule. Times are UTC. A time missed while no worker ran is made up once,
when one starts.

cron: {schedules.CRON_FORMS}

examples:
  pglab schedule nightly.toml --cron "0 2 * * *" --store postgresql://lab@db/pglab
  pglab schedule --list
  pglab schedule --remove nightly
  pglab history nightly --fail-above 5
"""


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "schedule",
        parents=[common],
        help=commands.help_of("schedule"),
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", nargs="?", type=Path, help="the campaign file")
    p.add_argument("--cron", metavar="EXPR", help='when: "0 2 * * *" (every day, 02:00 UTC)')
    p.add_argument(
        "--queue",
        default=fleet.DEFAULT_QUEUE,
        help=f"the workers' queue (default {fleet.DEFAULT_QUEUE})",
    )
    p.add_argument("--list", action="store_true", help="the schedules, their next times")
    p.add_argument("--remove", metavar="NAME", help="stop measuring campaign NAME again")
    p.set_defaults(
        func=lambda a: run(Where.from_args(a), a.file, a.cron, a.queue, a.list, a.remove)
    )


def run(
    where: Where, file: Path | None, cron: str | None, queue: str, show: bool, remove: str | None
) -> int:
    fleet.require_postgres(where.store_url)
    if remove is not None:
        if not schedules.remove(where.store_url, remove):
            raise LabError(
                f"no schedule named {remove!r}", hint=where.command("schedule", "--list")
            )
        console.print(f"schedule {escape(remove)} removed: its executions so far are kept")
        return 0
    if show or file is None:
        return listing(where)
    if cron is None:
        raise LabError("--cron is needed: when to measure again", hint=schedules.CRON_FORMS)
    cron = schedules.checked_cron(cron)
    camp = campaigns.load(file)
    preflight(camp, Lab.open(where.home))  # refused now, not at 02:00
    found, replaced = schedules.add(where.store_url, camp, cron, queue)
    nexts = ", ".join(_utc(t) for t in found.next_times(3))
    console.print(
        f"campaign [bold]{escape(camp.name)}[/] {'re' if replaced else ''}scheduled "
        f"([bold]{escape(cron)}[/], UTC) on queue {escape(queue)}: next {nexts}",
        soft_wrap=True,
    )
    console.print(
        "workers keep time: "
        + where.command("worker", "--queue", queue)
        + "  on each lab host (one at least); then "
        + where.command("history", camp.name),
        markup=False,
        soft_wrap=True,
    )
    return 0


def listing(where: Where) -> int:
    found = schedules.listed(where.store_url)
    if not found:
        console.print(
            "no schedules: " + where.command("schedule", "FILE", "--cron", "0 2 * * *"),
            markup=False,
            soft_wrap=True,
        )
        return 0
    columns: list[fmt.Column] = [
        ("campaign", "left", [s.name for s in found]),
        ("cron (UTC)", "left", [s.cron for s in found]),
        ("queue", "left", [s.queue for s in found]),
        ("next (UTC)", "left", [_utc(s.next_times(1)[0]) for s in found]),
        ("last execution", "left", [s.last_execution or "none yet" for s in found]),
        ("last error", "left", [s.last_error or "" for s in found]),
    ]
    console.print(fmt.table("schedules", columns))
    return 1 if any(s.last_error for s in found) else 0


def _utc(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
