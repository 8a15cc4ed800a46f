"""``pglab schema``: the JSON Schema of campaign files (``pglab.campaign.schema``), printed or
written to a file, for editors that check and complete TOML as it is typed."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pglab.campaign import json_schema
from pglab.cli import commands
from pglab.cli.common import Where, err_console

DESCRIPTION = """\
Print the JSON Schema (draft 2020-12) of campaign files, or write it to FILE. It says what
`pglab run` accepts: every table and key, its type, allowed values or range, default and
meaning (the layout `pglab run --help` shows).

With an editor that reads JSON Schemas for TOML (taplo, and VS Code's Even Better TOML,
which is built on it), write the schema next to the campaign files,

  pglab schema -o campaign.schema.json

and put this directive on the first line of a campaign file (taplo reads it only at the
top, where nothing but comments may come before it); its path is relative to that file:

  #:schema ./campaign.schema.json

The editor then marks unknown or misspelled keys, wrong types, values not allowed and
numbers out of range as you type, and shows what each key means. `pglab run` checks the
rest: settings against the server, script files, phase and storage target names.
"""


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "schema",
        parents=[common],
        help=commands.help_of("schema"),
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="file to write")
    p.set_defaults(func=lambda a: run(Where.from_args(a), a.output))


def run(where: Where, output: Path | None = None) -> int:
    """The schema as JSON (indent 2) on standard output, or in ``output``; ``where`` is not
    needed (no lab, no store) but taken like every command's."""
    text = json.dumps(json_schema.build(), indent=2, ensure_ascii=False) + "\n"
    if output:
        output.write_text(text)
        err_console.print(f"wrote the campaign schema to {output}", markup=False)
    else:
        sys.stdout.write(text)
    return 0
