"""The ``pglab`` command: the only part of pglab that prints. One module per command, each with
``add_parser`` (its options) and ``run(where, ...)`` (callable without argparse); ``fmt`` is how
numbers and times read, ``common`` the consoles and where the lab and store are.

A LabError becomes ``error: …`` (and ``hint: …``) with exit status 2; Ctrl-C exits with 130
after everything pglab started has been stopped, SIGTERM likewise with 143; any other exception
is a bug and shows its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from rich.markup import escape

from pglab import __version__
from pglab.cli.commands import COMMANDS
from pglab.cli.common import err_console
from pglab.errors import LabError
from pglab.lab import COMMAND_HOME

_EXAMPLES = """\
examples:
  pglab quick                        a first result in a few minutes (embedded PostgreSQL 18)
  pglab run examples/settings-sweep.toml --dry-run
                                     the plan: points, runs, estimated duration
  pglab run examples/settings-sweep.toml
                                     run it (run it again to resume after a failure)
  pglab watch                        the live view of that run, from another terminal
  pglab ls                           stored runs;  pglab ls --json  for scripts
  pglab show quick-20261122-101500   a campaign's points;  pglab show 12  one run
  pglab export NAME --format csv     one row per run, a column per factor and figure
  pglab run FILE --execution; pglab history NAME
                                     measure again (NAME@time), then the series and its
                                     change points; pglab schedule FILE --cron "0 2 * * *"
                                     makes one every night, by the fleet's workers
  pglab serve                        the store in a browser: http://127.0.0.1:8765/
  pglab quick --dsn postgresql://bench@db1/postgres
                                     the same on a server you already have (read-only)
  pglab run FILE --fleet --store postgresql://lab@db/pglab
                                     runs as jobs for `pglab worker` on lab hosts;
                                     pglab status NAME --wait  follows them

"""
# the kinds' own examples (a captured workload's: pglab capture) come here, then
_MORE = """\
  pglab sources                      the PostgreSQL servers here: wheels, Debian's, builds

environment:
  PGLAB_HOME      lab directory (clusters, datasets); default /var/lib/pglab as root,
                  else ~/.local/share/pglab
  PGLAB_STORE     results store: a SQLite path or a postgresql:// URL
                  (default: $PGLAB_HOME/results.sqlite)
  PGLAB_RUN_USER  the unprivileged account servers run as when pglab is root (default pglab)
  PGLAB_BUILDS    where PostgreSQL built by pglab is kept (default $PGLAB_HOME/builds)
  PGLAB_KEEP_CODE_PAGES=1  start servers from their code as cached (default: read afresh,
                  so where a build's code lands in memory is noise, not a bias)

documentation: docs/index.md in pglab's repository (`mkdocs serve` there shows it as a site);
  each command's --help names its page
"""

# The page of the documentation (docs/ in pglab's repository) that says more about each command,
# named at the end of its --help (tests/unit/test_docs.py checks that each exists).
DOCS = {
    "quick": "guides/first-campaign.md",
    "run": "guides/first-campaign.md",
    "tune": "guides/tuning.md",
    "watch": "guides/live-view.md",
    "ls": "guides/reading-results.md",
    "show": "guides/reading-results.md",
    "report": "guides/reading-results.md",
    "compare": "guides/reading-results.md",
    "history": "guides/history.md",
    "schedule": "guides/history.md",
    "bisect": "guides/history.md",
    "serve": "guides/serve.md",
    "export": "guides/export.md",
    "storage": "guides/storage.md",
    "sources": "guides/versions.md",
    "capture": "guides/your-own-workload.md",
    "worker": "guides/fleet.md",
    "status": "guides/fleet.md",
    "schema": "reference/json-schema.md",
}


ALL = "*"  # build_parser: every command's own parser (its tests, the docs' checks)


def epilog() -> str:
    """``pglab --help``'s examples, the kinds' own among them (``Workload.examples``: the
    registry imported only to print them), and its environment."""
    from pglab.workloads import REGISTRY

    return _EXAMPLES + "".join(w.examples for w in REGISTRY.values()) + _MORE


GLOBAL_WITH_VALUE = ("--store", "--lab-dir")


def main(argv: list[str] | None = None) -> int:
    os.umask(0o022)
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(command_in(argv))
    args = parser.parse_args(argv)
    for name in ("store", "lab_dir"):
        setattr(args, name, getattr(args, name, None))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    restore = _stop_on_sigterm()
    lab_named = COMMAND_HOME.set(args.lab_dir)  # the kits' scripts go in its lab too
    try:
        return int(args.func(args) or 0)
    except Terminated:
        err_console.print(
            "terminated (SIGTERM): every server and pgbench pglab started has been stopped and "
            "every storage target it made undone; run the same command again to resume"
        )
        return 128 + signal.SIGTERM
    except LabError as exc:
        err_console.print(f"[bold red]error:[/] {escape(exc.message)}", markup=True, soft_wrap=True)
        if exc.hint:
            err_console.print(f"[bold]hint:[/] {escape(exc.hint)}", soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        err_console.print(
            "interrupted: every server and pgbench pglab started has been stopped; "
            "run the same command again to resume"
        )
        return 130
    except BrokenPipeError:
        # `pglab ls --json | head`: the reader has gone; say nothing more (Python's advice:
        # point stdout at devnull so that the interpreter's final flush does not fail too)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a command ended by SIGPIPE
    finally:
        COMMAND_HOME.reset(lab_named)
        restore()


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a service manager, a CI timeout), handled as Ctrl-C is: the clean-up
    code that runs on KeyboardInterrupt stops servers and undoes storage targets."""


def _stop_on_sigterm() -> Callable[[], object]:
    """Turn SIGTERM into Terminated for the command's duration (only possible on the main
    thread); returns what puts the previous handler back."""

    def raise_terminated(signum: int, frame: object) -> NoReturn:
        raise Terminated()

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    return lambda: signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)


def command_in(argv: list[str]) -> str | None:
    """The command ``argv`` runs (its first word that is not an option or an option's value),
    or None."""
    words = iter(argv)
    for word in words:
        if word in GLOBAL_WITH_VALUE:
            next(words, None)
        elif not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(command: str | None = ALL) -> argparse.ArgumentParser:
    """pglab's parser: ``command``'s own options (its module imported), every other command
    only named with its line of help (``ALL``: every command's own options)."""
    # SUPPRESS: an option given before the command is not reset by the command's own default
    # (`pglab --store X ls` used to ignore X); main() fills in None where neither was given
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--store",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="results store: SQLite path or postgresql:// URL (env PGLAB_STORE)",
    )
    common.add_argument(
        "--lab-dir",
        metavar="DIR",
        type=Path,
        default=argparse.SUPPRESS,
        help="lab directory for clusters and datasets (env PGLAB_HOME)",
    )
    parser = argparse.ArgumentParser(
        prog="pglab",
        description="pglab — a PostgreSQL performance lab: pgbench campaigns over "
        "settings, versions and load, every second recorded, results stored.",
        epilog=epilog() if command in (None, ALL) else None,  # shown only without a command
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"pglab {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    wanted = COMMANDS[command][0] if command in COMMANDS else None
    for name, (module, help_line) in COMMANDS.items():
        if name in sub.choices:
            continue  # added with another command of its module
        if command == ALL or module == wanted:  # the module adds its commands (fleet: two)
            importlib.import_module(f"pglab.cli.{module}").add_parser(sub, common)
        else:
            sub.add_parser(name, help=help_line)
    for name, command_parser in sub.choices.items():
        more = f"more in pglab's documentation: docs/{DOCS[name]}"
        if command_parser.epilog:
            command_parser.epilog = f"{command_parser.epilog}\n\n{more}"
        else:  # one paragraph, wrapped or not as the command's formatter does
            command_parser.epilog = more
    return parser
