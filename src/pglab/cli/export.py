"""``pglab export``: a campaign's or a run's results as tidy data (a row per run, phase, script
or statement, a column per factor and figure) or its per-second series in long form; CSV, JSON
or Parquet; or its CPU profiles (functions, folded stacks)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from pglab.analysis import export as encoders
from pglab.analysis import point_table, points, profiles, queries, scripts, tidy
from pglab.analysis.tidy import TidyTable
from pglab.cli import commands, common
from pglab.cli.common import Where, err_console
from pglab.cli.profiles import NOT_PROFILED
from pglab.errors import LabError, StoreError
from pglab.rows import StoredRun, plain
from pglab.store import Store
from pglab.workloads import query_tables


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    common_options: argparse.ArgumentParser,
) -> None:
    p = sub.add_parser(
        "export",
        parents=[common_options],
        help=commands.help_of("export"),
        description="A row per run (or per measured phase) with a column per factor (settings "
        "that vary, clients, script, scale, server, storage, ...) and per figure (TPS, latency "
        "percentiles, WAL, hit ratio, top wait, CPU, ...); or, with --series, every per-second "
        "table in long form (run_id, phase, iteration, kind, t, metric, value). "
        "docs/reference/export-columns.md lists the columns. Files are written whole or not at "
        "all.",
    )
    p.add_argument("id", help="campaign name or run id")
    p.add_argument(
        "--run",
        action="store_true",
        help="ID is a run's id, even when a campaign has that name (a campaign "
        "named with digits is the campaign's otherwise)",
    )
    p.add_argument(
        "--format",
        choices=encoders.FORMATS,
        default="csv",
        help="csv (default), json (records), parquet (pglab[parquet])",
    )
    p.add_argument(
        "--by",
        choices=("run", "phase", "script", "statement", "query", "point"),
        default="run",
        help="a row per run (default), per measured phase iteration, per script of "
        "each (pgbench's per-script figures: weight, share, TPS, failures, retries, "
        "latency), per statement of each script (pgbench -r: report_per_command), per "
        f"query of {' or '.join(q.chosen for q in query_tables())}'s runs (a throughput run's "
        "per stream: seconds, "
        "rows, timed out, seed), or "
        "per point of a campaign (pglab show's table: median, CI, Δ%% against the "
        "baseline with its CI, p-values, verdict and the test that made it)",
    )
    p.add_argument(
        "--all-settings",
        action="store_true",
        help="a column for every non-default setting, not only those the campaign sets",
    )
    p.add_argument(
        "--series",
        nargs="?",
        const="",
        metavar="KIND",
        help="the per-second series instead, in long form (KIND: one of them, e.g. "
        "progress, latency, pg.database, waits, os.cpu)",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="with --format json: everything stored about each run, nested (spec, "
        "fingerprint, phases, series)",
    )
    p.add_argument(
        "--profile",
        nargs="?",
        const="functions",
        choices=("functions", "folded"),
        help="the CPU profiles instead (runs made with --profile): functions (the "
        "default) is a row per run, process kind and function with its self and "
        "inclusive samples and shares; folded is the folded stacks as text, 'run "
        "ID;KIND;outermost;...;innermost COUNT' a line, what flamegraph.pl, "
        "speedscope and inferno read",
    )
    p.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
    p.set_defaults(
        func=lambda a: run(
            Where.from_args(a),
            a.id,
            a.format,
            a.output,
            by=a.by,
            all_settings=a.all_settings,
            series=a.series,
            full=a.full,
            profile=a.profile,
            as_run=a.run,
        )
    )


def run(
    where: Where,
    ident: str,
    output_format: str = "csv",
    output: Path | None = None,
    by: str = "run",
    all_settings: bool = False,
    series: str | None = None,
    full: bool = False,
    profile: str | None = None,
    as_run: bool = False,
) -> int:
    if output_format == "parquet":
        encoders.require_parquet()  # before reading anything
        if output is None:
            raise LabError("Parquet is binary: give a file with -o FILE.parquet")
    if full and output_format != "json":
        raise LabError("--full is for --format json")
    with where.open(read_only=True) as store:
        kind, obj = common.find(store, ident, as_run)
        if by == "point" and not full and series is None:
            return _write(_point_table(store, kind, obj), output_format, output)
        if kind == "run":
            runs = [obj]
        else:
            runs = [run for r in store.list_runs(obj["name"]) if (run := store.get_run(r.id))]
            with contextlib.suppress(StoreError):  # a store it may only read: nothing to keep
                tidy.refresh(store, obj["name"], runs)  # for the store's pglab_runs view
    if profile is not None:
        data, what = _profile(runs, profile, output_format)
    elif full:
        data = (
            json.dumps(plain(runs if kind == "campaign" else obj), indent=2, default=str) + "\n"
        ).encode()
        what = f"{len(runs)} run(s)"
    else:
        if series is not None:
            table = tidy.series_table(runs, series or None)
        elif by == "script":
            table = scripts.scripts_table(runs)
        elif by == "statement":
            table = scripts.statements_table(runs)
        elif by == "query":
            table = queries.queries_table(runs)
        else:
            table = tidy.runs_table(runs, by_phase=by == "phase", all_settings=all_settings)
        return _write(table, output_format, output)
    return _emit(data, what, output)


def _point_table(store: Store, kind: str, obj: Any) -> TidyTable:
    if kind == "run":
        raise LabError(
            "--by point is for a campaign", hint=f"pglab export {obj.campaign} --by point"
        )
    rows = points.campaign_rows(store.list_runs(obj["name"]), obj)
    return TidyTable(list(point_table.POINT_COLUMNS), point_table.points_table(obj["name"], rows))


def _write(table: TidyTable, output_format: str, output: Path | None) -> int:
    data = encoders.encode(table, output_format)
    return _emit(data, f"{len(table.rows):,} row(s) of {len(table.columns)} column(s)", output)


def _emit(data: bytes, what: str, output: Path | None) -> int:
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    _write_whole(output, data)
    err_console.print(f"wrote {what} to {output}")
    return 0


def _profile(runs: list[StoredRun], profile: str, output_format: str) -> tuple[bytes, str]:
    if not profiles.profiled(runs):
        raise LabError(NOT_PROFILED)
    if profile == "folded":
        text = profiles.folded_text(runs)
        return text.encode(), f"{text.count(chr(10)):,} folded stack(s)"
    table = profiles.functions_table(runs)
    return encoders.encode(table, output_format), f"{len(table.rows):,} function row(s)"


def _write_whole(path: Path, data: bytes) -> None:
    """Write beside the target, then rename: a reader never sees half a file, and a failure
    (a full disk) leaves the old file as it was."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise LabError(
            f"cannot write {path}: {exc.strerror}", hint="choose another -o path, or free space"
        ) from exc
