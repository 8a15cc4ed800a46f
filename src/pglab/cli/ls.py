"""``pglab ls``: stored runs, or campaigns, as a table or JSON; a failed run with its reason."""

from __future__ import annotations

import argparse
import json

from rich.console import JustifyMethod
from rich.markup import escape
from rich.table import Table

from pglab.cli import fmt
from pglab.cli.common import Where, console
from pglab.records import reason_of
from pglab.rows import plain


def add_parser(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ls", parents=[common], help="list stored runs")
    p.add_argument("--campaign", metavar="NAME", help="only this campaign's runs")
    p.add_argument("--campaigns", action="store_true", help="list campaigns instead of runs")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(
        func=lambda a: run(Where.from_args(a), a.campaign, campaigns=a.campaigns, as_json=a.json)
    )


def run(where: Where, campaign: str | None = None, campaigns: bool = False,
        as_json: bool = False) -> int:  # fmt: skip
    with where.open(read_only=True) as store:
        if campaigns:
            rows = store.list_campaigns()
            if as_json:
                print(json.dumps(rows, indent=2, default=str))
                return 0
            table = Table(title="campaigns")
            for col in ("name", "runs ok", "failed", "last run"):
                table.add_column(col)
            for c in rows:
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
    table = Table(title="runs" + (f" of {campaign}" if campaign else ""))
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("id", "right"),
        ("campaign", "left"),
        ("point", "left"),
        ("rep", "right"),
        ("status", "left"),
        ("tps", "right"),
        ("finished", "left"),
    )
    failed = any(not r.ok for r in runs)
    if failed:
        columns += (("reason", "left"),)
    for col, just in columns:
        table.add_column(col, justify=just)
    for r in runs:
        table.add_row(
            str(r.id),
            escape(r.campaign),
            escape(r.label),
            str(r.repeat),
            r.status if r.ok else f"[red]{r.status}[/]",
            f"{r.tps:,.1f}" if r.tps is not None else "–",
            fmt.when(r.finished_at),
            *([escape(reasons[r.id] or "")] if failed else []),
        )
    console.print(table)
    if not runs:
        console.print("no runs stored yet: try `pglab quick`")
    return 0
