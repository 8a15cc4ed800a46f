"""The results store under stress: two pglab processes writing to it at once, and a store that
cannot be written. (Locked, corrupt and killed-mid-save stores are tested in
tests/unit/test_store_sqlite.py and the store contract, tests/helpers/store_checks.py.)"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import lab_processes, pglab_run_argv
from helpers.synthetic_runs import fill

from pglab.lab import Lab
from pglab.store import open_store

pytestmark = pytest.mark.integration

CAMPAIGN = """
name = "{name}"
repeats = 2
[dataset]
scale = 1
[workload]
clients = 1
duration = 1
latency_log = "off"
[matrix]
script = ["select-only", "simple-update"]
"""


def test_two_pglab_processes_write_one_store_at_once(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    store_path = tmp_path / "shared.sqlite"
    procs = []
    for name in ("left", "right"):
        path = tmp_path / f"{name}.toml"
        path.write_text(CAMPAIGN.format(name=name))
        procs.append(
            subprocess.Popen(
                pglab_run_argv(path, lab.home, store_path),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        )
    errors = [p.communicate(timeout=300)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    with open_store(str(store_path)) as store:
        for name in ("left", "right"):
            runs = store.list_runs(name)
            assert len(runs) == 4 and all(r.status == "ok" for r in runs), runs
            assert len({r.run_key for r in runs}) == 4
            assert all(store.get_run(r.id).phases for r in runs)


def test_a_store_that_cannot_be_written_stops_before_any_server(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a read-only filesystem (root ignores file modes)")
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN.format(name="ro"))
    mnt = Path(tempfile.mkdtemp(prefix="pglab-ro-", dir="/tmp"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt)], check=True)
    try:
        store_path = mnt / "r.sqlite"
        with open_store(str(store_path)) as store:
            store.ensure_campaign("ro", {}, None)
            ids = fill(store, "stored", variants=("base",), scripts=("select-only",),
                       clients=(1, 2), repeats=1, seconds=5)  # fmt: skip
        before = hashlib.sha256(store_path.read_bytes()).hexdigest()
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        done = subprocess.run(
            pglab_run_argv(path, lab.home, store_path), capture_output=True, text=True
        )
        assert done.returncode == 2, done.stderr
        assert "error: results store" in done.stderr and str(store_path) in done.stderr
        assert "hint:" in done.stderr and "Traceback" not in done.stderr
        assert not lab_processes(lab.home)
        # the commands that only read still read it: ls, show, report, compare, export
        reading = [["ls", "--json"], ["show", "stored"], ["compare", str(ids[0]), str(ids[1])],
                   ["export", "stored", "--format", "csv"],
                   ["report", "stored", "-o", str(tmp_path / "ro.html")]]  # fmt: skip
        outputs = []
        for cmd in reading:
            argv = [sys.executable, "-m", "pglab", *cmd, "--lab-dir", str(lab.home),
                    "--store", str(store_path)]  # fmt: skip
            done = subprocess.run(argv, capture_output=True, text=True)
            assert done.returncode == 0, f"{cmd}: {done.stderr}"
            outputs.append(done.stdout)
        assert sorted(r["id"] for r in json.loads(outputs[0])) == sorted(ids)
        assert (tmp_path / "ro.html").stat().st_size > 0
        assert hashlib.sha256(store_path.read_bytes()).hexdigest() == before
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
        mnt.rmdir()
