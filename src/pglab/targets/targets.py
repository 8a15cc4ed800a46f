"""Storage targets: the directories, tmpfs mounts and loop-device filesystems runs put PGDATA
and pg_wal on, made before a campaign's first run and always torn down after it.

Kinds (``spec.TargetSpec``): ``path`` (an existing directory: the lab makes a subdirectory
``pglab-<pid>-<name>`` in it), ``tmpfs`` (mounted by the lab) and ``loop`` (a sparse file of the
given size, attached to a loop device, ``mkfs.<fstype>``, mounted with the given options). The
last two need root. Everything is checked first (``check``: root, tools with their Debian
package, kernel support, directories), so a missing tool makes nothing.

What the lab makes is written to ``storage/<pid>-<name>.json`` under the lab home *before* it is
made, so a pglab killed at any point (even by SIGKILL) leaves a record of it; ``cleanup_leftovers``
finds records whose pglab is gone and undoes them: it ends postgres processes working there,
unmounts, detaches the loop devices backed by the recorded file (found in /sys), removes the
file and the directories. Only recorded mount points (under ``<lab home>/mnt``) and loop devices
backed by recorded files are ever touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

import psutil

from pglab import procs
from pglab.campaign.spec import TargetKind, TargetSpec
from pglab.errors import LabError
from pglab.fingerprints import TargetFacts
from pglab.lab import Lab

# the Debian package that brings each tool
PACKAGES = {
    "mkfs.ext2": "e2fsprogs",
    "mkfs.ext3": "e2fsprogs",
    "mkfs.ext4": "e2fsprogs",
    "mkfs.xfs": "xfsprogs",
    "mkfs.btrfs": "btrfs-progs",
    "losetup": "mount",
    "mount": "mount",
    "umount": "mount",
}
MKFS_DEFAULTS = {  # forced (the device is a fresh file of ours) and quiet
    "ext2": ["-F", "-q"],
    "ext3": ["-F", "-q"],
    "ext4": ["-F", "-q"],
    "xfs": ["-f", "-q"],
    "btrfs": ["-f", "-q"],
}
# ext3/4 initialize inode tables and the journal lazily, writing in the background for minutes
# after mounting: that would be measured. Done at mkfs time instead, unless -E is given.
EXT_EAGER = ["-E", "lazy_itable_init=0,lazy_journal_init=0"]
TIMEOUT = 600


def tool(name: str) -> str | None:
    """The tool on the PATH children get (root's PATH has /usr/sbin, where these live)."""
    return shutil.which(name, path=procs.clean_env()["PATH"])


def tools_for(target: TargetSpec) -> list[str]:
    if target.kind == "path":
        return []
    if target.kind == "tmpfs":
        return ["mount", "umount"]
    return ["losetup", f"mkfs.{target.fstype}", "mount", "umount"]


def check(targets: Iterable[TargetSpec], lab: Lab) -> list[str]:
    """What stands in the way of making ``targets``; empty when nothing does."""
    problems: list[str] = []
    supported = _kernel_filesystems()
    for t in {t.name: t for t in targets}.values():
        where = f'storage target "{t.name}" ({t.kind})'
        if t.kind == "path":
            path = Path(str(t.path))
            if not path.is_dir():
                problems.append(f"{where}: {path} is not an existing directory")
                continue
            if not os.access(path, os.W_OK | os.X_OK):
                problems.append(f"{where}: {path} is not writable by pglab")
                continue
            try:
                lab.check_reachable(path)
            except LabError as exc:
                problems.append(f"{where}: {exc.message}; {exc.hint}")
            continue
        if os.geteuid() != 0:
            problems.append(
                f"{where}: pglab makes and mounts it itself, which needs root — run pglab as "
                'root (sudo), or use kind = "path" with a directory you mounted'
            )
        for name in tools_for(t):
            if tool(name) is None:
                problems.append(
                    f"{where}: {name} is not installed (Debian package {PACKAGES[name]}: "
                    f"apt-get install {PACKAGES[name]})"
                )
        if supported is not None and t.fstype not in supported:
            problems.append(
                f"{where}: the kernel does not support {t.fstype} (not in /proc/filesystems; "
                f"try modprobe {t.fstype})"
            )
        if t.dir is not None and not Path(t.dir).is_dir():
            problems.append(f"{where}: dir = {t.dir} is not an existing directory")
        elif t.kind == "loop" and t.size is not None:
            # the file is sparse, so only what runs write is taken; a size over what is free
            # could only end in I/O errors inside the filesystem
            free = shutil.disk_usage(_existing(Path(t.dir) if t.dir else lab.home)).free
            if t.size > free:
                problems.append(
                    f"{where}: size {t.size / 2**20:,.0f} MB is more than the "
                    f"{free / 2**20:,.0f} MB free where its file goes "
                    f"({t.dir or lab.home}); give a smaller size or dir = a roomier directory"
                )
    return problems


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def require(targets: Iterable[TargetSpec], lab: Lab) -> None:
    if problems := check(targets, lab):
        raise LabError(
            "storage targets cannot be made:\n  " + "\n  ".join(problems),
            hint="nothing was made and no run started; fix the above and run again",
        )


def _kernel_filesystems() -> set[str] | None:
    try:
        text = Path("/proc/filesystems").read_text()
    except OSError:
        return None
    return {line.split()[-1] for line in text.splitlines() if line.split()}


# -- what was made, and its record -------------------------------------------------------------


def _safe(name: str) -> str:
    """A file name for a target name; one that had to change gets a hash, so two names never
    share one mount point."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40]
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return safe


class Owner(TypedDict, total=False):
    """The pglab process that made a target (a leftover's owner may be gone, or not said)."""

    pid: int
    create_time: float


class TargetRecord(TypedDict):
    """What is written under the lab home before a target is made (``storage/TAG.json``), so
    that a dead pglab's targets are undone at the next start (``cleanup_leftovers``)."""

    owner: Owner
    name: str
    kind: TargetKind
    root: str
    backing: str | None
    device: str | None
    tag: str


@dataclass
class Made:
    """One target made by this pglab: ``root`` is where its clusters go."""

    target: TargetSpec
    root: Path
    state: Path
    backing: Path | None = None
    device: str | None = None
    tag: str = ""
    mkfs_argv: list[str] = field(default_factory=list)

    def record(self) -> TargetRecord:
        me = psutil.Process()
        return {
            "owner": {"pid": me.pid, "create_time": me.create_time()},
            "name": self.target.name,
            "kind": self.target.kind,
            "root": str(self.root),
            "backing": str(self.backing) if self.backing else None,
            "device": self.device,
            "tag": self.tag,
        }

    def save(self) -> None:
        partial = self.state.with_suffix(".partial")
        partial.write_text(json.dumps(self.record(), indent=2))
        partial.replace(self.state)

    def describe(self) -> TargetFacts:
        """For the run's fingerprint: the target as defined and as made."""
        return {
            "name": self.target.name,
            "kind": self.target.kind,
            "fstype": self.target.fstype,
            "size": self.target.size,
            "mkfs": self.mkfs_argv,
            "mount_options": list(self.target.mount_options),
            "direct_io": self.target.direct_io,
            "root": str(self.root),
            "root_owner_uid": self.root.stat().st_uid,  # the server account's
            "device": self.device,
            "backing_file": str(self.backing) if self.backing else None,
        }


class Targets:
    """The targets of one campaign: ``make`` them all, ``root_of`` one, ``teardown`` always."""

    def __init__(self, lab: Lab):
        self.lab = lab
        self.made: dict[str, Made] = {}

    def __enter__(self) -> Targets:
        return self

    def __exit__(self, *exc: object) -> None:
        self.teardown()

    def make(self, targets: Iterable[TargetSpec], on_status: Callable[[str], None]) -> None:
        """Make every target (checked first); on any failure undo what was made, then raise."""
        targets = list({t.name: t for t in targets}.values())
        require(targets, self.lab)
        try:
            for t in targets:
                on_status(f"making storage target {t.name}: {_summary(t)}")
                self._make(t)
        except LabError as exc:
            self.teardown()
            raise LabError(
                exc.message,
                hint=exc.hint
                or "no run started and what was made is torn down; check the "
                "target's mkfs_options and mount_options (dmesg may say more)",
            ) from exc
        except BaseException:
            self.teardown()
            raise

    def root_of(self, target: TargetSpec | None) -> Path | None:
        return None if target is None else self.made[target.name].root

    def describe(self, target: TargetSpec | None) -> TargetFacts | None:
        return None if target is None else self.made[target.name].describe()

    def teardown(self) -> None:
        """Undo everything made, newest first; raise after trying all if something stays."""
        errors = []
        for name in reversed(list(self.made)):
            try:
                undo(self.made.pop(name).record(), Path(self.lab.home))
            except LabError as exc:
                errors.append(exc.message)
        if errors:
            raise LabError(
                "could not tear down storage: " + "; ".join(errors),
                hint="pglab retries at its next start; see `losetup -a` and /proc/mounts",
            )

    # -- making ----------------------------------------------------------------------------
    def _make(self, t: TargetSpec) -> Made:
        tag = f"{os.getpid()}-{_safe(t.name)}"
        states = self.lab.home / "storage"
        states.mkdir(parents=True, exist_ok=True)
        if t.kind == "path":
            root = Path(str(t.path)) / f"pglab-{tag}"
        else:
            root = self.lab.home / "mnt" / tag
        made = Made(t, root, states / f"{tag}.json", tag=f"pglab-{tag}")
        if t.kind == "loop":
            made.backing = Path(t.dir or states) / f"pglab-{tag}.img"
        made.save()  # the record first: a pglab killed from here on leaves it for cleanup
        self.made[t.name] = made  # and a failure from here on is undone by teardown
        root.mkdir(parents=True, exist_ok=False)
        if t.kind == "tmpfs":
            opts = ",".join([f"size={t.size}", "mode=0755", *t.mount_options])
            procs.run(
                [_tool("mount"), "-t", "tmpfs", "-o", opts, made.tag, str(root)],
                timeout=TIMEOUT,
                what="mount of a tmpfs",
            )
        elif t.kind == "loop":
            self._make_loop(made)
        self.lab.give(root)
        os.chmod(root, 0o755)
        self.lab.check_reachable(root)
        return made

    def _make_loop(self, made: Made) -> None:
        t = made.target
        assert made.backing is not None and t.size is not None and t.fstype is not None
        with open(made.backing, "xb") as f:  # sparse: blocks are taken as the filesystem writes
            f.truncate(t.size)
        argv = [_tool("losetup"), "--find", "--show"]
        if t.direct_io:
            argv.append("--direct-io=on")
        out = procs.run([*argv, str(made.backing)], timeout=TIMEOUT, what="losetup").stdout
        made.device = out.strip()
        made.save()
        opts = list(MKFS_DEFAULTS[t.fstype])
        if t.fstype.startswith("ext") and "-E" not in t.mkfs_options:
            opts += EXT_EAGER
        made.mkfs_argv = [f"mkfs.{t.fstype}", *opts, *t.mkfs_options, made.device]
        procs.run(
            [_tool(f"mkfs.{t.fstype}"), *made.mkfs_argv[1:]],
            timeout=TIMEOUT,
            what=f"mkfs.{t.fstype} of storage target {t.name}",
        )
        argv = [_tool("mount"), "-t", t.fstype]
        if t.mount_options:
            argv += ["-o", ",".join(t.mount_options)]
        procs.run(
            [*argv, made.device, str(made.root)],
            timeout=TIMEOUT,
            what=f"mount of storage target {t.name}",
        )


def _tool(name: str) -> str:
    path = tool(name)
    if path is None:
        raise LabError(f"{name} is not installed", hint=f"apt-get install {PACKAGES[name]}")
    return path


def _summary(t: TargetSpec) -> str:
    if t.kind == "path":
        return f"a directory in {t.path}"
    size = f"{(t.size or 0) / 2**20:,.0f} MB"
    opts = f" -o {','.join(t.mount_options)}" if t.mount_options else ""
    if t.kind == "tmpfs":
        return f"tmpfs of {size}{opts}"
    mkfs = f" {' '.join(t.mkfs_options)}" if t.mkfs_options else ""
    return f"{t.fstype}{mkfs} on a {size} loop file{opts}"


# -- undoing: after a campaign, and what a dead pglab left ------------------------------------


def mounts() -> dict[str, tuple[str, str]]:
    """Mount point -> (source, fstype), from /proc/self/mounts."""
    out = {}
    for line in Path("/proc/self/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 3:
            out[parts[1].replace("\\040", " ")] = (parts[0], parts[2])
    return out


def loop_devices_of(backing: Path) -> list[str]:
    """The loop devices attached to ``backing``, from /sys (also when the file was deleted
    while attached, which ``losetup -j`` cannot find)."""
    found = []
    for path in sorted(Path("/sys/block").glob("loop*/loop/backing_file")):
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text in (str(backing), f"{backing} (deleted)"):
            found.append(f"/dev/{path.parent.parent.name}")
    return found


def undo(rec: TargetRecord, home: Path) -> None:
    """Undo one record: stop what works there, unmount, detach, remove; idempotent."""
    root = Path(rec["root"])
    backing = Path(found) if (found := rec.get("backing")) else None
    state = home / "storage" / f"{rec['tag'].removeprefix('pglab-')}.json"
    problems = []
    _end_processes_under(root)
    if rec["kind"] in ("tmpfs", "loop"):
        loops = loop_devices_of(backing) if backing else []
        mounted = mounts().get(str(root))
        ours = mounted is not None and (
            (rec["kind"] == "tmpfs" and mounted == (rec["tag"], "tmpfs"))
            or (rec["kind"] == "loop" and mounted[0] in loops)
        )
        if mounted is not None and not ours:
            problems.append(f"{root} holds a mount pglab did not make ({mounted[0]}); left alone")
        elif mounted is not None and not _umount(root):
            problems.append(f"cannot unmount {root}")
        for dev in loops:
            res = procs.run([_tool("losetup"), "-d", dev], timeout=60, check=False)
            if res.returncode != 0:
                problems.append(f"cannot detach {dev}: {res.stderr.strip()}")
        if backing is not None and not problems:
            backing.unlink(missing_ok=True)
        if not problems and root.is_dir() and not os.path.ismount(root):
            with contextlib.suppress(OSError):
                root.rmdir()  # an empty mount point; never a tree that might be mounted
    elif root.is_dir() and not os.path.ismount(root):
        shutil.rmtree(root, ignore_errors=True)
    if problems:
        raise LabError(f'storage target "{rec["name"]}": ' + "; ".join(problems))
    state.unlink(missing_ok=True)


def _umount(root: Path) -> bool:
    """Unmount, retrying while it is busy (a process that has just been ended); lazily last."""
    umount = _tool("umount")
    for _ in range(20):
        if procs.run([umount, str(root)], timeout=120, check=False).returncode == 0:
            return True
        if str(root) not in mounts():
            return True
        time.sleep(0.25)
    procs.run([umount, "-l", str(root)], timeout=120, check=False)
    return str(root) not in mounts()


def _end_processes_under(root: Path) -> None:
    """postgres and pgbench processes working in ``root`` (a dead pglab's, or a straggler)."""
    victims = []
    for p in psutil.process_iter(["name"]):
        try:
            if p.info["name"] in ("postgres", "postmaster", "pgbench") and (
                Path(p.cwd()) == root or root in Path(p.cwd()).parents
            ):
                victims.append(p)
        except (psutil.Error, OSError):
            continue
    for p in victims:
        with contextlib.suppress(psutil.Error):
            p.kill()
    psutil.wait_procs(victims, timeout=10)


def _owner_alive(owner: Owner) -> bool:
    try:
        proc = psutil.Process(owner["pid"])
        return bool(abs(proc.create_time() - owner["create_time"]) < 0.01)
    except (psutil.Error, KeyError, TypeError):
        return False


def cleanup_leftovers(lab: Lab) -> list[str]:
    """Undo the targets of pglab processes that are gone (killed, or a teardown that failed)."""
    done: list[str] = []
    states = lab.home / "storage"
    if not states.is_dir():
        return done
    # one pglab at a time undoes leftovers (two starting together would race on one record)
    with open(states / ".cleanup.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for path in sorted(states.glob("*.json")):
            try:
                rec: TargetRecord = json.loads(path.read_text())  # as record() wrote it
            except (OSError, ValueError):
                continue
            if _owner_alive(rec.get("owner") or {}):
                continue
            if rec["kind"] != "path" and os.geteuid() != 0:
                continue  # made as root: only root can undo it
            what = f'storage target "{rec["name"]}" ({rec["kind"]}) at {rec["root"]}'
            try:
                undo(rec, lab.home)
            except LabError as exc:  # names are per process: it does not stand in the way
                done.append(
                    f"could not tear down a leftover of an earlier pglab, {what}: {exc.message} "
                    "(retried at the next start)"
                )
                continue
            done.append(f"tore down a leftover of an earlier pglab: {what}")
    return done
