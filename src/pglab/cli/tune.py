"""``pglab tune FILE``: search a campaign file's settings with Optuna within a trial budget (a
pglab run per trial, stored), then confirm the best against the defaults and PGTune's rules
with interleaved repeats. Running it again resumes the study."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from pglab.campaign import schema
from pglab.campaign.spec import RunSpec
from pglab.cli import commands, fmt, live
from pglab.cli.common import Where, console
from pglab.cli.progress import ExecutorEvents, ProgressEvents, say
from pglab.lab import Lab
from pglab.planning.plan import RUN_OVERHEAD_S
from pglab.records import RunResult
from pglab.run import campaign_run
from pglab.run.executor import Events, Executor, QuietEvents
from pglab.run.live import LiveRecorder
from pglab.store import mask_url
from pglab.tune import spec as tune_spec
from pglab.units import duration_text

if TYPE_CHECKING:  # optuna (with SQLAlchemy) takes a second to import: only for a study
    from pglab.tune import summary
    from pglab.tune.trials import TrialRecord

# the [tune] table's layout, made from its declarations (campaign/schema/tune.py)
LAYOUT = schema.help_layout(schema.TUNE_TABLES, schema.TUNE_INTRO)


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "tune",
        parents=[common],
        help=commands.help_of("tune"),
        description="Tune the settings of a campaign file's one point: each trial a pglab run, "
        "stored; then the best configurations, the defaults and PGTune's re-run interleaved "
        "and compared (Δ%, CI, Holm). Running it again resumes the study.\n\n" + LAYOUT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", type=Path, help="tune file (see examples/tune.toml)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="check the file and its knobs against the version's catalog, print the knobs, the "
        "first trials and the estimated duration; runs and writes nothing",
    )
    p.set_defaults(func=lambda a: run(Where.from_args(a), a.file, a.dry_run))


def unit(objective: str) -> str:
    return {"p99": "ms p99", "nopm": "nopm", "geomean": "s geomean", "tpse": "tpse"}.get(
        objective, "tps"
    )


def settings_text(values: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(values.items())) or "(the server's defaults)"


def trial_line(
    rec: TrialRecord,
    best: TrialRecord | None,
    done: int,
    budget: int,
    eta_s: float | None,
    objective: str,
) -> str:
    """One finished trial, as the live table prints it."""
    u = unit(objective)
    if rec.outcome == "ok":
        got = f"✓ {fmt.short(rec.value)} {u}"
        if rec.p99_ms is not None and objective != "p99":
            got += f" (p99 {rec.p99_ms:.1f} ms{'' if rec.feasible else ', over the limit'})"
    else:
        got = f"✗ {rec.outcome}: {rec.error or ''}"
    best_text = f"best {fmt.short(best.value)} {u} (#{best.number})" if best else "best –"
    eta = f" · ETA {duration_text(eta_s)}" if eta_s is not None and done < budget else ""
    return (
        f"trial {done}/{budget} #{rec.number} {rec.source}: {got} · {best_text}{eta}\n"
        f"    {settings_text(rec.settings)}"
    )


class _RunEvents(ExecutorEvents):
    """The runs on the progress bar, a trial counted among the trials; a finished trial's
    line is the study's (``_Events``), a confirmation run's the usual one."""

    def run_started(self, run: RunSpec, index: int, total: int) -> None:
        super().run_started(run, index, total)
        if run.variant.startswith(tune_spec.TRIAL):
            self.view.progress.update(self.view.task, run=f"trial {index}/{total}")

    def run_finished(self, run: RunSpec, result: RunResult) -> None:
        if run.variant.startswith(tune_spec.TRIAL):
            self.view.progress.advance(self.view.task, self.view.run_budget - self.view.run_used)
        else:
            super().run_finished(run, result)


class _Screen(QuietEvents):
    """What a tuning shows as its session runs: before anything is drawn, the lines of what a
    dead pglab left (the executor's first events); then the live view (``run/campaign_run``
    draws it), as ``pglab run``'s. Its outline is the tuning's own, printed before."""

    def __init__(self, total: float) -> None:
        self.total = total
        self.view: ProgressEvents | None = None

    def status(self, message: str) -> None:
        say(message)

    def outlined(self, outline: campaign_run.Outline) -> None: ...

    @contextlib.contextmanager
    def drawing(self, recorder: LiveRecorder) -> Iterator[Events]:
        panel = live.panel_of(recorder.snapshot, "Ctrl-C stops the tuning; run it again to resume")
        self.view = ProgressEvents(self.total, panel=panel if console.is_terminal else None)
        with self.view:
            yield _RunEvents(self.view)


class _Events:
    """A line per finished trial, above the progress bar (or the live view)."""

    def __init__(self, screen: _Screen) -> None:
        self.screen = screen

    def _view(self) -> ProgressEvents:
        assert self.screen.view is not None, "a trial outside the live view"
        return self.screen.view

    def status(self, message: str) -> None:
        say(message)

    def trial_finished(
        self,
        record: TrialRecord,
        best: TrialRecord | None,
        done: int,
        budget: int,
        eta_s: float | None,
        objective: str,
    ) -> None:
        line = trial_line(record, best, done, budget, eta_s, objective)
        self._view().progress.console.print(escape(line), soft_wrap=True)


def run(where: Where, file: Path, dry_run: bool = False) -> int:
    from pglab.tune import confirm, summary, trials

    camp, spec = tune_spec.load(file)
    lab = Lab.open(where.home)
    setup = trials.prepare(camp, spec, lab)
    for w in setup.warnings:
        console.print(f"[yellow]warning:[/] {escape(w.removeprefix('warning: '))}", soft_wrap=True)
    each = setup.base.estimated_seconds() + RUN_OVERHEAD_S
    n_confirm = confirm.count(spec)
    console.print(
        f"tuning [bold]{escape(camp.name)}[/]: {len(setup.knobs)} knob(s), {spec.trials} "
        f"trial(s) of about {duration_text(each)}, then {confirm.count_text(spec)} "
        "confirmation run(s); "
        f"objective {spec.objective}"
        + (f" with p99 ≤ {spec.p99_limit_ms:g} ms" if spec.p99_limit_ms else "")
        + f", sampler {spec.sampler}"
    )
    for k in setup.knobs:
        console.print(f"  {k.name}: {k.describe()}", markup=False)
    if dry_run:
        first = ["the server's defaults"] + (["PGTune's rules"] if spec.pgtune else [])
        first += [settings_text(dict(c)) for c in spec.enqueue]
        console.print(
            f"first trials: {'; '.join(first)} (clamped to the knobs' ranges)",
            markup=False,
            soft_wrap=True,
        )
        if spec.pgtune:
            console.print(
                f"PGTune's rules here: {settings_text(setup.pgtune)}", markup=False, soft_wrap=True
            )
        console.print(
            f"estimated {duration_text(each * (spec.trials + n_confirm))}; the file "
            "and its knobs checked: no problems",
            markup=False,
        )
        return 0
    with where.open() as store, trials.locked(lab, camp.name):
        total = each * (spec.trials + n_confirm)
        # the live view on a terminal, its state in the lab for `pglab watch` (as pglab run's)
        screen = _Screen(total)
        events = _Events(screen)
        search = trials.Search(lab, store, where.store_url, setup, events)
        search.start()  # refuses a study whose point changed, before the progress shows
        how, checked = search.how(total), setup.checked
        executor = Executor(lab, store, screen)
        with campaign_run.session(executor, camp, how, screen, checked) as session:
            search.run(session)  # the trials, then the confirmation: runs of the session
            confirm.run(search, session, events, camp.effect_pct)
        console.print()
        print_summary(console, summary.of(store, where.store_url, camp.name))
        console.print(
            f"\nstored in {mask_url(where.store_url)}; "
            + "   ·   ".join(
                [where.command("show", camp.name), where.command("report", camp.name)]
            ),
            markup=False,
            soft_wrap=True,
        )
    return 0


def _columns(rows: list[list[str]], right: set[int]) -> list[str]:
    """Rows of cells as aligned lines (the last column left as long as it is)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    out = []
    for r in rows:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=False))
        ]
        out.append(("  " + "  ".join(cells) + "  " + r[-1]).rstrip())
    return out


def summary_lines(s: summary.TuneSummary) -> list[str]:
    """The tune study as ``pglab show`` and ``pglab tune`` print it (plain text)."""
    spec = s.spec
    u = unit(spec.objective)
    counts = s.counts()
    ran = counts.get("ok", 0) + counts.get("failed", 0)
    said = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    goal = "maximize" if spec.direction == "maximize" else "minimize"
    limit = f" with p99 ≤ {spec.p99_limit_ms:g} ms" if spec.p99_limit_ms else ""
    lines = [
        f"tune study {s.name}: {goal} {u}{limit}; sampler {spec.sampler}; "
        f"{ran} of {spec.trials} trial(s) run ({said or 'none yet'})"
    ]
    if s.knobs:
        lines.append("knobs: " + "; ".join(f"{k} {v}" for k, v in s.knobs.items()))
    lines += ["", "optimization history"]
    rows = [["#", "source", "outcome", u, "best so far", "settings / reason"]]
    for r, best in zip(s.records, s.best_so_far, strict=True):
        value = fmt.short(r.value) if r.value is not None else "–"
        if r.outcome == "ok" and not r.feasible:
            value += " (p99 over)"
        why = settings_text(r.settings) if r.outcome == "ok" else (r.error or "")
        if r.outcome == "failed":
            why = f"{r.error or ''} · {settings_text(r.settings)}"
        rows.append([str(r.number), r.source, r.outcome, value, fmt.short(best), why])
    lines += _columns(rows, {0, 3, 4}) if len(rows) > 1 else ["  (no trial yet)"]
    lines += ["", f"knob importance: {s.importance_note}"]
    top = max(s.importance.values(), default=0.0) or 1.0
    width = max((len(k) for k in s.importance), default=0)
    for name, v in s.importance.items():
        lines.append(f"  {name.ljust(width)}  {v:5.2f}  {'█' * max(1, round(20 * v / top))}")
    d = s.decision
    if d is None:
        lines += [
            "",
            "confirmation: none (confirm_repeats = 0)"
            if spec.confirm_repeats == 0
            else "confirmation: not run yet",
        ]
        return lines
    m = len(d.rows) - 1
    if spec.adaptive:
        lines += [
            "",
            f"confirmation: adaptive, {spec.confirm_repeats}–{spec.confirm_rounds} "
            "rounds, interleaved, each configuration until its comparison with the "
            "defaults was decided; Δ% (geometric means) with its anytime-valid 95% "
            "interval (confidence sequence of the within-round ratios), Bonferroni over "
            f"{m} comparison(s)",
        ]
    else:
        lines += [
            "",
            "confirmation: each configuration re-run interleaved; Δ% (geometric means) "
            "against the defaults paired by round (within-round ratios), 95% CI, Holm "
            f"over {m} comparison(s)",
        ]
    rows = [
        [
            "configuration",
            "runs",
            f"median {u}",
            "Δ% [95% CI] verdict",
            "p (Bonferroni)" if spec.adaptive else "p (Holm)",
            "search " + u,
        ]
    ]
    searched = {c.label: c.search_value for c in s.candidates}
    for row in d.rows:
        c = row.comparison
        p = f"{c.p_holm:.3g}" if c is not None and c.p_holm is not None else "–"
        limit_note = "" if row.within_limit else " (p99 over the limit)"
        rows.append(
            [
                row.label,
                str(len(row.values)),
                fmt.short(row.median),
                fmt.delta(c, c is None) + limit_note,
                p,
                fmt.short(searched.get(row.label)),
            ]
        )
    lines += _columns(rows, {1, 2, 4})
    lines += ["", f"answer: {d.text}"]
    snippet = s.snippet()
    if snippet:
        lines += ["", "postgresql.conf:"] + ["  " + x for x in snippet.splitlines()]
    return lines


def print_summary(out: Console, s: summary.TuneSummary) -> None:
    for line in summary_lines(s):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
