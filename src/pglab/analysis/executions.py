"""A campaign's executions as series: what ``pglab history`` reads from the store.

``pglab run FILE --execution [LABEL]`` stores each execution of a campaign file as its own
campaign, ``NAME@LABEL`` (by default the UTC time it started: ``NAME@20261126T020000Z``), so
that running the file again measures again instead of resuming. The executions of ``NAME`` are
``NAME`` itself and every ``NAME@…``, in the order they started; a point is followed across them
by its label (the variant and matrix coordinates), the same in each as long as the file keeps
them; the commit a build from git made is read from each execution's first run.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pglab.analysis import history, spreads, verdicts
from pglab.analysis.points import KIT_HEADLINES, figure_of
from pglab.analysis.points import effect_of as campaign_effect
from pglab.campaign.execution import SEP
from pglab.errors import LabError
from pglab.fingerprints import Fingerprint
from pglab.metric_units import MetricKey
from pglab.rows import RunRow, StoredRun
from pglab.stats.summary import PointSummary, summarize_point

if TYPE_CHECKING:  # the store's type only: its module is not imported to run this
    from pglab.store.base import Store

FingerprintOf = Callable[[int], Fingerprint | None]  # a run's id -> its fingerprint (the store's)


@dataclass(frozen=True)
class Execution:
    campaign: str  # NAME@LABEL (or NAME)
    label: str  # LABEL ("" for NAME itself)
    started_at: float
    commit: str | None
    runs: tuple[RunRow, ...]


@dataclass(frozen=True)
class Step:
    """One execution of one point: its runs' values of the figure."""

    execution: Execution
    values: tuple[float, ...]
    summary: PointSummary


@dataclass(frozen=True)
class PointHistory:
    point: str
    figure: str
    steps: tuple[Step, ...]  # the executions where the point has a value, in order
    changes: tuple[history.ChangePoint, ...] = field(default=())

    def regression(self, above_pct: float) -> history.ChangePoint | None:
        """The last change point when it made the figure significantly worse by more than
        ``above_pct`` %: what ``--fail-above`` exits on."""
        if not self.changes:
            return None
        last = self.changes[-1]
        c = last.comparison
        worse = history.regression_pct(last, self.figure)
        significant = (
            c.verdict != "?"  # within the spread of identical builds: not the source's
            and c.ci_low is not None
            and c.ci_high is not None
            and c.ci_low * c.ci_high > 0
        )
        return last if significant and worse > above_pct else None

    def reach(self, effect_pct: float) -> history.Reach | None:
        """Without a change point, whether one of ``effect_pct`` could have been found (None:
        it has change points)."""
        if self.changes:
            return None
        return history.reach([s.values for s in self.steps], effect_pct)

    def said(self, effect_pct: float) -> str:
        """Its change points in words: how many, or one level, or too few executions to tell."""
        found = self.reach(effect_pct)
        return f"{len(self.changes)} change point(s)" if found is None else found.text()


def default_figure(executions: Sequence[Execution]) -> str:
    """The figure a history follows unless told: the one the points are judged on in every
    view (``points.figure_of``): ``nopm`` for the TPC-C-like kit's runs, else ``tps`` (which
    holds MB/s, QphH... for the other kinds)."""
    runs = [r for e in executions for r in e.runs]
    return KIT_HEADLINES.get(figure_of(runs), "tps")


def executions_of(store: Store, name: str) -> list[Execution]:
    """``name``'s executions with runs, oldest first."""
    family = [
        c["name"]
        for c in store.list_campaigns()
        if c["name"] == name or c["name"].startswith(name + SEP)
    ]
    out = []
    for campaign in family:
        runs = tuple(store.list_runs(campaign))
        if not runs:
            continue
        fp = store.run_fingerprint(runs[0].id) or {}
        label = campaign[len(name) + 1 :] if campaign != name else ""
        started = min(r.started_at for r in runs)
        out.append(Execution(campaign, label, started, fp.get("build_commit"), runs))
    return sorted(out, key=lambda e: e.started_at)


def effect_of(store: Store, executions: Sequence[Execution]) -> float:
    """The effect of interest of the latest execution's campaign (``[analysis] effect``, 10%
    by default): the change a series without a change point should have been able to find."""
    latest = store.get_campaign(executions[-1].campaign) if executions else None
    return campaign_effect(latest)


def value_of(run: RunRow, figure: str) -> float | None:
    if not run.ok:
        return None
    found = run.tps if figure == "tps" else run.metrics.get(figure)
    return float(found) if isinstance(found, int | float) and found > 0 else None


def point_histories(
    executions: Sequence[Execution],
    figure: str = "tps",
    point: str | None = None,
    seed: int = 0,
    fingerprint_of: FingerprintOf | None = None,
) -> list[PointHistory]:
    """Each point's series (``point``: only those whose label holds each of its words) with
    its change points; with ``fingerprint_of``, a change between two builds is held to the
    spread of identical builds (``_held_to_spread``)."""
    labels = list(dict.fromkeys(r.label for e in executions for r in e.runs))
    if point is not None:
        words = point.split()
        labels = [lb for lb in labels if all(w in lb.split() for w in words)]
    out = []
    for label in labels:
        steps = []
        for e in executions:
            values = [
                v
                for r in e.runs
                if r.label == label
                for v in [value_of(r, figure)]
                if v is not None
            ]
            if values:
                steps.append(Step(e, tuple(values), summarize_point(values)))
        changes = history.change_points([s.values for s in steps], seed=seed) if steps else []
        if fingerprint_of is not None:
            changes = [_held_to_spread(c, steps, label, fingerprint_of) for c in changes]
        out.append(PointHistory(label, figure, tuple(steps), tuple(changes)))
    return out


def _held_to_spread(
    c: history.ChangePoint, steps: Sequence[Step], label: str, fingerprint_of: FingerprintOf
) -> history.ChangePoint:
    """A change point whose executions on either side ran two different builds, held to the
    spread of identical builds their runs carry (issue 58, ``verdicts.beyond_spread``): a change
    within it could be the builds' own offset, not the source's, and is said with "?". Only the
    two executions beside the change are read (two fingerprints, not one per run)."""
    sides = []
    for step in (steps[c.index - 1], steps[c.index]):
        run = next(r for r in step.execution.runs if r.label == label)
        sides.append([StoredRun.of(run, fingerprint=fingerprint_of(run.id) or {})])
    spread = spreads.spread_between(sides[0], sides[1])
    if spread is None:
        return c
    return replace(c, comparison=verdicts.beyond_spread(c.comparison, spread))


def figures_of(executions: Sequence[Execution]) -> list[str]:
    """The figures a history can follow: tps and every numeric run metric."""
    names = {
        k
        for e in executions
        for r in e.runs
        for k, v in r.metrics.items()
        if isinstance(v, int | float) and MetricKey.parse(k).phase is None
    }
    return ["tps", *sorted(names - {"tps"})]


def checked_histories(
    executions: Sequence[Execution],
    name: str,
    figure: str,
    point: str | None,
    fingerprint_of: FingerprintOf | None = None,
) -> tuple[list[str], list[PointHistory]]:
    """The figures ``name``'s executions have, and its points' histories of ``figure``; a
    LabError naming the figures (did-you-mean) or the points when ``figure`` or ``point`` is
    none of them (what ``pglab history`` and the served page both say)."""
    figures = figures_of(executions)
    if figure not in figures:
        close = difflib.get_close_matches(figure, figures, n=1)
        raise LabError(
            f"figure {figure!r}: not one of {name}'s"
            + (f' — did you mean "{close[0]}"?' if close else ""),
            hint="figures: " + ", ".join(figures),
        )
    points = point_histories(executions, figure, point, fingerprint_of=fingerprint_of)
    if not points:
        labels = sorted({r.label for e in executions for r in e.runs})
        raise LabError(f"no point of {name} matches {point!r}", hint="points: " + "; ".join(labels))
    return figures, points
