"""A server that will not start, and a disk that fills up, in the middle of real campaigns: the run
is stored as failed with what the server said, the campaign goes on, nothing is left running."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import lab_processes

from pglab.campaign import parse as campaign
from pglab.lab import Lab
from pglab.run import campaign_run
from pglab.run.executor import Executor
from pglab.store import open_store

pytestmark = pytest.mark.integration

REJECTED = """
name = "rejected"
order = "sequential"
[dataset]
scale = 1
[workload]
clients = 1
duration = 1
latency_log = "off"
[variants.impossible]     # each value is valid; together the server refuses to start
settings = { max_connections = 10, superuser_reserved_connections = 20 }
[variants.fine]
"""


def test_a_setting_combination_the_server_rejects(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    path = tmp_path / "c.toml"
    path.write_text(REJECTED)
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        runs = {r.variant: store.get_run(r.id) for r in store.list_runs("rejected")}
    assert out.failed == 1 and out.ok == 1
    bad = runs["impossible"]
    assert bad.status == "failed"
    assert "did not start" in bad.error, bad.error
    assert "must be less than" in bad.error, bad.error  # PostgreSQL's own reason
    assert runs["fine"].status == "ok" and runs["fine"].tps > 0


FILL = """
name = "disk-full"
order = "sequential"
[server.settings]
max_wal_size = "100MB"  # the template, a copy and pg_wal's room fit in 256 MB: it runs, then fills
[dataset]
scale = 1
[workload]
clients = 1
duration = 30
latency_log = "off"
vacuum = false
[variants.fill]
workload = { script = "fill.sql" }
[variants.read]
workload = { script = "select-only", duration = 2 }
"""


@pytest.fixture
def small_tmpfs() -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mnt = Path(tempfile.mkdtemp(prefix="pglab-full-", dir="/tmp"))
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256m,mode=755", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        mnt.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        for proc in lab_processes(mnt):
            proc.kill()
        subprocess.run(["umount", "-l", str(mnt)], check=False)
        shutil.rmtree(mnt, ignore_errors=True)


def test_a_disk_that_fills_up_during_a_write_phase(tmp_path: Path, small_tmpfs: Path) -> None:
    """PGDATA on a 256 MB tmpfs; a script that writes ~5 MB per transaction fills it. The run
    fails naming the full disk; the store (elsewhere) keeps it whole; the next run (a fresh copy
    of the dataset) works; nothing is left running."""
    (tmp_path / "fill.sql").write_text(
        "CREATE TABLE IF NOT EXISTS fill (x text) WITH (autovacuum_enabled = off);\n"
        "INSERT INTO fill SELECT repeat(md5(random()::text), 32) FROM generate_series(1, 4000);\n"
    )
    path = tmp_path / "c.toml"
    path.write_text(FILL)
    lab = Lab.open(small_tmpfs / "lab")
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        runs = {r.variant: store.get_run(r.id) for r in store.list_runs("disk-full")}
    assert out.failed == 1 and out.ok == 1, {v: r.error for v, r in runs.items()}
    fill = runs["fill"]
    assert fill.status == "failed" and "No space left on device" in fill.error, fill.error
    assert fill.server_log, "the failed run keeps the server log"
    assert runs["read"].status == "ok" and runs["read"].tps > 0
    assert lab_processes(small_tmpfs) == []
