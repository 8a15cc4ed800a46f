"""``pglab history NAME``: a campaign's executions as a series per point, with change points."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.markup import escape

from pglab.analysis import evidence, history
from pglab.analysis import executions as ex
from pglab.analysis.points import MIN_CI_REPEATS
from pglab.cli import commands, fmt
from pglab.cli.common import Where, console, err_console
from pglab.cli.evidence_view import print_evidence
from pglab.errors import LabError
from pglab.jsonish import JsonObject
from pglab.report import history as history_page

HELP = """\
A campaign's executions as a series per point: each execution's median and 95% CI of a figure,
and the change points where its level moved, each with its Δ% (the executions after it against
those before it) and 95% CI, and why it changed: what else moved between the runs of the two
levels (waits, the busy machine, CPU, WAL, …: each with its Δ and 95% CI, Welch; see pglab
compare --help); --json gives every item of each change point under its "evidence".

Executions are made by `pglab run FILE --execution [LABEL]`: each is stored as the campaign
NAME@LABEL (by default the UTC time it started), so that running the file again measures again
rather than resuming. History reads NAME and every NAME@…, in the order they started. Change
points are found by circular binary segmentation with a permutation test over whole executions
(at most 5% false alarms per series without a change: bench/history.py measures it).

A point without a change point is one level only if a change could have been found: with too
few executions for its noise (fewer than 9 at any noise), it says "too few executions to find a
change of X% at this noise (N needed)", X the --fail-above PCT or the campaign's [analysis]
effect (10% by default).

exit status: 0; 1 with --fail-above PCT when a point's last change point made its figure worse
by more than PCT % (significantly: its CI excludes 0) — for a nightly job or CI; 3 with
--fail-above PCT when no point regressed but one without a change point has too few executions
to find a change of PCT % at its noise (undecided, not a pass).

examples:
  pglab run nightly.toml --execution        one execution (cron, or pglab's fleet)
  pglab history nightly
  pglab history nightly --point 'clients=8' --figure latency_avg_ms
  pglab history nightly --fail-above 5 --json
  pglab history nightly --html nightly-history.html
"""


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "history",
        parents=[common],
        help=commands.help_of("history"),
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", help="the campaign's name (its executions are NAME@LABEL)")
    p.add_argument("--point", help="only the points whose label holds these words")
    p.add_argument(
        "--figure",
        help="the figure followed: by default the one the points are judged on "
        "everywhere (tps; nopm for the TPC-C-like kit), or a run metric: "
        "latency_avg_ms, nopm, …",
    )
    p.add_argument(
        "--fail-above",
        type=float,
        metavar="PCT",
        help="exit 1 when a last change point is a regression above PCT %%; exit 3 "
        "when none is but a point has too few executions to find PCT %%",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write the series as a page: a chart per point with its CI band "
        "and change points, and its table (one file, no network needed)",
    )
    p.set_defaults(
        func=lambda a: run(
            Where.from_args(a), a.name, a.point, a.figure, a.fail_above, a.json, a.html
        )
    )


def run(
    where: Where,
    name: str,
    point: str | None = None,
    figure: str | None = None,
    fail_above: float | None = None,
    as_json: bool = False,
    html: Path | None = None,
) -> int:
    with where.open(read_only=True) as store:
        found = ex.executions_of(store, name)
        if figure is None:  # the figure show and compare judge these points on
            figure = ex.default_figure(found)
        if found and html is not None:
            written = history_page.write(store, name, html, figure, point)
            err_console.print(f"history page written: {written}", soft_wrap=True, markup=False)
        effect = fail_above if fail_above is not None else ex.effect_of(store, found)
        if not found:
            raise LabError(
                f"no campaign {name!r} (nor {name}@…) has runs in {where.store_url}",
                hint="pglab ls --campaigns lists them",
            )
        _, points = ex.checked_histories(found, name, figure, point, store.run_fingerprint)
    failing = [
        (p, c)
        for p in points
        if fail_above is not None
        for c in [p.regression(fail_above)]
        if c is not None
    ]
    blind = [
        p
        for p in points
        if fail_above is not None
        for r in [p.reach(fail_above)]
        if r is not None and not r.enough
    ]
    if as_json:
        with where.open(read_only=True) as store:  # what moved with each change point
            why = {
                (p.point, k): evidence.json_of(evidence.of_change(store, p, k))
                for p in points
                for k in range(len(p.changes))
            }
        print(json.dumps(_as_json(name, found, points, effect, why), indent=2))
    else:
        _print(name, found, points, effect)
        with where.open(read_only=True) as store:  # what moved with each change point
            print_evidence(evidence.of_changes(store, points), titled=True)
        for p, c in failing:
            console.print(
                f"[bold red]regression:[/] {escape(p.point)} at "
                f"{escape(_label(p.steps[c.index].execution))}: {_change(c)}, more "
                f"than {fail_above:g}% worse",
                soft_wrap=True,
            )
        if blind and not failing:
            console.print(
                f"[bold yellow]undecided:[/] {len(blind)} point(s) without enough "
                f"executions to find a change of {fail_above:g}% (exit "
                f"{UNDECIDED})",
                soft_wrap=True,
            )
    return 1 if failing else UNDECIDED if blind else 0


UNDECIDED = 3  # --fail-above: no regression, but too few executions to have found one


def _label(e: ex.Execution) -> str:
    return e.label or e.campaign


def _change(c: history.ChangePoint) -> str:
    k = c.comparison
    ci = f" [{k.ci_low:+.1f}, {k.ci_high:+.1f}]" if k.ci_low is not None else ""
    held = f" ? {k.reason}" if k.verdict == "?" and k.reason else ""
    return f"{k.delta_pct:+.1f}%{ci} (p {c.p_value:.3f}){held}"


def _print(
    name: str, found: list[ex.Execution], points: list[ex.PointHistory], effect: float
) -> None:
    first, last = fmt.when(found[0].started_at), fmt.when(found[-1].started_at)
    console.print(
        f"[bold]{escape(name)}[/]: {len(found)} execution(s), {first} … {last}", soft_wrap=True
    )
    commits = any(e.commit for e in found)
    for p in points:
        changes = {c.index: c for c in p.changes}
        cells: dict[str, list[str]] = {
            k: [] for k in ("execution", "started", "commit", "runs", p.figure, "95% CI", "change")
        }
        for i, step in enumerate(p.steps):
            s, e = step.summary, step.execution
            cells["execution"].append(_label(e))
            cells["started"].append(fmt.when(e.started_at))
            cells["commit"].append((e.commit or "–")[:10])
            cells["runs"].append(str(s.n))
            cells[p.figure].append(fmt.short(s.median))
            cells["95% CI"].append(_spread(step))
            cells["change"].append(_change(changes[i]) if i in changes else "")
        columns = [
            (h, "left" if h in ("execution", "started", "commit", "change") else "right", c)
            for h, c in cells.items()
            if h != "commit" or commits
        ]
        console.print(fmt.table(p.point, columns, console.width))
        console.print(f"  {escape(p.point)}: {escape(p.said(effect))}", soft_wrap=True)


def _spread(step: ex.Step) -> str:
    """The 95% CI of the mean from MIN_CI_REPEATS runs on (as show's table), else the range."""
    s = step.summary
    if s.n >= MIN_CI_REPEATS and s.ci_low is not None:
        return f"{fmt.short(s.ci_low)} – {fmt.short(s.ci_high)}"
    if s.n >= 2:
        return f"range {fmt.short(min(step.values))} – {fmt.short(max(step.values))}"
    return "–"


def _as_json(
    name: str,
    found: list[ex.Execution],
    points: list[ex.PointHistory],
    effect: float,
    why: dict[tuple[str, int], list[JsonObject]],
) -> Any:
    """``history --json``: the executions, each point's series and its change points, each
    with its evidence (``why``: by point and change, ``evidence.json_of``)."""

    def iso(t: float) -> str:
        return datetime.fromtimestamp(t, UTC).isoformat()

    return {
        "campaign": name,
        "executions": [
            {
                "campaign": e.campaign,
                "label": e.label,
                "started_at": iso(e.started_at),
                "commit": e.commit,
                "runs": len(e.runs),
            }
            for e in found
        ],
        "points": [
            {
                "point": p.point,
                "figure": p.figure,
                "series": [
                    {
                        "execution": s.execution.campaign,
                        "values": list(s.values),
                        "median": s.summary.median,
                        "ci": [s.summary.ci_low, s.summary.ci_high],
                    }
                    for s in p.steps
                ],
                "changes": [
                    {
                        "execution": p.steps[c.index].execution.campaign,
                        "delta_pct": c.comparison.delta_pct,
                        "ci": [c.comparison.ci_low, c.comparison.ci_high],
                        "p_value": c.p_value,
                        "verdict": c.comparison.verdict,
                        "reason": c.comparison.reason,
                        "worse_pct": history.regression_pct(c, p.figure),
                        "evidence": why.get((p.point, k), []),
                    }
                    for k, c in enumerate(p.changes)
                ],
                "reach": _reach(p.reach(effect)),
            }
            for p in points
        ],
    }


def _reach(r: history.Reach | None) -> Any:
    """Without a change point, what could have been found (None: change points were)."""
    if r is None:
        return None
    return {
        "executions": r.executions,
        "noise_pct": r.noise_pct,
        "noise_source": r.noise_source,
        "effect_pct": r.effect_pct,
        "needed": r.needed,
        "enough": r.enough,
        "text": r.text(),
    }
