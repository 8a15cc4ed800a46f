"""``[os]`` on this machine: kernel settings and block-device queues set before a run and put
back after, exactly, with a journal; the page cache dropped before a cold run.

Before pglab first writes a file of /proc/sys or /sys, the file's original text is written to a
journal under the lab home (``os/<pid>.json``), flushed to disk. A run puts back what an
earlier run set and it does not ask for, then writes its own; the campaign's end, Ctrl-C and
SIGTERM put everything back and remove the journal; after a SIGKILL the journal stays, and the
next pglab that starts puts the originals back (``put_back_leftovers``, from ``resume``).

Some settings move others: vm.dirty_bytes and vm.dirty_ratio exclude each other (writing one
zeroes the other, and 0 cannot be written to either: it is put back by writing the other), as
the *_background_* pair does, and a new scheduler resets nr_requests;
so the counterpart is journaled too, and the originals are written back until every file reads
as it did (at most a few passes)."""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Protocol

from pglab.campaign import os_checks, os_table
from pglab.campaign.os_spec import OsSpec
from pglab.errors import LabError
from pglab.fingerprints import HugePagesFacts, OsFacts
from pglab.lab import Lab
from pglab.planning.devices import SYS_BLOCK
from pglab.postgres import altered
from pglab.postgres.interface import OsView
from pglab.postgres.server import Cluster

PROC_SYS = Path("/proc/sys")
SERVER_SIZED = "shared_memory_size_in_huge_pages"  # where a reservation's number came from
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
DROP_CACHES = PROC_SYS / "vm" / "drop_caches"
# what writing one of these changes in the other
COUNTERPART = {
    "vm.dirty_bytes": "vm.dirty_ratio",
    "vm.dirty_ratio": "vm.dirty_bytes",
    "vm.dirty_background_bytes": "vm.dirty_background_ratio",
    "vm.dirty_background_ratio": "vm.dirty_background_bytes",
}
# read into every run's fingerprint, asked for or not: what comparisons warn about when it
# differs between points that did not ask for it
WATCHED = (
    "vm.dirty_bytes",
    "vm.dirty_background_bytes",
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "vm.swappiness",
    "vm.overcommit_memory",
    "vm.nr_hugepages",
)


def sysctl_path(name: str) -> Path:
    return PROC_SYS / name.replace(".", "/")


_COUNTER_PATHS = {str(sysctl_path(a)): str(sysctl_path(b)) for a, b in COUNTERPART.items()}


def reading(path: Path) -> str:
    """What a file says, as it is written back: the bracketed choice of a scheduler or THP
    line ("none [mq-deadline] kyber" → "mq-deadline"), else the text without its newline."""
    text = path.read_text()
    if path.name == "scheduler" or path == THP:
        return os_checks.schedulers(text)[1] or text.strip()
    return text.rstrip("\n")


def write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as exc:
        raise LabError(
            f"could not write {value!r} to {path}: {exc.strerror}",
            hint="the kernel refused the value; what pglab had changed is put back",
        ) from exc


def wanted(spec: OsSpec, devices: Iterable[str]) -> dict[Path, str]:
    """The files the run writes and their text, in the order they are written."""
    out: dict[Path, str] = {}
    for dev in devices:
        for name, value in spec.queue().items():
            out[SYS_BLOCK / dev / "queue" / name] = value
    for name, value in spec.sysctl:
        out[sysctl_path(name)] = value
    if spec.transparent_hugepages is not None:
        out[THP] = spec.transparent_hugepages
    return out


class Kernel(Protocol):
    """The kernel's files of a machine: this one's (``LocalKernel``), a host's
    (``hosts.sudo.HostKernel``)."""

    def read(self, path: str) -> str: ...
    def write(self, path: str, value: str) -> None: ...
    def exists(self, path: str) -> bool: ...


class LocalKernel:
    def read(self, path: str) -> str:
        return reading(Path(path))

    def write(self, path: str, value: str) -> None:
        write(Path(path), value)

    def exists(self, path: str) -> bool:
        return Path(path).exists()


class OsJournal:
    """The originals of the files pglab has written, kept on disk before the first write (on
    this machine; ``run/os_hosts.HostJournal`` keeps a host's on that host)."""

    def __init__(
        self, path: Path, originals: dict[str, str] | None = None, kernel: Kernel | None = None
    ):
        self.path = path
        self.originals: dict[str, str] = dict(originals or {})
        self.kernel: Kernel = kernel or LocalKernel()

    @classmethod
    def open(cls, lab: Lab) -> OsJournal:
        return cls(lab.home / "os" / f"{os.getpid()}.json")

    def record(self, paths: Iterable[Path | str]) -> None:
        new = [str(p) for p in paths if str(p) not in self.originals]
        if not new:
            return
        for p in new:
            self.originals[p] = self.kernel.read(p)
        self._save()

    def put_back(self, keep: Iterable[Path | str] = ()) -> list[str]:
        """Write back every original but those of ``keep`` until they read as they were; the
        files put back (those whose device is gone are skipped)."""
        kept = {str(p) for p in keep}
        k = self.kernel
        back = {p: v for p, v in self.originals.items() if p not in kept and k.exists(p)}
        for _ in range(3):
            differ = {p: v for p, v in back.items() if k.read(p) != v}
            if not differ:
                break
            for p, v in differ.items():
                if v == "0" and _COUNTER_PATHS.get(p) in back:
                    continue  # 0 is no value of its own: writing the counterpart makes it
                k.write(p, v)
        else:
            left = [p for p, v in back.items() if k.read(p) != v]
            raise LabError(
                f"could not put back {', '.join(left)}: they read otherwise",
                hint=f"the originals are in {self.where}",
            )
        self.originals = {p: v for p, v in self.originals.items() if p in kept}
        if self.originals:
            self._save()
        else:
            self._remove()
        return sorted(back)

    @property
    def where(self) -> str:
        return str(self.path)

    def _remove(self) -> None:
        self.path.unlink(missing_ok=True)

    def _save(self) -> None:
        """Write the journal durably (before any change it covers)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        with open(partial, "w") as f:
            json.dump({"owner": altered.me(), "originals": self.originals}, f, indent=2)
            f.flush()
            os.fsync(f.fileno())
        partial.replace(self.path)


class OsState:
    """The [os] of a campaign's runs on this machine: ``apply`` before a run, ``close`` at the
    end (always)."""

    def __init__(self, lab: Lab):
        self.journal = OsJournal.open(lab)

    def apply(self, spec: OsSpec, devices: list[str]) -> OsFacts | None:
        """Set what the run asks (putting back what an earlier run set and it does not); what
        was asked and what the kernel reads back."""
        files = wanted(spec, devices)
        self.journal.put_back(keep=files)
        counter = [sysctl_path(COUNTERPART[n]) for n, _ in spec.sysctl if n in COUNTERPART]
        self.journal.record([*files, *counter])
        for path, value in files.items():
            write(path, value)
        if not files:
            return None
        return {
            "asked": spec.identity(),
            "devices": devices,
            "read": {str(p): reading(p) for p in files},
        }

    def close(self) -> list[str]:
        return self.journal.put_back()

    def reserve_huge_pages(self, pages: int) -> int:
        """vm.nr_hugepages set to ``pages`` (journaled, as any sysctl); what the kernel could
        reserve (fewer when its memory is too fragmented)."""
        path = sysctl_path("vm.nr_hugepages")
        self.journal.record([path])
        write(path, str(pages))
        return int(reading(path))


class HugePages:
    """``[os] huge_pages``: the reservation sized by the server itself, from its
    ``shared_memory_size_in_huge_pages`` on the stopped cluster with the run's settings, just
    before it starts (PostgreSQL 15 on); the plan's estimate (``os_spec.huge_pages_for``, in
    the point's sysctls, written by ``OsState.apply``) where the server cannot tell."""

    def __init__(self, state: OsState) -> None:
        self.state = state
        self.sized: HugePagesFacts | None = None  # the running server's, when it sized them

    def before_start(self, cluster: Cluster) -> Callable[[Mapping[str, str]], None]:
        def size(_settings: Mapping[str, str]) -> None:
            pages = cluster.huge_pages_needed()
            self.sized = (
                None
                if pages is None
                else {
                    "pages": pages,
                    "reserved": self.state.reserve_huge_pages(pages),
                    "source": SERVER_SIZED,
                }
            )

        return size

    def facts(self, spec: OsSpec, restarted: bool) -> HugePagesFacts:
        """What the run's server has reserved, and where the number came from."""
        if self.sized is None:
            pages = int(dict(spec.sysctl)["vm.nr_hugepages"])
            read = int(reading(sysctl_path("vm.nr_hugepages")))
            return {"pages": pages, "reserved": read, "source": "estimate"}
        if not restarted:  # a server kept running: apply wrote the estimate over its number
            self.sized["reserved"] = self.state.reserve_huge_pages(self.sized["pages"])
        return self.sized.copy()


def drop_caches() -> float:
    """sync, then drop the page cache, dentries and inodes (a cold run); when, as a time."""
    os.sync()
    write(DROP_CACHES, "3")
    return time.time()


def observed(devices: list[str]) -> dict[str, str]:
    """The OS state every run records, asked for or not (THP, the watched sysctls, the
    scheduler and read-ahead of the devices under its storage, the CPU frequency governor)."""
    out = {"transparent_hugepages": reading(THP)} if THP.exists() else {}
    for name in WATCHED:
        if sysctl_path(name).exists():
            out[name] = reading(sysctl_path(name))
    for dev in devices:
        for name in ("scheduler", "read_ahead_kb", "nr_requests"):
            path = SYS_BLOCK / dev / "queue" / name
            if path.exists():
                out[f"{dev}.{name}"] = reading(path)
    gov = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    if gov.exists():
        out["cpu_governor"] = reading(gov)
    return out


def put_back_leftovers(lab: Lab) -> list[str]:
    """What a killed pglab had set in the kernel, put back now."""
    lines = []
    for path in sorted((lab.home / "os").glob("*.json")):
        try:
            data = json.loads(path.read_text())
            owner, originals = data["owner"], dict(data["originals"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if altered.alive(owner):
            continue
        try:
            names = OsJournal(path, originals).put_back()
        except LabError as exc:
            lines.append(
                f"warning: could not put back kernel settings a killed pglab had "
                f"changed: {exc.message} ({exc.hint})"
            )
            continue
        lines.append(
            "put back kernel settings an earlier, killed pglab had changed: " + ", ".join(names)
        )
    return lines


LIMIT_LINES = {"nofile": "Max open files", "nproc": "Max processes"}


class Limits:
    """[os] limits: this process's soft limits while a run goes (with CAP_SYS_RESOURCE its
    hard ones raised to them where they are lower), so that what it starts may have them; put
    back by ``restore`` (or ``set`` of the next run). The server and pgbench (and sysbench)
    get them soft and hard, under ``prlimit`` (``Cluster.hard_limits``,
    ``PhaseContext.client_limits``), so that they cannot raise them."""

    def __init__(self) -> None:
        self.saved: dict[str, tuple[int, int]] = {}

    def set(self, limits: tuple[tuple[str, int], ...]) -> None:
        self.restore()
        for name, n in limits:
            which = os_table.LIMITS[name]
            self.saved[name] = old = resource.getrlimit(which)
            hard = old[1] if old[1] == resource.RLIM_INFINITY else max(n, old[1])
            resource.setrlimit(which, (n, hard))  # a hard one raised: root's capability

    def restore(self) -> None:
        for name, old in self.saved.items():
            resource.setrlimit(os_table.LIMITS[name], old)
        self.saved.clear()


def limits_of(view: OsView, names: Iterable[str]) -> dict[str, str]:
    """What /proc/PID/limits of the postmaster says of ``names`` ("soft hard")."""
    pids = view.postgres_pids() if view.postgres_pids is not None else []
    if not pids:
        return {}
    text = Path(f"/proc/{pids[0]}/limits").read_text().splitlines()
    return {
        name: " ".join(line[len(LIMIT_LINES[name]) :].split()[:2])
        for name in names
        for line in text
        if line.startswith(LIMIT_LINES[name])
    }
