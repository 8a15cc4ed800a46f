"""The comparability guard: a comparison trusts that its two sides differ only in what the
campaign varied. For every compared point, the facts of its runs' fingerprints that move
performance and that no setting changes (the kernel, the pgbench that ran, the server's data
checksums, block and WAL segment sizes and assertions, the CPU governor, transparent huge pages,
the filesystems under PGDATA and pg_wal, the I/O scheduler and read-ahead of the devices under
them, the dirty-page and swap sysctls) are set against its baseline's; each difference the
campaign did not ask for is said, by name. A filesystem differing is intended where the two
points' storage differs, an OS fact where their [os] (or storage) does; nothing else is (two
versions compared with checksums on one side only measure the checksums too). A server built
with assertions is flagged in every run. Runs stored before a fact was recorded lack it, and
are not compared on it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pglab.analysis import spreads
from pglab.analysis.points import PointRow
from pglab.fingerprints import mount_options
from pglab.rows import RunRow, StoredRun


def _built(key: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda fp: (fp.get("server_build") or {}).get(key)


def _mount(key: str) -> Callable[[Mapping[str, Any]], Any]:
    def read(fp: Mapping[str, Any]) -> Any:
        m = fp.get(key) or {}
        if not m.get("fstype"):
            return None
        options = mount_options(m) or ""
        return f"{m['fstype']} ({options})" if options else m["fstype"]

    return read


def _os(suffix: str) -> Callable[[Mapping[str, Any]], Any]:
    """An OS fact every run records (``os_state``): a device queue's (``.scheduler``: any
    device's under the run's storage, named apart), or the watched sysctls (``vm.``)."""

    def read(fp: Mapping[str, Any]) -> Any:
        state = fp.get("os_state") or {}
        found = sorted(
            f"{k.split('.')[0]} {v}" if suffix.startswith(".") else f"{k}={v}"
            for k, v in state.items()
            if k.endswith(suffix) or k.startswith(suffix)
        )
        if suffix.startswith("."):  # the device's name is no part: loop devices come and go
            found = sorted(v.split(" ", 1)[1] for v in found)
        return ", ".join(found) or None

    return read


# (the fact as a message names it, how it is read from a fingerprint, the parts of the points'
# stored spec whose difference makes a difference in it intended: (), never)
FACTS: tuple[tuple[str, Callable[[Mapping[str, Any]], Any], tuple[str, ...]], ...] = (
    ("kernel", lambda fp: fp.get("kernel"), ()),
    ("pgbench", lambda fp: fp.get("pgbench_version"), ()),
    ("data_checksums", _built("data_checksums"), ()),
    ("block_size", _built("block_size"), ()),
    ("wal_segment_size", _built("wal_segment_size"), ()),
    ("assertions", _built("assertions"), ()),
    ("CPU governor", lambda fp: fp.get("governor"), ()),
    ("transparent huge pages", lambda fp: fp.get("thp"), ("os",)),
    ("PGDATA's filesystem", _mount("pgdata_mount"), ("storage",)),
    ("pg_wal's filesystem", _mount("pg_wal_mount"), ("storage",)),
    ("I/O scheduler", _os(".scheduler"), ("storage", "os")),
    ("read-ahead (kB)", _os(".read_ahead_kb"), ("storage", "os")),
    ("kernel settings", _os("vm."), ("os",)),
)


def assertions_on(run: RunRow) -> bool:
    """Whether the run's server was built with assertions (``--enable-cassert``)."""
    fp = getattr(run, "fingerprint", None) or {}
    return (fp.get("server_build") or {}).get("assertions") == "on"


def unlike(runs: Sequence[RunRow], rows: Sequence[PointRow]) -> list[tuple[str, str]]:
    """(point, message) for each compared point whose runs differ from its baseline's in a
    fact the campaign did not vary (``FACTS``)."""
    by_point: dict[str, list[StoredRun]] = {}
    for r in runs:
        if isinstance(r, StoredRun) and r.ok and r.fingerprint:  # a listing's row has none
            by_point.setdefault(r.label, []).append(r)
    bases = {pt.coords: pt.point for pt in rows if pt.is_base}
    out = []
    for pt in rows:
        base = bases.get(pt.coords)
        if pt.comparison is None or pt.is_base or base is None:
            continue
        mine, theirs = by_point.get(pt.point, []), by_point.get(base, [])
        if not mine or not theirs:
            continue
        varied = {part for part in ("storage", "os") if _part(mine, part) != _part(theirs, part)}
        said = []
        for name, read, intended_by in FACTS:
            if varied & set(intended_by):
                continue
            a = {str(v) for r in mine if (v := read(r.fingerprint)) is not None}
            b = {str(v) for r in theirs if (v := read(r.fingerprint)) is not None}
            if a and b and a != b:
                said.append(f"{name} {_text(a)} here, {_text(b)} in {base}")
        if said:
            out.append(
                (
                    pt.point,
                    "compared with " + base + ", it also differs in what the "
                    "campaign did not vary: "
                    + "; ".join(said)
                    + ": its difference includes theirs",
                )
            )
        if (builds := spreads.guard(mine, theirs)) is not None:
            out.append((pt.point, f"compared with {base}: {builds}"))
    return out


def _part(runs: Sequence[StoredRun], part: str) -> set[str]:
    return {repr(r.spec.get(part)) for r in runs}


def _text(values: set[str]) -> str:
    return " and ".join(sorted(values))
