"""Parsing what storage micro-benchmarks print: ``pg_test_fsync`` text and ``fio`` JSON.

Both parsers are pure functions on text, tested on recorded output (``tests/data/storage/``).
Their results are ``records.StorageResults`` (pg_test_fsync's keys or fio's), stored as JSON
with the storage result (see ``fsbench``).

pg_test_fsync (PostgreSQL 15 to 18 print the same layout) prints sections, each a title line
ending with ``:`` and indented result lines::

    Compare file sync methods using one 8kB write:
            fdatasync                          6158.737 ops/sec     162 usecs/op
            fsync_writethrough                              n/a
            open_datasync                                   n/a*

``n/a`` means the platform lacks the method; ``n/a*`` that the filesystem refused O_DIRECT.
"""

from __future__ import annotations

import re

from pglab.jsonish import JsonObject
from pglab.records import FioJob, FsyncSection, StorageResults

# Section titles (as printed by PostgreSQL 15..18) -> stable keys
SECTIONS: tuple[tuple[str, str], ...] = (
    ("one 8kb write", "1x8kB"),
    ("two 8kb writes", "2x8kB"),
    ("open_sync with different write sizes", "open_sync_sizes"),
    ("fsync on non-write file descriptor", "fsync_other_fd"),
    ("non-sync'ed", "no_sync"),
)

_RATE = re.compile(
    r"^\s+(?P<label>\S.*?)\s+(?P<ops>\d+(?:\.\d+)?) ops/sec\s+(?P<us>\d+) usecs/op\s*$"
)
_NA = re.compile(r"^\s+(?P<label>\S.*?)\s+n/a(?P<mark>\**)\s*$")
_TITLE = re.compile(r"^(?P<title>\S.*):\s*$")
_SECONDS = re.compile(r"^(\d+) seconds? per test", re.M)


def _section_key(title: str) -> str:
    low = title.lower()
    for needle, key in SECTIONS:
        if needle in low:
            return key
    return re.sub(r"[^a-z0-9]+", "_", low).strip("_")


def parse_pg_test_fsync(text: str) -> StorageResults:
    """pg_test_fsync's output as ``{"seconds_per_test", "direct_io", "sections": [{"key",
    "title", "rows": [{"method", "ops_per_s", "usecs_per_op", "note"}]}]}``.

    ``ops_per_s`` is None for a method that was not tested (``note`` says why). Raises
    ValueError when the text holds no result at all (not pg_test_fsync output).
    """
    sections: list[FsyncSection] = []
    current: FsyncSection | None = None
    for line in text.splitlines():
        if m := _TITLE.match(line):
            current = {"key": _section_key(m["title"]), "title": m["title"], "rows": []}
            sections.append(current)
            continue
        if current is None:
            continue
        if m := _RATE.match(line):
            current["rows"].append(
                {
                    "method": " ".join(m["label"].split()),
                    "ops_per_s": float(m["ops"]),
                    "usecs_per_op": float(m["us"]),
                    "note": "",
                }
            )
        elif m := _NA.match(line):
            note = "no O_DIRECT on this filesystem" if m["mark"] else "not available here"
            current["rows"].append(
                {
                    "method": " ".join(m["label"].split()),
                    "ops_per_s": None,
                    "usecs_per_op": None,
                    "note": note,
                }
            )
    sections = [s for s in sections if s["rows"]]
    if not sections:
        raise ValueError("no 'ops/sec' results found: not pg_test_fsync output")
    seconds = _SECONDS.search(text)
    return {
        "seconds_per_test": int(seconds.group(1)) if seconds else None,
        "direct_io": "O_DIRECT supported" in text and "n/a*" not in text,
        "sections": sections,
    }


def sync_rate(parsed: StorageResults, method: str, section: str = "1x8kB") -> float | None:
    """ops/s of one wal_sync_method in one section (default: one 8kB write), or None."""
    for s in parsed.get("sections", []):
        if s["key"] == section:
            for row in s["rows"]:
                if row["method"] == method:
                    return None if row["ops_per_s"] is None else float(row["ops_per_s"])
    return None


# -- fio ------------------------------------------------------------------------------------


def parse_fio(data: JsonObject) -> StorageResults:
    """fio's ``--output-format=json`` as ``{"version", "jobs": [{"name", "rw", "bs",
    "direct", "fsync", "iops", "mb_per_s", "lat_mean_us", "sync_lat_mean_us", "error"}]}``:
    the direction the job did (read or write) gives its IOPS, MB/s (10^6 bytes) and mean
    completion latency; ``sync_lat_mean_us`` is the mean fsync time of a job that synced."""
    jobs: list[FioJob] = []
    for job in data.get("jobs", []):
        opts = {**data.get("global options", {}), **job.get("job options", {})}
        rw = opts.get("rw", "")
        side = job["write"] if rw in ("write", "randwrite") else job["read"]
        lat = (side.get("clat_ns") or side.get("lat_ns") or {}).get("mean")
        sync = job.get("sync") or {}
        sync_lat = (sync.get("lat_ns") or {}).get("mean") if sync.get("total_ios") else None
        jobs.append(
            {
                "name": job["jobname"],
                "rw": rw,
                "bs": opts.get("bs"),
                "direct": opts.get("direct", "0") == "1",
                "fsync": int(opts.get("fsync", 0) or 0),
                "iops": float(side.get("iops", 0.0)),
                "mb_per_s": float(side.get("bw_bytes", 0)) / 1e6,
                "lat_mean_us": float(lat) / 1000 if lat is not None else None,
                "sync_lat_mean_us": float(sync_lat) / 1000 if sync_lat is not None else None,
                "error": int(job.get("error", 0)),
            }
        )
    if not jobs:
        raise ValueError("no jobs in fio's JSON output")
    return {"version": data.get("fio version"), "jobs": jobs}
