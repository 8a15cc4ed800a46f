"""``pglab storage``: pg_test_fsync (and fio) on a directory's storage, stored and printed; or
the stored results."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

from rich.console import JustifyMethod
from rich.markup import escape
from rich.table import Table

from pglab.cli import commands
from pglab.cli.common import Where, console, err_console
from pglab.errors import LabError
from pglab.lab import Lab
from pglab.records import StorageResults, StorageRow
from pglab.targets import results as storage_results


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "storage",
        parents=[common],
        help=commands.help_of("storage"),
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
    p.set_defaults(
        func=lambda a: run(
            Where.from_args(a),
            a.dir,
            seconds=a.seconds,
            fio=a.fio,
            bindir=a.bindir,
            list_stored=a.list,
            as_json=a.json,
        )
    )


def run(
    where: Where,
    directory: Path | None,
    seconds: int = 2,
    fio: bool | None = None,
    bindir: str | None = None,
    list_stored: bool = False,
    as_json: bool = False,
) -> int:
    from pglab.targets import fsbench

    if list_stored:
        with where.open(read_only=True) as store:
            rows = store.list_storage_results()
        if as_json:
            print(json.dumps(rows, indent=2, default=str))
        else:
            console.print(list_table(rows))
        return 0
    if directory is None:
        raise LabError("which directory?", hint="pglab storage DIR, or pglab storage --list")
    with where.open() as store:  # opened first: a store that cannot be written stops us early
        results = fsbench.measure(
            Lab.open(where.home),
            directory,
            seconds=seconds,
            fio=fio,
            bindir=bindir,
            status=lambda m: err_console.print(f"[dim]{escape(m)}[/]"),
        )
        rows = [storage_results.as_row(r, store.save_storage_result(r)) for r in results]
    if as_json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    console.print(storage_results.where(rows[0]), markup=False, soft_wrap=True)
    for row in rows:
        console.print(result_table(row))
    console.print(f"stored as storage result(s) {', '.join(str(r['id']) for r in rows)}")
    return 0


def result_table(row: StorageRow) -> Table:
    """One result: pg_test_fsync's ops/s per method and section, or fio's jobs."""
    ident = f" #{row['id']}" if row.get("id") is not None else ""
    title = f"{row['tool']} {row['tool_version']}{ident} on {row['target_path']}"
    if row["tool"] == "fio":
        return _fio_table(row["results"], title)
    names = storage_results.SECTION_NAMES
    table = Table(title=escape(title), title_justify="left")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("test", "left"),
        ("method", "left"),
        ("ops/s", "right"),
        ("µs/op", "right"),
        ("", "left"),
    )
    for col, just in columns:
        table.add_column(col, justify=just)
    for section in row["results"]["sections"]:
        for i, r in enumerate(section["rows"]):
            table.add_row(
                names.get(section["key"], section["title"]) if i == 0 else "",
                escape(r["method"]),
                f"{r['ops_per_s']:,.0f}" if r["ops_per_s"] is not None else "n/a",
                f"{r['usecs_per_op']:,.0f}" if r["usecs_per_op"] is not None else "",
                escape(r["note"]),
                end_section=i == len(section["rows"]) - 1,
            )
    return table


def _fio_table(results: StorageResults, title: str) -> Table:
    table = Table(title=escape(title), title_justify="left")
    for col in ("job", "IOPS", "MB/s", "mean lat µs", "fsync µs", "O_DIRECT", "error"):
        table.add_column(col, justify="left" if col == "job" else "right")
    for j in results["jobs"]:
        table.add_row(
            escape(j["name"]),
            f"{j['iops']:,.0f}",
            f"{j['mb_per_s']:,.1f}",
            f"{j['lat_mean_us']:,.0f}" if j.get("lat_mean_us") is not None else "–",
            f"{j['sync_lat_mean_us']:,.0f}" if j.get("sync_lat_mean_us") is not None else "",
            "yes" if j["direct"] else "no",
            str(j["error"] or ""),
        )
    return table


def list_table(rows: list[StorageRow]) -> Table:
    table = Table(title="storage results")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("id", "right"),
        ("measured", "left"),
        ("tool", "left"),
        ("path", "left"),
        ("storage", "left"),
        ("result", "right"),
    )
    for col, just in columns:
        table.add_column(col, justify=just, no_wrap=col in ("measured", "tool"))
    for r in rows:
        table.add_row(
            str(r["id"]),
            datetime.fromtimestamp(r["measured_at"]).strftime("%Y-%m-%d %H:%M"),
            f"{r['tool']} {r['tool_version'].removeprefix('fio-')}",
            escape(r["target_path"]),
            escape(
                f"{r.get('fstype') or '?'} {r.get('device') or '?'} {r.get('mount_options') or ''}"
            ),
            storage_results.headline(r),
        )
    return table
