"""A campaign's history as a page: its executions (``pglab run --execution``) as a series per
point, with its change points, as ``pglab history`` reads them (``analysis.executions``). The
model of ``pglab serve``'s ``/history/NAME`` and of the file ``pglab history NAME --html FILE``
writes (self-contained: plotly.js in the page), one template for both.

What the template reads is a ``HistoryPage``: a ``PointHistoryView`` per point (a
``HistoryRow`` per execution, and the ``HistoryChart``'s numbers, JSON in the page)."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

import markupsafe

from pglab import __version__, report
from pglab.analysis import executions as ex
from pglab.analysis.history import ChangePoint
from pglab.analysis.points import MIN_CI_REPEATS
from pglab.errors import LabError
from pglab.store import Store


class HistoryRow(TypedDict):
    """An execution of a point as the table shows it: its runs' median and spread (the 95%
    CI with enough runs, else their range), and the change point found there, if any."""

    execution: ex.Execution
    runs: int
    median: float
    low: float
    high: float
    spread: str  # "95% CI", "range", or "" for one run
    change: ChangePoint | None


class HistoryChart(TypedDict):
    """A point's history as the page draws it: per execution (named by its label), the median
    and the spread's ends; the executions where the figure changed."""

    x: list[str]
    y: list[float]
    low: list[float]
    high: list[float]
    changes: list[str]


class PointHistoryView(TypedDict):
    point: str
    rows: list[HistoryRow]
    changes: int  # how many change points
    chart: HistoryChart
    said: str  # its change points in words (``PointHistory.said``)


class HistoryPage(TypedDict):
    """What ``history_page.html.j2`` (and serve's ``history.html.j2``) are rendered with."""

    name: str
    figure: str
    figures: list[str]  # the figures the executions have
    executions: list[ex.Execution]
    points: list[PointHistoryView]


def page(store: Store, name: str, figure: str | None, point: str | None) -> HistoryPage | None:
    """What the page shows of ``name``'s history of ``figure`` (None: the one its points are
    judged on, ``executions.default_figure``); None when it has no runs (a 404); a LabError
    for a figure it has not or a point that matches none."""
    found = ex.executions_of(store, name)
    if not found:
        return None
    figure = figure or ex.default_figure(found)
    figures, points = ex.checked_histories(found, name, figure, point, store.run_fingerprint)
    effect = ex.effect_of(store, found)
    return HistoryPage(
        name=name,
        figure=figure,
        figures=figures,
        executions=found,
        points=[_point(p, effect) for p in points],
    )


def _point(p: ex.PointHistory, effect: float) -> PointHistoryView:
    changes = {c.index: c for c in p.changes}
    rows: list[HistoryRow] = []
    for i, step in enumerate(p.steps):
        s, c = step.summary, changes.get(i)
        if s.n >= MIN_CI_REPEATS and s.ci_low is not None and s.ci_high is not None:
            low, high, spread = s.ci_low, s.ci_high, "95% CI"
        else:
            low, high, spread = min(step.values), max(step.values), "range"
        rows.append(
            HistoryRow(
                execution=step.execution,
                runs=s.n,
                median=s.median,
                low=low,
                high=high,
                spread=spread if s.n >= 2 else "",
                change=c,
            )
        )
    names = [s.execution.label or s.execution.campaign for s in p.steps]
    chart = HistoryChart(
        x=names,
        y=[r["median"] for r in rows],
        low=[r["low"] for r in rows],
        high=[r["high"] for r in rows],
        changes=[names[i] for i in sorted(changes)],
    )
    return PointHistoryView(
        point=p.point, rows=rows, changes=len(p.changes), chart=chart, said=p.said(effect)
    )


def write(
    store: Store, name: str, path: Path, figure: str = "tps", point: str | None = None
) -> Path:
    """The history page of ``name`` as one file (None from ``page``: a LabError)."""
    found = page(store, name, figure, point)
    if found is None:
        raise LabError(
            f"no campaign {name!r} (nor {name}@…) has runs in the store",
            hint="pglab ls --campaigns lists them",
        )
    html = (
        report.environment()
        .get_template("history_page.html.j2")
        .render(
            served=None,
            version=__version__,
            when=report.when_text,
            num=report.num_text,
            plotly_js=markupsafe.Markup(report.plotly_js()),
            **found,
        )
    )
    path.write_text(html)
    return path
