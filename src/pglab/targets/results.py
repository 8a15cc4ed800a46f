"""Storage micro-benchmark results as the store gives them (``Store.list_storage_results``):
where they were measured and their headline figure, in words; :func:`as_row` makes that form
from a fresh :class:`StorageResult`, so a fresh measurement and a stored one read the same. The
CLI draws them as tables (``cli.storage``), the report as HTML, ``compare`` by headline."""

from __future__ import annotations

from pglab.records import StorageResult, StorageRow
from pglab.targets.output import sync_rate


def as_row(result: StorageResult, result_id: int | None = None) -> StorageRow:
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


def where(row: StorageRow) -> str:
    """'/var/tmp on ext4 /dev/vda (rw,relatime), scheduler none'"""
    sched = (row.get("facts") or {}).get("mount", {}).get("scheduler")
    return (
        f"{row['target_path']} on {row.get('fstype') or '?'} {row.get('device') or '?'} "
        f"({row.get('mount_options') or '?'})" + (f", scheduler {sched}" if sched else "")
    )


SECTION_NAMES = {
    "1x8kB": "one 8kB write",
    "2x8kB": "two 8kB writes",
    "open_sync_sizes": "16kB in open_sync writes",
    "fsync_other_fd": "fsync of another fd",
    "no_sync": "no sync",
}


def headline(row: StorageRow) -> str:
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
