"""`pglab storage` on real filesystems: a tmpfs (mounted here, as root) and a disk directory."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from pglab.cli import main
from pglab.lab import Lab
from pglab.store import open_store
from pglab.targets.output import sync_rate

pytestmark = pytest.mark.integration

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@pytest.fixture
def tmpfs() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="pglab-tmpfs-", dir="/tmp"))
    os.chmod(path, 0o755)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128m", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)
        path.rmdir()


@pytest.fixture
def disk_dir() -> Iterator[Path]:
    base = Path("/var/tmp")
    path = Path(tempfile.mkdtemp(prefix="pglab-disk-", dir=base))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def storage(lab: Lab, store: Path, *args: str, capsys) -> list[dict]:
    capsys.readouterr()
    code = main(["storage", *args, "--json", "--lab-dir", str(lab.home), "--store", str(store)])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


@root_only
def test_tmpfs_syncs_much_faster_than_disk(
    tmp_path: Path, lab: Lab, tmpfs: Path, disk_dir: Path, capsys
) -> None:
    store = tmp_path / "r.sqlite"
    (on_tmpfs,) = storage(lab, store, str(tmpfs), "--seconds", "1", "--no-fio", capsys=capsys)
    (on_disk,) = storage(lab, store, str(disk_dir), "--seconds", "1", "--no-fio", capsys=capsys)
    assert on_tmpfs["fstype"] == "tmpfs" and on_tmpfs["target_path"] == str(tmpfs)
    assert on_disk["fstype"] not in ("tmpfs", None) and on_disk["device"]
    fast = sync_rate(on_tmpfs["results"], "fdatasync")
    slow = sync_rate(on_disk["results"], "fdatasync")
    assert fast > 0 and slow > 0
    # tmpfs "syncs" in memory (~700k/s here); the virtio disk of these machines does ~5k/s.
    # 10x leaves room for a much faster disk and a busy machine.
    assert fast >= 10 * slow, (fast, slow)
    # each tool ran as the server account in a temporary directory it removed afterwards
    assert not [p for p in (*tmpfs.iterdir(), *disk_dir.iterdir())]
    with open_store(str(store)) as s:
        rows = s.list_storage_results()
        assert [(r["fstype"], r["tool"]) for r in rows] == [
            ("tmpfs", "pg_test_fsync"),
            (on_disk["fstype"], "pg_test_fsync"),
        ]
        assert "ops/sec" in s.get_storage_result(rows[0]["id"])["output"]
    capsys.readouterr()
    assert main(["storage", "--list", "--store", str(store)]) == 0
    listed = capsys.readouterr().out
    assert "tmpfs" in listed and "fdatasync" in listed


@root_only
@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (apt-get install fio)")
def test_fio_suite_on_tmpfs(tmp_path: Path, lab: Lab, tmpfs: Path, capsys) -> None:
    rows = storage(lab, tmp_path / "r.sqlite", str(tmpfs), "--seconds", "1", "--fio",
                   capsys=capsys)  # fmt: skip
    assert [r["tool"] for r in rows] == ["pg_test_fsync", "fio"]
    jobs = {j["name"]: j for j in rows[1]["results"]["jobs"]}
    assert list(jobs) == ["randread-4k", "randwrite-4k-fsync", "seqread-1M", "seqwrite-1M"]
    for j in jobs.values():
        assert j["error"] == 0 and j["iops"] > 0 and j["mb_per_s"] > 0, j
    assert not list(tmpfs.iterdir())


def test_unreachable_directory_is_refused(tmp_path: Path, lab: Lab, capsys) -> None:
    if lab.run_as is None:
        pytest.skip("only root runs the tools as another account")
    hidden = tmp_path / "hidden"
    (hidden / "data").mkdir(parents=True)
    os.chmod(hidden, 0o700)
    code = main(["storage", str(hidden / "data"), "--lab-dir", str(lab.home),
                 "--store", str(tmp_path / "r.sqlite")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "cannot reach" in err and "chmod o+x" in err


def test_show_run_compares_single_client_commits_with_fsync(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    store = tmp_path / "r.sqlite"
    doc = tmp_path / "one.toml"
    doc.write_text(
        'name = "one-client"\n[dataset]\nscale = 1\n'
        '[workload]\nclients = 1\nduration = 3\nscript = "simple-update"\n'
    )
    common = ["--lab-dir", str(lab.home), "--store", str(store)]
    assert main(["run", str(doc), *common]) == 0
    # the clusters live under the lab home: measure that directory's storage
    storage(lab, store, str(lab.home), "--seconds", "1", "--no-fio", capsys=capsys)
    with open_store(str(store)) as s:
        (listed,) = s.list_runs("one-client")
    assert main(["show", str(listed.id), "--json", *common]) == 0
    got = json.loads(capsys.readouterr().out)["commit_vs_fsync"]
    assert got["method"] == "fdatasync" and got["matched_by"] == "device"
    assert got["commits_per_s"] == pytest.approx(listed.tps)
    assert got["fsync_per_s"] > 0 and got["ratio"] == pytest.approx(
        got["commits_per_s"] / got["fsync_per_s"]
    )
    assert main(["show", str(listed.id), *common]) == 0
    assert "single-client commits vs the WAL storage's fdatasync" in capsys.readouterr().out


@root_only
def test_ctrl_c_stops_pg_test_fsync_and_removes_its_directory(
    tmp_path: Path, lab: Lab, disk_dir: Path
) -> None:
    store = str(tmp_path / "r.sqlite")
    cmd = [sys.executable, "-m", "pglab", "storage", str(disk_dir), "--seconds", "5",
           "--no-fio", "--lab-dir", str(lab.home), "--store", store]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _fsync_processes(disk_dir):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.1)
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert not _fsync_processes(disk_dir)
    assert not list(disk_dir.iterdir()), "the private directory was left behind"
    with open_store(str(tmp_path / "r.sqlite")) as s:
        assert s.list_storage_results() == []


def _fsync_processes(directory: Path) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["name", "cmdline"]):
        if p.info["name"] == "pg_test_fsync" and str(directory) in " ".join(
            p.info["cmdline"] or []
        ):
            found.append(p)
    return found


@root_only
def test_storage_bench_in_a_campaign_measures_the_target_it_made(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    store = tmp_path / "r.sqlite"
    doc = tmp_path / "bench.toml"
    doc.write_text(
        'name = "bench"\n[targets.ram]\nkind = "tmpfs"\nsize = "256MB"\n'
        '[storage]\nwal = "ram"\n[storage_bench]\nseconds = 1\n'
        '[server.settings]\nmax_wal_size = "128MB"\n'  # pg_wal's room on the 256 MB tmpfs
        "[dataset]\nscale = 1\n[workload]\nclients = 1\nduration = 3\n"
    )
    common = ["--lab-dir", str(lab.home), "--store", str(store)]
    assert main(["run", str(doc), *common]) == 0
    with open_store(str(store)) as s:
        (run,) = s.list_runs("bench")
        rows = s.list_storage_results()
    # PGDATA in the lab's clusters directory, pg_wal on the tmpfs the campaign made
    assert [r["tool"] for r in rows] == ["pg_test_fsync", "pg_test_fsync"]
    by_path = {r["target_path"]: r for r in rows}
    assert str(lab.clusters) in by_path
    (made,) = [r for p, r in by_path.items() if p != str(lab.clusters)]
    assert made["fstype"] == "tmpfs" and made["target_path"].startswith(str(lab.home / "mnt"))
    capsys.readouterr()
    assert main(["show", str(run.id), "--json", *common]) == 0
    got = json.loads(capsys.readouterr().out)["commit_vs_fsync"]
    assert got["storage_id"] == made["id"] and got["matched_by"] == "device"
    assert got["fsync_per_s"] > 10_000 and got["ratio"] < 1
