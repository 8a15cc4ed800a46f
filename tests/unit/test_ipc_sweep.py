"""The end-of-session sweep of killed servers' shared memory: it removes an account's segments
only when no process of that account runs."""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from pathlib import Path

import pytest
from helpers import ipc_sweep

from pglab.lab import DEFAULT_RUN_USER


def test_a_running_process_of_the_account_keeps_its_segments(tmp_path: Path, monkeypatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("the sweep runs as root only")
    uid = pwd.getpwnam(DEFAULT_RUN_USER).pw_uid if _exists(DEFAULT_RUN_USER) else None
    if uid is None:
        pytest.skip(f"no account {DEFAULT_RUN_USER!r} here (the lab makes it)")
    monkeypatch.setattr(ipc_sweep, "SHM", tmp_path)
    monkeypatch.setattr(ipc_sweep, "SYSV", tmp_path / "none")
    left = tmp_path / "PostgreSQL.12345"
    left.write_bytes(b"x")
    os.chown(left, uid, -1)
    mine = tmp_path / "PostgreSQL.777"  # another account's: never touched
    mine.write_bytes(b"x")
    gone, here = tmp_path / "faketime_shm_999999999", tmp_path / f"faketime_shm_{os.getpid()}"
    gone.write_bytes(b"x")
    here.write_bytes(b"x")
    alive = subprocess.Popen(["setpriv", f"--reuid={uid}", "--clear-groups", "sleep", "30"])
    try:
        # setpriv runs as root until it has changed its uid: wait for that (it failed once
        # when looked at at once, on a loaded machine)
        deadline = time.monotonic() + 10
        while not ipc_sweep.busy(uid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ipc_sweep.busy(uid)  # whatever else of the account runs beside this test
        assert ipc_sweep.sweep(DEFAULT_RUN_USER) == (0, 0) and left.exists()
    finally:
        alive.kill()
        alive.wait()
    # the servers of other tests may run now: the account is taken as idle here
    assert ipc_sweep.sweep(DEFAULT_RUN_USER, is_busy=lambda _: False) == (1, 0)
    assert not left.exists() and mine.exists()
    assert not gone.exists() and here.exists()  # libfaketime's of a process gone, not ours


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def test_system_v_segments_of_the_account_that_no_one_attached(tmp_path: Path, monkeypatch) -> None:
    table = tmp_path / "shm"
    table.write_text(
        "       key      shmid perms   size  cpid  lpid nattch   uid   gid\n"
        "   2160682     163840   600     56  4538  4550      0   999   995\n"
        "   2228227     524289   600     56  4540  4542      1   999   995\n"
        "   2228228     524290   600     56  4540  4542      0     0     0\n"
    )
    monkeypatch.setattr(ipc_sweep, "SYSV", table)
    assert ipc_sweep._sysv_segments(999) == [163840]
