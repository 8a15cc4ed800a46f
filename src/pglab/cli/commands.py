"""The ``pglab`` commands, in ``--help``'s order: each one's module (imported only when the
command runs, so that ``pglab ls`` does not load what ``pglab tune`` needs) and the line
``pglab --help`` says of it, which the module's own parser shows too."""

from __future__ import annotations

# command -> (its module under pglab.cli, its line in --help)
COMMANDS: dict[str, tuple[str, str]] = {
    "quick": (
        "quick",
        "zero-config benchmark on the embedded PostgreSQL (or --dsn: a server you have)",
    ),
    "run": ("run", "run (or resume) a campaign file"),
    "tune": (
        "tune",
        "search a point's settings within a trial budget (Optuna), then confirm the best",
    ),
    "watch": ("watch", "watch a campaign that runs in another terminal (read-only)"),
    "ls": ("ls", "list stored runs"),
    "show": ("show", "show a campaign (by name) or a run (by id)"),
    "report": ("report", "write an HTML report (and PNG charts) of a campaign or run"),
    "compare": ("compare", "compare two runs, two points or two campaigns (Δ%%, CI, significance)"),
    "history": ("history", "a campaign's executions as series per point, with change points"),
    "schedule": ("schedule", "measure a campaign again on a cron schedule, by the fleet's workers"),
    "bisect": ("bisect", "the first commit that changed a point (builds from git)"),
    "serve": (
        "serve",
        "the results store in a browser: campaigns, runs, compare, fleet, live (read-only)",
    ),
    "export": ("export", "export a campaign or run as tidy CSV, JSON or Parquet"),
    "storage": ("storage", "measure a directory's storage: pg_test_fsync, and fio where installed"),
    "sources": ("sources", "the PostgreSQL servers here (wheels, Debian's, cached builds)"),
    "capture": (
        "capture",
        "capture a server's workload into a workload file (to play it back on the variants)",
    ),
    "worker": ("fleet", "run a campaign's jobs on this lab host, one at a time (a fleet)"),
    "status": ("fleet", "a fleet's jobs: queued, running (where, since when), done, failed"),
    "schema": ("schema", "print the JSON Schema of campaign files (for editors)"),
}


def help_of(command: str) -> str:
    """The line ``pglab --help`` gives ``command``."""
    return COMMANDS[command][1]
