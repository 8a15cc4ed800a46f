"""``pglab quick``: the zero-config benchmark on the embedded PostgreSQL (or, with ``--dsn``, on
an existing server: read-only unless ``--allow-writes``), ending with a report."""

from __future__ import annotations

import argparse
from datetime import datetime

from pglab.campaign import parse as campaigns
from pglab.cli import commands
from pglab.cli import run as running
from pglab.cli.common import Where
from pglab.errors import LabError
from pglab.jsonish import TomlTable


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "quick",
        parents=[common],
        help=commands.help_of("quick"),
        description="Run a small campaign on the embedded PostgreSQL 18: select-only and "
        "tpcb-like at 1, 4 and 16 clients, scale 10, 2 repeats of 7 s; about 2 minutes; ends "
        "with a summary table and an HTML report.\n\n"
        "With --dsn, the same on a server you already have, which pglab never starts, stops "
        "or reconfigures: it makes a database of its own (pglab_bench) for the pgbench tables "
        "and runs select-only only, unless --allow-writes adds tpcb-like.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--duration", type=int, default=7, metavar="S", help="seconds per run (default 7)"
    )
    p.add_argument("--repeats", type=int, default=2, help="runs per point (default 2)")
    p.add_argument(
        "--dsn",
        metavar="URL",
        help="an existing server: postgresql://user@host:5432/postgres or key=value (the "
        "password from ~/.pgpass or PGPASSWORD is best; one given here is never printed or "
        "stored)",
    )
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="with --dsn: also run tpcb-like, which writes (in pglab's own database only)",
    )
    running.add_reinit(p)
    p.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    p.add_argument(
        "--no-report", dest="report", action="store_false", help="do not write the HTML report"
    )
    p.set_defaults(
        func=lambda a: run(
            Where.from_args(a),
            a.duration,
            a.repeats,
            dry_run=a.dry_run,
            report=a.report,
            dsn=a.dsn,
            allow_writes=a.allow_writes,
            reinit=a.reinit,
        )
    )


def quick_document(
    duration: int, repeats: int, dsn: str | None = None, allow_writes: bool = False
) -> TomlTable:
    scripts = ["select-only", "tpcb-like"] if dsn is None or allow_writes else ["select-only"]
    doc: TomlTable = {
        "name": "quick-" + datetime.now().strftime("%Y%m%d-%H%M%S"),
        "description": f"pglab quick: {' and '.join(scripts)} over client counts, "
        + ("embedded PostgreSQL" if dsn is None else "an existing server"),
        "repeats": repeats,
        "dataset": {"scale": 10},
        "workload": {"duration": duration},
        "matrix": {"script": scripts, "clients": [1, 4, 16]},
    }
    if dsn is not None:
        doc["server"] = {"dsn": dsn}
    return doc


def run(
    where: Where,
    duration: int = 7,
    repeats: int = 2,
    dry_run: bool = False,
    report: bool = True,
    dsn: str | None = None,
    allow_writes: bool = False,
    reinit: bool = False,
) -> int:
    if duration < 1 or repeats < 1:
        raise LabError("--duration and --repeats must be at least 1")
    if allow_writes and dsn is None:
        raise LabError("--allow-writes is for an existing server: give --dsn too")
    doc = quick_document(duration, repeats, dsn, allow_writes)
    camp = campaigns.parse(doc, default_name="quick")
    return running.execute(where, camp, dry_run=dry_run, report_after=report, reinit=reinit)
