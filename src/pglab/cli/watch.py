"""``pglab watch [CAMPAIGN]``: the live view of a campaign that a ``pglab run`` in another
terminal is running, read-only: its state from the lab (``run/live.py``), the runs it finishes
from the store. Ctrl-C stops the watching only; the campaign goes on."""

from __future__ import annotations

import argparse
import time

from rich.console import RenderableType
from rich.live import Live
from rich.markup import escape

from pglab import workloads
from pglab.analysis import points
from pglab.cli import commands, live
from pglab.cli.common import Where, console
from pglab.errors import LabError
from pglab.records import reason_of
from pglab.rows import RunRow
from pglab.run import live as states
from pglab.store import Store

POLL_S = 1.0


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "watch",
        parents=[common],
        help=commands.help_of("watch"),
        description="Show the live view of a campaign that `pglab run` is running in another "
        "terminal:\nthe current run's TPS and latency over the last minute, its checkpoints, "
        "what the server\nwaits on, the campaign's progress and ETA, and a line per run it "
        "finishes. It only reads\n(the lab's live state and the store): Ctrl-C stops the "
        "watching, never the campaign.\nGive it the --lab-dir (and --store) the run uses.",
        epilog="examples:\n"
        "  pglab watch                     the campaign started last in this lab\n"
        "  pglab watch settings-sweep      that campaign\n"
        "  pglab watch --once | less       the view once, as text (also when not a terminal)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "campaign", nargs="?", help="the campaign's name (default: the one started last)"
    )
    p.add_argument(
        "--once",
        action="store_true",
        help="print the view once and exit (what it does when its output is not a terminal)",
    )
    p.set_defaults(func=lambda a: run(Where.from_args(a), a.campaign, once=a.once))


def run(where: Where, campaign: str | None = None, once: bool = False) -> int:
    found = states.read(where.home, campaign)
    if found is None:
        raise _not_running(where, campaign)
    state: states.LiveState = found  # what the view draws, read again every second
    subtitle = f"watching pglab {state.pid}: Ctrl-C stops the watching, not the campaign"

    def draw() -> RenderableType:
        return live.panel(state, time.time(), console.width, subtitle)

    if once or not console.is_terminal:
        console.print(draw())
        return 0
    name = state.campaign
    with where.open(read_only=True) as store:
        seen = {r.id for r in store.list_runs(name)}
        console.print(
            f"campaign [bold]{escape(name)}[/], run by pglab {state.pid} in {where.home}; "
            f"{len(seen)} run(s) stored before now",
            soft_wrap=True,
        )
        try:  # transient: the view is erased and drawn once more when it ends, so that the
            # terminal's echoed ^C cannot leave half a panel behind
            with Live(
                get_renderable=draw, console=console, refresh_per_second=2, transient=True
            ) as view:
                while (now := states.read(where.home, name)) is not None:
                    state = now
                    seen |= _print_new(store, name, seen, view)
                    time.sleep(POLL_S)
                _print_new(store, name, seen, view)
            console.print(draw())
        except KeyboardInterrupt:
            console.print(draw())
            console.print(f"stopped watching; campaign {escape(name)} goes on (pglab {state.pid})")
            return 0
        runs = store.list_runs(name)
    ok = sum(r.ok for r in runs)
    console.print(
        f"pglab {state.pid} has ended; campaign {escape(name)} has {ok} run(s) ok and "
        f"{len(runs) - ok} failed in the store",
        soft_wrap=True,
    )
    console.print("next: " + where.command("show", name), markup=False, soft_wrap=True)
    return 0


def _print_new(store: Store, name: str, seen: set[int], view: Live) -> set[int]:
    """A line per run stored since the last look (as `pglab run` prints them); their ids."""
    new = [r for r in store.list_runs(name) if r.id not in seen]
    for r in sorted(new, key=lambda r: r.id):
        view.console.print(_line(r), soft_wrap=True)
    return {r.id for r in new}


def _line(r: RunRow) -> str:
    if r.ok:
        unit = points.figure_of_run(r.metrics)  # MB/s, QphH: not always TPS
        value = r.tps or workloads.figure_value(r.metrics) or 0.0
        return f"  ✓ {escape(r.label)} #{r.repeat}: {value:,.1f} {unit}"
    return f"  [red]✗ {escape(r.label)} #{r.repeat}: {escape(reason_of(r.error))}[/]"


def _not_running(where: Where, campaign: str | None) -> LabError:
    others = [s.campaign for s in states.running(where.home)]
    elsewhere = f"; running now: {', '.join(others)}" if others else ""
    if campaign is None:
        return LabError(
            f"no campaign is running in the lab {where.home}",
            hint="start one with `pglab run FILE` in another terminal, or give the --lab-dir "
            "(PGLAB_HOME) it runs in",
        )
    return LabError(
        f"campaign {campaign!r} is not running in the lab {where.home}{elsewhere}",
        hint=f"what it stored: {where.command('show', campaign)}; a run in another lab needs "
        "its --lab-dir",
    )
