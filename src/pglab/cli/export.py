"""``pglab export``: a campaign's or a run's stored results as CSV (a row per run) or JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pglab.analysis import export as export_rows
from pglab.cli import common
from pglab.cli.common import Where, err_console
from pglab.rows import plain


def add_parser(sub, common_options: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "export", parents=[common_options], help="export a campaign or run as CSV or JSON"
    )
    p.add_argument("id", help="campaign name or run id")
    p.add_argument("--format", choices=("csv", "json"), default="csv")
    p.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
    p.set_defaults(func=lambda a: run(Where.from_args(a), a.id, a.format, a.output))


def run(where: Where, ident: str, output_format: str = "csv", output: Path | None = None) -> int:
    with where.open(read_only=True) as store:
        kind, obj = common.find(store, ident)
        if kind == "run":
            runs = [obj]
        else:
            runs = [run for r in store.list_runs(obj["name"]) if (run := store.get_run(r.id))]
    if output_format == "json":
        text = json.dumps(plain(runs if kind == "campaign" else obj), indent=2, default=str)
    else:
        text = export_rows.runs_csv(runs)
    if output:
        output.write_text(text)
        err_console.print(f"wrote {len(runs)} run(s) to {output}")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
