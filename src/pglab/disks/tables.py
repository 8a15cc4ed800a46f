"""Terminal tables of storage micro-benchmark results (the CLI prints them).

Every function takes results in the form the store gives them (``Store.list_storage_results``),
so a fresh measurement and a stored one look the same; :func:`as_row` makes that form from a
:class:`StorageResult`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.markup import escape
from rich.table import Table

from pglab.disks.output import sync_rate
from pglab.records import StorageResult


def as_row(result: StorageResult, result_id: int | None = None) -> dict[str, Any]:
    m = result.mount
    return {
        "id": result_id,
        "measured_at": result.measured_at,
        "elapsed_s": result.elapsed_s,
        "target_path": result.target_path,
        "mountpoint": m.get("mountpoint"),
        "fstype": m.get("fstype"),
        "mount_options": m.get("mount_options"),
        "device": m.get("device"),
        "tool": result.tool,
        "tool_version": result.tool_version,
        "results": result.results,
        "facts": {"mount": m, "host": result.host},
    }


def where(row: dict[str, Any]) -> str:
    """'/var/tmp on ext4 /dev/vda (rw,relatime), scheduler none'"""
    sched = (row.get("facts") or {}).get("mount", {}).get("scheduler")
    return (
        f"{row['target_path']} on {row.get('fstype') or '?'} {row.get('device') or '?'} "
        f"({row.get('mount_options') or '?'})" + (f", scheduler {sched}" if sched else "")
    )


def result_table(row: dict[str, Any]) -> Table:
    """One result: pg_test_fsync's ops/s per method and section, or fio's jobs."""
    ident = f" #{row['id']}" if row.get("id") is not None else ""
    title = f"{row['tool']} {row['tool_version']}{ident} on {row['target_path']}"
    if row["tool"] == "fio":
        return _fio_table(row["results"], title)
    table = Table(title=escape(title), title_justify="left")
    for col, just in (("test", "left"), ("method", "left"), ("ops/s", "right"),
                      ("µs/op", "right"), ("", "left")):  # fmt: skip
        table.add_column(col, justify=just)
    for section in row["results"]["sections"]:
        for i, r in enumerate(section["rows"]):
            table.add_row(
                SECTION_NAMES.get(section["key"], section["title"]) if i == 0 else "",
                escape(r["method"]),
                f"{r['ops_per_s']:,.0f}" if r["ops_per_s"] is not None else "n/a",
                f"{r['usecs_per_op']:,.0f}" if r["usecs_per_op"] is not None else "",
                escape(r["note"]),
                end_section=i == len(section["rows"]) - 1,
            )
    return table


SECTION_NAMES = {
    "1x8kB": "one 8kB write",
    "2x8kB": "two 8kB writes",
    "open_sync_sizes": "16kB in open_sync writes",
    "fsync_other_fd": "fsync of another fd",
    "no_sync": "no sync",
}


def _fio_table(results: dict[str, Any], title: str) -> Table:
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


def headline(row: dict[str, Any]) -> str:
    """The one figure of a result: fdatasync ops/s, or fio's 4k random write IOPS."""
    if row["tool"] == "pg_test_fsync":
        rate = sync_rate(row["results"], "fdatasync")
        return f"fdatasync {rate:,.0f}/s" if rate is not None else "–"
    jobs = {j["rw"]: j for j in row["results"].get("jobs", [])}
    parts = []
    if "randread" in jobs and "randwrite" in jobs:
        parts.append(
            f"4k r/w {jobs['randread']['iops']:,.0f}/{jobs['randwrite']['iops']:,.0f} IOPS"
        )
    if "read" in jobs and "write" in jobs:
        parts.append(
            f"seq r/w {jobs['read']['mb_per_s']:,.0f}/{jobs['write']['mb_per_s']:,.0f} MB/s"
        )
    return "; ".join(parts) or "–"


def list_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="storage results")
    for col, just in (("id", "right"), ("measured", "left"), ("tool", "left"), ("path", "left"),
                      ("storage", "left"), ("result", "right")):  # fmt: skip
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
            headline(r),
        )
    return table
