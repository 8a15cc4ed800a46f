"""``pglab ls``: stored runs, or campaigns, as a table or JSON; a failed run with its reason."""

from __future__ import annotations

import argparse
import json

from rich.markup import escape
from rich.table import Table

from pglab.analysis import points
from pglab.cli import commands, fmt
from pglab.cli.common import Where, console
from pglab.records import reason_of
from pglab.rows import RunRow, plain


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser("ls", parents=[common], help=commands.help_of("ls"))
    p.add_argument("--campaign", metavar="NAME", help="only this campaign's runs")
    p.add_argument("--campaigns", action="store_true", help="list campaigns instead of runs")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(
        func=lambda a: run(Where.from_args(a), a.campaign, campaigns=a.campaigns, as_json=a.json)
    )


def run(
    where: Where, campaign: str | None = None, campaigns: bool = False, as_json: bool = False
) -> int:
    with where.open(read_only=True) as store:
        if campaigns:
            listed = store.list_campaigns()
            if as_json:
                print(json.dumps(listed, indent=2, default=str))
                return 0
            table = Table(title="campaigns")
            for col in ("name", "runs ok", "failed", "last run"):
                table.add_column(col)
            for c in listed:
                table.add_row(
                    escape(c["name"]),
                    str(c["runs_ok"]),
                    str(c["runs_failed"]),
                    fmt.when(c.get("last_run_at")),
                )
            console.print(table)
            return 0
        runs = store.list_runs(campaign)
    # a failed run's most specific error line; `pglab show ID` has all of it
    reasons = {r.id: reason_of(r.error) if not r.ok else None for r in runs}
    if as_json:
        rows = [{**plain(r), "reason": reasons[r.id]} for r in runs]
        print(json.dumps(rows, indent=2, default=str))
        return 0
    failed = any(not r.ok for r in runs)
    # of one campaign (named in the title): its points by what differs between them
    short = fmt.short_labels([r.label for r in runs]) if campaign else {}
    columns: list[fmt.Column] = [
        ("id", "right", [str(r.id) for r in runs]),
        *((("campaign", "left", [r.campaign for r in runs]),) if not campaign else ()),
        ("point", "left", [short.get(r.label, r.label) for r in runs]),
        ("rep", "right", [str(r.repeat) for r in runs]),
        ("status", "left", [r.status for r in runs]),
        _figure_column(runs),
        ("finished", "left", [fmt.when(r.finished_at) for r in runs]),
        *((("reason", "left", [reasons[r.id] or "" for r in runs]),) if failed else ()),
    ]
    # nothing cut: names and reasons wrap at spaces, numbers and ids keep their width
    table = fmt.table("runs" + (f" of {campaign}" if campaign else ""), columns, console.width)
    console.print(table)
    if not runs:
        console.print("no runs stored yet: try `pglab quick`")
    return 0


def _figure_column(runs: list[RunRow]) -> fmt.Column:
    """The runs' headline figure (``points.figure_of``): "tps", "NOPM" of a TPC-C-like kit,
    "tpsE" of a TPC-E-like one, or "MB/s" for maintenance operations; runs of several kinds
    (every campaign's) have a "figure" column, each value with its unit."""
    figure = {r.id: points.figure_of([r]) for r in runs if r.ok}  # each run's, once
    kinds = set(figure.values())

    def value(r: RunRow) -> float | None:
        return points.figure_value(r, figure[r.id]) if r.ok else r.tps

    if len(kinds) <= 1:
        return (kinds.pop() if kinds else "tps", "right", [fmt.tps(value(r)) for r in runs])
    return (
        "figure",
        "right",
        [
            f"{fmt.tps(v)} {figure[r.id]}"
            if r.ok and (v := value(r)) is not None
            else fmt.tps(None)
            for r in runs
        ],
    )
