"""Shared memory that PostgreSQL servers killed by the tests left behind, removed at the end of
a test session.

A postmaster removes its dynamic shared memory segments (``/dev/shm/PostgreSQL.*``) and its
System V segment when it shuts down, and a postmaster started again on the same data
directory removes what the previous one left; one killed by SIGKILL (the fault tests do it on
purpose) whose data directory the test then deletes leaves them for good: ~75 kB a server,
122 MB over a few hundred CI runs on one machine. When no process of the servers' account
runs, none of that account's segments can be in use: they are removed. Segments listed before
the processes are looked at, so a server that starts meanwhile keeps its own.

libfaketime (a generator host whose clock is ahead) leaves a ``/dev/shm/faketime_shm_PID`` of
each process it ran in: those of processes gone are removed too.
"""

from __future__ import annotations

import os
import pwd
import subprocess
from collections.abc import Callable
from pathlib import Path

import psutil

SHM = Path("/dev/shm")
SYSV = Path("/proc/sysvipc/shm")


def busy(uid: int) -> bool:
    """Whether a process of ``uid`` runs."""
    return any(p.info["uids"] and p.info["uids"].real == uid
               for p in psutil.process_iter(["uids"]))  # fmt: skip


def sweep(account: str, is_busy: Callable[[int], bool] = busy) -> tuple[int, int]:
    """Remove ``account``'s PostgreSQL segments when no process of it runs: (DSM files, System V
    segments) removed; (0, 0) when one runs, the account does not exist or we are not root."""
    try:
        uid = pwd.getpwnam(account).pw_uid
    except KeyError:
        return 0, 0
    if os.geteuid() != 0:
        return 0, 0
    _faketime_leftovers()
    files = [p for p in SHM.glob("PostgreSQL.*") if _owner(p) == uid]
    segments = _sysv_segments(uid)
    if is_busy(uid):
        return 0, 0
    for path in files:
        path.unlink(missing_ok=True)
    removed = 0
    for shmid in segments:
        done = subprocess.run(["ipcrm", "-m", str(shmid)], capture_output=True)
        removed += done.returncode == 0
    return len(files), removed


def _faketime_leftovers() -> None:
    for path in SHM.glob("faketime_shm_*"):
        pid = path.name.removeprefix("faketime_shm_")
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            path.unlink(missing_ok=True)


def _owner(path: Path) -> int | None:
    try:
        return path.stat().st_uid
    except OSError:
        return None


def _sysv_segments(uid: int) -> list[int]:
    """System V segments of ``uid`` that no process has attached."""
    if not SYSV.exists():
        return []
    lines = SYSV.read_text().splitlines()
    cols = lines[0].split() if lines else []
    out = []
    for line in lines[1:]:
        row = dict(zip(cols, line.split(), strict=False))
        if row.get("uid") == str(uid) and row.get("nattch") == "0":
            out.append(int(row["shmid"]))
    return out
