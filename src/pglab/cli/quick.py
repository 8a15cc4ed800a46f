"""``pglab quick``: the zero-config benchmark on the embedded PostgreSQL, ending with a report."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from pglab.campaign import parse as campaigns
from pglab.cli import run as running
from pglab.cli.common import Where
from pglab.errors import LabError


def add_parser(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "quick",
        parents=[common],
        help="zero-config benchmark on the embedded PostgreSQL",
        description="Run a small campaign on the embedded PostgreSQL 18: select-only and "
        "tpcb-like at 1, 4 and 16 clients, scale 10, 2 repeats; about 3 minutes; ends "
        "with a summary table and an HTML report.",
    )
    p.add_argument(
        "--duration", type=int, default=10, metavar="S", help="seconds per run (default 10)"
    )
    p.add_argument("--repeats", type=int, default=2, help="runs per point (default 2)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    p.add_argument(
        "--no-report", dest="report", action="store_false", help="do not write the HTML report"
    )
    p.set_defaults(
        func=lambda a: run(
            Where.from_args(a), a.duration, a.repeats, dry_run=a.dry_run, report=a.report
        )  # fmt: skip
    )


def quick_document(duration: int, repeats: int) -> dict[str, Any]:
    return {
        "name": "quick-" + datetime.now().strftime("%Y%m%d-%H%M%S"),
        "description": "pglab quick: select-only and tpcb-like over client counts, "
        "embedded PostgreSQL",
        "repeats": repeats,
        "dataset": {"scale": 10},
        "workload": {"duration": duration},
        "matrix": {"script": ["select-only", "tpcb-like"], "clients": [1, 4, 16]},
    }


def run(where: Where, duration: int = 10, repeats: int = 2, dry_run: bool = False,
        report: bool = True) -> int:  # fmt: skip
    if duration < 1 or repeats < 1:
        raise LabError("--duration and --repeats must be at least 1")
    camp = campaigns.parse(quick_document(duration, repeats), default_name="quick")
    return running.execute(where, camp, dry_run=dry_run, report_after=report)
