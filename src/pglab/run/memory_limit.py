"""``[os] memory``: the server's memory, page cache included, limited by a cgroup of its own.

Before a run's phases, a group is made where ``campaign/cgroups.place`` finds room (cgroup v1:
a child of pglab's own memory group; v2: beside it), its limit written, and the server's
processes moved in (the postmaster first, so that every backend it forks from then on is born
there, then those it had forked). The pages of its data directory are then dropped from the
page cache (synced first): pages another group read in (the dataset's copy) stay charged to
it, and a server reading them would never feel its own limit; from then on what it reads is
charged to its group, and reclaimed from it when the group is full.

The group is pglab's only while a run goes: after the run its processes go back to pglab's
group and it is removed (what the group used at most is recorded first). Its path is written
to a journal under the lab home (``cgroups/<pid>.json``) before it is made; a pglab that was
killed leaves the journal, and the next one removes the group (``remove_leftovers``, from
``resume``), as ``os_state`` puts back the kernel's settings."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

import psutil

from pglab.campaign import cgroups
from pglab.campaign.os_spec import OsSpec
from pglab.errors import LabError
from pglab.fingerprints import MemoryFacts
from pglab.lab import Lab
from pglab.postgres import altered

HINT = "leave [os] memory out, or run pglab where it can make a memory cgroup (as root)"


def _journal_dir(lab: Lab) -> Path:
    return lab.home / "cgroups"


class ServerMemory:
    """The memory group of the executor's local server for one run: ``set`` after its
    settings are applied (a restart starts a new postmaster), ``release`` after the run."""

    def __init__(self, lab: Lab) -> None:
        self.journal = _journal_dir(lab) / f"{os.getpid()}.json"
        self.group: Path | None = None
        self.home: Path | None = None
        self.place: cgroups.Place | None = None

    def set(self, pid: int | None, spec: OsSpec, dirs: Iterable[Path]) -> MemoryFacts | None:
        """The server ``pid`` and its children put in a group limited to ``spec.memory``, the
        pages of ``dirs`` (its PGDATA and pg_wal) dropped from the page cache; what the
        kernel reads back (None when the run asks no limit)."""
        if spec.memory is None or pid is None:
            return None
        place = cgroups.place()
        if isinstance(place, str):
            raise LabError(
                f"[os] memory = {spec.memory}: no memory cgroup can be made: {place}", hint=HINT
            )
        group = self._make(place)
        _write(group / place.limit_file, str(spec.memory))
        if place.version == 1:
            memsw = group / "memory.memsw.limit_in_bytes"  # no swapping past the limit
            if memsw.exists():
                _write(memsw, str(spec.memory))
            # what the server's processes had charged before (shared memory) moves with them,
            # where the kernel still does that (6.x refuses: it stays charged to pglab's)
            with contextlib.suppress(OSError):
                (group / "memory.move_charge_at_immigrate").write_text("3")
        elif (group / "memory.swap.max").exists():
            _write(group / "memory.swap.max", "0")
        _move([pid], group)
        evicted = evict(dirs)
        return {
            "bytes": spec.memory,
            "read": int(_text(group / place.limit_file) or 0),
            "cgroup": str(group),
            "cgroup_version": place.version,
            "server_processes": len(_procs(group)),
            "evicted_files": evicted,
        }

    def _make(self, place: cgroups.Place) -> Path:
        if self.group is not None:
            return self.group
        group = place.parent / f"pglab-{os.getpid()}"
        _save(self.journal, group, place.home)
        try:
            group.mkdir(exist_ok=True)
        except OSError as exc:
            self.journal.unlink(missing_ok=True)
            raise LabError(
                f"[os] memory: could not make the cgroup {group}: {exc.strerror}", hint=HINT
            ) from exc
        self.group, self.home, self.place = group, place.home, place
        return group

    def release(self) -> MemoryFacts:
        """The group's processes given back to pglab's group and the group removed; what it
        used at most (empty when there was none)."""
        if self.group is None or self.home is None or self.place is None:
            return {}
        used: MemoryFacts = {"peak_bytes": int(_text(self.group / self.place.peak_file) or 0)}
        remove(self.group, self.home)
        self.journal.unlink(missing_ok=True)
        self.group = self.home = self.place = None
        return used


def _move(pids: list[int], group: Path) -> None:
    """``pids`` and every process below them into ``group``: each parent first, so that what
    it forks from then on is born there, then those it had forked."""
    for pid in pids:
        _write(group / "cgroup.procs", str(pid))
        with contextlib.suppress(psutil.NoSuchProcess):
            for child in psutil.Process(pid).children(recursive=True):
                with contextlib.suppress(LabError):  # one that ended since
                    _write(group / "cgroup.procs", str(child.pid))


def remove(group: Path, home: Path) -> None:
    """Every process of ``group`` moved to ``home``, then the group removed (a few tries: a
    process forked while it was emptied, or the kernel's own bookkeeping, can hold it)."""
    for _ in range(50):
        if not group.exists():
            return
        for pid in _procs(group):
            with contextlib.suppress(LabError):
                _write(home / "cgroup.procs", str(pid))
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)
    raise LabError(
        f"could not remove the memory cgroup {group}: processes {_procs(group)} are still in it",
        hint=f"move them out (echo PID > {home}/cgroup.procs) and rmdir it",
    )


def evict(dirs: Iterable[Path]) -> int:
    """The pages of every file under ``dirs`` dropped from the page cache (synced first:
    dirty pages cannot be dropped); how many files."""
    os.sync()
    n = 0
    for top in dirs:
        for root, _dirs, files in os.walk(top):
            for name in files:
                with contextlib.suppress(OSError):  # a file removed since
                    fd = os.open(os.path.join(root, name), os.O_RDONLY | os.O_NOFOLLOW)
                    try:
                        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                        n += 1
                    finally:
                        os.close(fd)
    return n


def remove_leftovers(lab: Lab) -> list[str]:
    """The memory cgroups of a killed pglab removed now."""
    lines = []
    for path in sorted(_journal_dir(lab).glob("*.json")):
        try:
            data = json.loads(path.read_text())
            owner, group, home = data["owner"], Path(data["group"]), Path(data["home"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if altered.alive(owner):
            continue
        try:
            remove(group, home)
        except LabError as exc:
            lines.append(f"warning: {exc.message} ({exc.hint})")
            continue
        path.unlink(missing_ok=True)
        lines.append(f"removed the memory cgroup an earlier, killed pglab had made: {group}")
    return lines


def _save(journal: Path, group: Path, home: Path) -> None:
    """The group's path, on disk before it is made."""
    journal.parent.mkdir(parents=True, exist_ok=True)
    partial = journal.with_suffix(".partial")
    with open(partial, "w") as f:
        json.dump({"owner": altered.me(), "group": str(group), "home": str(home)}, f)
        f.flush()
        os.fsync(f.fileno())
    partial.replace(journal)


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError as exc:
        raise LabError(f"could not write {text!r} to {path}: {exc.strerror}", hint=HINT) from exc


def _text(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _procs(group: Path) -> list[int]:
    return [int(w) for w in _text(group / "cgroup.procs").split()]
