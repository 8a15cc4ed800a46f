"""``pglab report``: one self-contained HTML page (and its charts as PNG) of a campaign or run."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape

from pglab.cli import commands
from pglab.cli.common import Where, console
from pglab.errors import LabError
from pglab.store import Store

DESCRIPTION = (
    "Write one self-contained HTML page (it opens from disk, no network) with the plan and "
    "environment, the points with Δ% against the baseline and significance, warnings, the "
    "storage benchmarks stored for the runs' storage, TPS against clients, every run in order, "
    "latency percentiles, and each point's run second by second (TPS with checkpoints and the "
    "other repeats, latency, wait events, buffers and WAL, CPU, disk: drawn by the page when "
    "a point is opened, to zoom and hover); the campaign's charts are also written as PNG "
    "files into FILE's -charts folder, and with --png each point's too."
)


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "report",
        parents=[common],
        help=commands.help_of("report"),
        description=DESCRIPTION,
    )
    p.add_argument(
        "id", help="campaign name or run id (a campaign named with digits is the campaign's)"
    )
    p.add_argument(
        "--run",
        action="store_true",
        help="ID is a run's id, even when a campaign has that name",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="HTML file to write (default: <lab dir>/reports/<campaign>.html)",
    )
    p.add_argument(
        "--png",
        action="store_true",
        help="also draw each point's chart as a PNG file (matplotlib: seconds per point)",
    )
    p.set_defaults(func=lambda a: run(Where.from_args(a), a.id, a.output, a.png, a.run))


def run(
    where: Where, ident: str, output: Path | None = None, png: bool = False, as_run: bool = False
) -> int:
    if as_run and not ident.isdigit():
        raise LabError(f"--run takes a run's id: {ident!r} is not one", hint="pglab ls lists runs")
    with where.open(read_only=True) as store:
        write_report(
            store, int(ident) if as_run else ident, output, where.home, where.store_url, png
        )
    return 0


def write_report(
    store: Store,
    ident: str | int,
    output: Path | None,
    home: Path,
    store_url: str | None = None,
    png: bool = False,
) -> None:
    """The report of campaign ``ident`` (a name, even all digits) or run ``ident`` (an int, or
    digits no campaign is named); ``store_url``: where a tune study's Optuna storage is (its
    section in the report)."""
    from pglab import report  # matplotlib: imported only when a report is drawn
    from pglab.tune.spec import is_tune  # not tune.summary: optuna only for a tune study

    camp = store.get_campaign(ident) if isinstance(ident, str) else None
    if camp is not None and camp["name"] != ident:
        camp = None  # found by its id: digits name a run
    elif camp is not None and str(ident).isdigit() and store.get_run(int(ident), series=False):
        console.print(
            f"{ident} is a campaign's name and a run's id: this is the campaign's report "
            f"(`pglab report --run {ident}` writes the run's)",
            markup=False,
        )
    tune = None
    if store_url is not None and camp is not None and is_tune(camp):
        from pglab.tune import summary as tune_summary  # optuna: 0.4 s of CPU to import

        tune = tune_summary.of(store, store_url, camp["name"])
    with console.status("drawing the report…"):
        written = report.write(store, ident, output, home, tune, png)
    console.print(
        f"report: [bold]{escape(str(written.html))}[/] (open it in a browser; "
        f"{len(written.pngs)} chart(s) as PNG in {escape(str(written.pngs[0].parent))})"
        if written.pngs
        else f"report: [bold]{escape(str(written.html))}[/]",
        soft_wrap=True,
    )
