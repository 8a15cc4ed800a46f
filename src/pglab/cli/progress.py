"""What a person sees while a campaign runs: a progress bar with the current point, live TPS
and an ETA over the estimated work, and a line per finished run. On a terminal, with ``panel``,
the live view (``cli/live.py``) is drawn where the bar would be."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from rich.console import RenderableType
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from pglab import workloads
from pglab.analysis import points
from pglab.campaign.spec import RunSpec
from pglab.cli.common import console
from pglab.planning.plan import RUN_OVERHEAD_S
from pglab.postgres.build import Build
from pglab.records import ProgressSample, RunResult, reason_of
from pglab.telemetry.base import Table
from pglab.units import duration_text


def say(message: str) -> None:
    """What the executor says, as a line above the progress (a warning in yellow, else dim)."""
    if message.startswith("warning: "):
        text = escape(message.removeprefix("warning: "))
        console.print(f"[yellow]warning:[/] {text}", soft_wrap=True)
    else:
        console.print(f"[dim]{escape(message)}[/]")


class _Progress(Progress):
    """A Progress that draws ``panel()``, when given, instead of its bar (lines printed go above
    either)."""

    def __init__(
        self,
        *columns: str | ProgressColumn,
        panel: Callable[[], RenderableType] | None = None,
        **kwargs: Any,
    ) -> None:
        self.panel = panel  # first: Progress draws itself once while it is made
        super().__init__(*columns, **kwargs)

    def get_renderables(self) -> Iterable[RenderableType]:
        if self.panel is None:
            yield from super().get_renderables()
        else:
            yield self.panel()


class ProgressEvents:
    """Draws the campaign's progress: current point, live TPS, ETA over estimated work; with
    ``panel``, that panel instead of the bar."""

    def __init__(self, total_seconds: float, panel: Callable[[], RenderableType] | None = None):
        self.progress = _Progress(
            TextColumn("[bold]{task.fields[run]}[/]"),
            BarColumn(),
            TextColumn("{task.description}"),
            TextColumn("{task.fields[tps]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
            refresh_per_second=4,
            panel=panel,
        )
        self.task: TaskID = self.progress.add_task("", total=max(total_seconds, 1), run="", tps="")
        self.run_budget = 0.0
        self.run_used = 0.0

    def __enter__(self) -> ProgressEvents:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def status(self, message: str) -> None:
        say(message)

    def run_started(self, run: RunSpec, index: int, total: int) -> None:
        self.run_budget = run.estimated_seconds() + RUN_OVERHEAD_S
        self.run_used = 0.0
        self.progress.update(
            self.task,
            run=f"run {index}/{total}",
            description=f"{escape(run.label)} #{run.repeat}",
            tps="",
        )

    def phase_started(self, run: RunSpec, phase: str, iteration: int) -> None:
        label = run.label if len(run.phases) == 1 else f"{run.label} · {phase} {iteration}"
        tps = "" if run.live(phase) else "no live TPS (progress = false)"
        self.progress.update(self.task, description=f"{escape(label)} #{run.repeat}", tps=tps)

    def progress_sample(self, sample: ProgressSample) -> None:
        if self.run_used + 1 < self.run_budget:
            self.run_used += 1
            self.progress.advance(self.task, 1)
        self.progress.update(self.task, tps=f"{sample.tps:,.0f} tps")

    def operation_progress(self, text: str) -> None:
        """A maintenance operation's progress in words, where pgbench's TPS goes."""
        self.progress.update(self.task, tps=escape(text))

    def run_finished(self, run: RunSpec, result: RunResult) -> None:
        self.progress.advance(self.task, self.run_budget - self.run_used)
        if result.status == "ok":
            figures = result.metrics.of_run()
            tps = workloads.figure_value(figures) or 0.0
            unit = points.figure_of_run(figures)  # MB/s, QphH: not always TPS
            self.progress.console.print(f"  ✓ {escape(run.label)} #{run.repeat}: {tps:,.1f} {unit}")
        else:
            self.progress.console.print(
                f"  [red]✗ {escape(run.label)} #{run.repeat}: {escape(reason_of(result.error))}[/]"
            )


class ExecutorEvents:
    """Adapter: the executor calls ``progress(sample)``; ProgressEvents owns a rich Progress."""

    def __init__(self, view: ProgressEvents):
        self.view = view

    def status(self, message: str) -> None:
        self.view.status(message)

    def run_started(self, run: RunSpec, index: int, total: int) -> None:
        self.view.run_started(run, index, total)

    def phase_started(self, run: RunSpec, phase: str, iteration: int) -> None:
        self.view.phase_started(run, phase, iteration)

    def progress(self, sample: ProgressSample) -> None:
        self.view.progress_sample(sample)

    def operation(self, text: str) -> None:
        self.view.operation_progress(text)

    def telemetry(self, tables: dict[str, Table]) -> None: ...  # drawn from the live state

    def run_finished(self, run: RunSpec, result: RunResult) -> None:
        self.view.run_finished(run, result)


class BuildProgress:
    """What a person sees while pglab builds PostgreSQL: the current step and the time since
    the build began (a spinner on a terminal), a line per step, and where the build went."""

    def __init__(self, what: str):
        self.what = what
        self.started = time.monotonic()
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self.task = self.progress.add_task(f"building {escape(what)}", total=None)
        self.step_name: str | None = None

    def __enter__(self) -> BuildProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def step(self, name: str) -> None:
        if name == self.step_name:
            return
        self.step_name = name
        elapsed = duration_text(time.monotonic() - self.started)
        self.progress.console.print(f"[dim]build: {escape(name)} ({elapsed} so far)[/]")
        self.progress.update(self.task, description=f"building {escape(self.what)}: {name}")

    def done(self, made: Build) -> None:
        info = made.info
        if made.built_now:
            took = duration_text(float(info.get("build_seconds", 0)))
            text = f"built PostgreSQL {info.get('version')} in {took}"
        else:
            text = f"PostgreSQL {info.get('version')} found in the build cache"
        self.progress.console.print(f"{text}: {made.root} (log: {made.log.name})", soft_wrap=True)
