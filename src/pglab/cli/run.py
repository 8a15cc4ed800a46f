"""``pglab run FILE``: check a campaign file, plan it, and run (or resume) it, with progress and
an ETA; ``--dry-run`` prints the plan and what the repeats can resolve, and writes nothing."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
from collections.abc import Iterator
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from pglab.analysis import verdicts
from pglab.campaign import parse as campaigns
from pglab.campaign import schema
from pglab.campaign.execution import as_execution
from pglab.campaign.parse import Campaign
from pglab.campaign.spec import mask_dsn
from pglab.cli import commands, fleet, fmt, live, report, show
from pglab.cli.common import Where, console
from pglab.cli.progress import BuildProgress, ExecutorEvents, ProgressEvents
from pglab.errors import LabError, StoreError
from pglab.lab import Lab, said_home
from pglab.planning.plan import Plan
from pglab.postgres import build as builds
from pglab.postgres.sources import Binaries
from pglab.run import affinity, campaign_run
from pglab.run.executor import Events, Executor, QuietEvents
from pglab.run.live import LiveRecorder
from pglab.run.resume import stale_error
from pglab.store import mask_url, peek_store
from pglab.units import DURATION_FORMS, duration_text, parse_duration
from pglab.workloads import described


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "run",
        parents=[common],
        help=commands.help_of("run"),
        description="Run a campaign file; running it again resumes it: stored runs "
        "are kept, missing or failed ones are run.\nOn a terminal it draws a live view of the "
        "current run (TPS and latency over the last minute,\ncheckpoints, what the server "
        "waits on, the campaign's progress and ETA); `pglab watch` shows the same\nfrom "
        "another terminal.\n\n" + schema.help_layout(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", type=Path, help="campaign TOML file (see examples/)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="check the file and settings, print the plan, its estimated duration and what "
        "its repeats can resolve; writes nothing (not even a new store), but makes the "
        "campaign's builds (server = { build = ... }) not yet in the build cache: the "
        "settings are checked on them",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="the file was edited since runs were stored: delete the stored runs of the points "
        "it no longer has (changed or removed) and go on",
    )
    p.add_argument(
        "--budget",
        type=_seconds,
        metavar="TIME",
        help="time budget (5400, 90min, 2h): refuse the campaign before anything starts if "
        "the plan's estimate is over it; replaces the file's max_duration",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="CPU profiles of the server's processes in every measured phase, by Linux perf "
        "(as [profile] in the file does; see `pglab show RUN --profile`)",
    )
    p.add_argument(
        "--execution",
        nargs="?",
        const="",
        metavar="LABEL",
        help="measure again rather than resume: store this execution as the campaign "
        "NAME@LABEL (default LABEL: the UTC time, 20261126T020000Z); `pglab history NAME` "
        "follows the executions (give the LABEL again to resume that one)",
    )
    add_reinit(p)
    fleet.add_run_options(p)
    p.set_defaults(
        func=lambda a: (
            fleet.submit(Where.from_args(a), _for_fleet(a), a.queue, a.wait)
            if a.fleet and not a.dry_run
            else run(
                Where.from_args(a),
                a.file,
                dry_run=a.dry_run,
                replace=a.replace,
                budget_s=a.budget,
                reinit=a.reinit,
                profile=a.profile,
                execution=a.execution,
            )
        )
    )


def _for_fleet(a: argparse.Namespace) -> Campaign:
    if a.profile:  # the workers run the file as it is
        raise LabError(
            "--profile does not reach a fleet's workers",
            hint="put [profile] in the campaign file: the workers read the file",
        )
    return as_execution(campaigns.load(a.file), a.execution)


def add_reinit(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reinit",
        action="store_true",
        help="existing server (dsn): let pglab drop and re-create pgbench tables it did not "
        "make in its database (it refuses otherwise)",
    )


def _seconds(text: str) -> float:
    found = parse_duration(text)
    if found is None:
        raise argparse.ArgumentTypeError(f"{text!r}: expected {DURATION_FORMS}")
    return found


def run(
    where: Where,
    file: Path,
    dry_run: bool = False,
    replace: bool = False,
    budget_s: float | None = None,
    reinit: bool = False,
    profile: bool = False,
    execution: str | None = None,
) -> int:
    camp = as_execution(campaigns.load(file), execution)
    if profile:  # --profile: as [profile] enabled = true
        camp = dataclasses.replace(camp, profile=dataclasses.replace(camp.profile, enabled=True))
    return execute(where, camp, dry_run=dry_run, replace=replace, budget_s=budget_s, reinit=reinit)


def execute(
    where: Where,
    camp: Campaign,
    dry_run: bool = False,
    replace: bool = False,
    report_after: bool = False,
    budget_s: float | None = None,
    reinit: bool = False,
) -> int:
    """Plan ``camp`` and run it (``dry_run``: print the plan only); the CLI's ``run`` and
    ``quick`` both end here, the campaign run by ``run/campaign_run.py``. ``budget_s``:
    ``--budget``, in seconds; ``reinit``: pgbench tables pglab did not make on an existing
    server may be re-initialised."""
    lab = Lab.open(where.home)
    build_first(camp, lab)
    if dry_run:
        return _dry_run(where, camp, lab, budget_s, reinit)
    screen = _Screen(camp)
    # first, before the store is opened: a run that then stops (a store it cannot open, stale
    # points) still undoes what a dead pglab left; the use case's own clean-up finds nothing
    campaign_run.clean_up(lab, camp, screen.status)
    with where.open() as store:
        outcome = campaign_run.run_campaign(
            Executor(lab, store, screen, reinit=reinit),
            camp,
            campaign_run.How(replace=replace, budget_s=budget_s),
            screen,
        )
        show.print_points(store, camp.name)
        console.print(
            f"\n{outcome.ok} run(s) ok, {outcome.failed} failed this time; stored in "
            f"{mask_url(where.store_url)}"
        )
        console.print(said_home(lab.home), markup=False, soft_wrap=True)
        if report_after:
            report.write_report(store, camp.name, None, lab.home)
        hints = [
            where.command("show", camp.name),
            where.command("report", camp.name),
            where.command("export", camp.name, "--format", "csv"),
        ]
        console.print("next: " + "   ·   ".join(hints), markup=False, soft_wrap=True)
        if where.secret_store:
            console.print(
                "(with PGLAB_STORE set to the store's URL: its password is not printed)",
                markup=False,
                soft_wrap=True,
            )
        return 1 if outcome.failed else 0


class _Screen(QuietEvents):
    """What ``pglab run`` shows: before anything is drawn, the lines of what a dead pglab left
    (the executor's first events) and the outline; then the live view on a terminal (plain
    lines otherwise), its state also in the lab for `pglab watch` in another terminal."""

    def __init__(self, camp: Campaign) -> None:
        self.camp = camp

    def status(self, message: str) -> None:
        console.print(escape(message), soft_wrap=True)

    def outlined(self, outline: campaign_run.Outline) -> None:
        plan = outline.plan
        console.print(
            f"campaign [bold]{escape(self.camp.name)}[/]: {len(plan.points)} point(s) × "
            f"{_repeats_words(self.camp)}; {len(plan.runs)} run(s) to do at most, about "
            f"{duration_text(outline.seconds)}"
        )
        _print_design(outline.design())
        _print_auto(outline)

    @contextlib.contextmanager
    def drawing(self, recorder: LiveRecorder) -> Iterator[Events]:
        panel = live.panel_of(recorder.snapshot, "Ctrl-C stops the campaign")
        view = ProgressEvents(recorder.state.total_s, panel=panel if console.is_terminal else None)
        with view:
            yield ExecutorEvents(view)


def build_first(camp: Campaign, lab: Lab) -> None:
    """The campaign's builds (``server = { build = ... }``) that are not in the cache yet,
    made before anything else with their progress shown (a dry run too: its settings are
    checked on them); a build that fails stops the campaign before any run."""
    for spec in dict.fromkeys(v.server.build for v in camp.variants if v.server.build):
        with BuildProgress(spec.label.removeprefix("build:")) as view:
            view.done(builds.ensure(spec, lab, view.step))


def _dry_run(
    where: Where, camp: Campaign, lab: Lab, budget_s: float | None = None, reinit: bool = False
) -> int:
    """The plan, checked as a run would check it, against the store as it is: nothing is
    written, not even a store that does not exist yet."""
    stored = campaign_run.Stored()
    try:
        store = peek_store(where.store_url)
    except StoreError as exc:
        store = None
        console.print(
            f"[yellow]warning:[/] cannot read the results store: {escape(exc.message)}; the "
            "plan below counts no stored runs",
            soft_wrap=True,
        )
    if store is not None:
        with store:
            stored = campaign_run.Stored.read(store, camp)
    outline, binaries = campaign_run.checked(lab, camp, stored, budget_s, reinit)
    _print_plan(outline.plan, binaries)
    _print_design(outline.design())
    _print_auto(outline)
    if stored.stale:
        console.print(
            f"[yellow]{escape(str(stale_error(camp.name, stored.stale)))}[/]\n"
            "hint: give the file another `name = ...` to keep both, or run with --replace",
            soft_wrap=True,
        )
    return 0


def _reset_words(policy: str) -> str:
    return {"reinit": "by pgbench -i per run", "never": "never"}.get(policy, f"per {policy}")


def _print_plan(plan: Plan, binaries: dict[str, Binaries]) -> None:
    """The points as a table; what every point shares is said once above it."""
    camp = plan.campaign
    cells: list[dict[str, str]] = []
    settings = [pt.settings for pt in plan.points]  # with those pglab raised
    for pt in plan.points:
        b = binaries[pt.server.binaries_key]
        cells.append(
            {
                "variant": pt.variant,
                "axes": " ".join(f"{k}={v}" for k, v in pt.axes),
                "server": (
                    f"existing {mask_dsn(pt.server.dsn)} (pgbench {b.pgbench_version})"
                    if pt.server.dsn is not None
                    else f"{b.source_text} (PostgreSQL {b.version})"
                ),
                "pgbench": f"{b.pgbench_version}"
                + (f" from {b.pgbench_from}" if b.pgbench_from else " (own)"),
                "dataset": f"{described(pt.dataset)}, reset {_reset_words(pt.dataset.reset)}",
                "storage": "" if pt.storage.is_default else pt.storage.label,
                "os": pt.os.label(name for name, _ in pt.axes),
                "cpus": affinity.plan_words(pt.os),
                "phases": "; ".join(fmt.phase(ph) for ph in pt.phases),
            }
        )
    shared_settings = dict(settings[0])
    for s in settings[1:]:
        shared_settings = {k: v for k, v in shared_settings.items() if s.get(k) == v}
    for c, s in zip(cells, settings, strict=True):
        own = {k: v for k, v in s.items() if k not in shared_settings}
        c["settings"] = ", ".join(f"{k}={v}" for k, v in own.items())
    columns = (
        "variant",
        "axes",
        "server",
        "pgbench",
        "settings",
        "dataset",
        "storage",
        "os",
        "cpus",
        "phases",
    )
    varying = [col for col in columns if len({c[col] for c in cells}) > 1]
    console.print(f"[bold]plan of campaign {escape(camp.name)}[/]")
    for col in columns:
        if col not in varying and cells[0][col] and not (col == "variant" and len(cells) > 1):
            console.print(f"  {col}: {cells[0][col]}", markup=False, soft_wrap=True)
    if shared_settings:
        text = ", ".join(f"{k}={v}" for k, v in shared_settings.items())
        console.print(f"  settings of every point: {text}", markup=False, soft_wrap=True)
    if varying:
        table = Table()
        table.add_column("#", justify="right")
        for col in varying:
            table.add_column(col)
        for i, c in enumerate(cells, 1):
            table.add_row(str(i), *(escape(c[col]) for col in varying))
        console.print(table)
    most = "at most " if camp.sequential is not None else ""
    console.print(
        f"{len(plan.points)} point(s) × {_repeats_words(camp)} = {most}"
        f"{len(plan.points) * camp.repeats} run(s); {plan.done} already stored, "
        f"{len(plan.runs)} to do; order {camp.order}; "
        f"estimated {duration_text(plan.estimated_seconds())}{' at most' if most else ''}"
    )
    for note in plan.notes:
        if note.startswith("warning: "):
            console.print(
                f"[yellow]warning:[/] {escape(note.removeprefix('warning: '))}", soft_wrap=True
            )
        else:
            console.print(escape(note), soft_wrap=True)
    console.print("settings, scripts, connections, disk, memory and time checked: no problems")


def _repeats_words(camp: Campaign) -> str:
    if camp.sequential is None:
        return f"{camp.repeats} repeat(s)"
    return f"{camp.sequential.min}–{camp.sequential.max} repeats (auto)"


def _print_auto(outline: campaign_run.Outline) -> None:
    """What repeats = "auto" is expected to take, and how it stops."""
    auto, plan = outline.auto, outline.plan
    if auto is None:
        return
    how = plan.campaign.sequential
    until = (
        f"its Δ% is known within ±{how.precision:g}%"
        if how and how.precision
        else "its comparisons are decided"
    )
    console.print(
        f"[dim]{escape(auto.text())}; estimated {duration_text(outline.seconds)} "
        f"expected, {duration_text(plan.estimated_seconds())} at most. Each point runs in "
        f"rounds until {until} (anytime-valid confidence sequences: see "
        "docs/concepts/statistics.md)[/]",
        soft_wrap=True,
    )


def _print_design(design: verdicts.Design | None) -> None:
    """Whether the repeats can resolve the campaign's comparisons, said before anything runs."""
    if design is None:
        return
    if design.enough:
        console.print(f"[dim]verdicts: {escape(design.text())}[/]", soft_wrap=True)
    else:
        console.print(
            f"[yellow]warning:[/] {escape(design.text())}. Comparisons that find nothing will "
            "say ? (could not tell), not ~ (no difference): raise `repeats`, or set the effect "
            "worth finding with \\[analysis] effect = N (%)",
            soft_wrap=True,
        )
