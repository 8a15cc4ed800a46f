"""pg_test_fsync and fio output parsing, on output recorded on this project's machines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pglab.errors import LabError
from pglab.lab import Lab
from pglab.targets import fsbench
from pglab.targets.output import parse_fio, parse_pg_test_fsync, sync_rate

DATA = Path(__file__).resolve().parents[1] / "data" / "storage"

KEYS = ["1x8kB", "2x8kB", "open_sync_sizes", "fsync_other_fd", "no_sync"]


@pytest.mark.parametrize(
    "name",
    [
        "pg15_test_fsync_disk.txt",
        "pg16_test_fsync_disk.txt",
        "pg18_test_fsync_disk.txt",
        "pg18_test_fsync_tmpfs.txt",
        "pg18_test_fsync_ext4_journal.txt",
    ],
)
def test_every_version_and_section(name: str) -> None:
    parsed = parse_pg_test_fsync((DATA / name).read_text())
    assert parsed["seconds_per_test"] == 1
    assert [s["key"] for s in parsed["sections"]] == KEYS
    by_key = {s["key"]: s for s in parsed["sections"]}
    methods = [r["method"] for r in by_key["1x8kB"]["rows"]]
    assert methods == ["open_datasync", "fdatasync", "fsync", "fsync_writethrough", "open_sync"]
    assert [r["method"] for r in by_key["open_sync_sizes"]["rows"]] == [
        "1 * 16kB open_sync write",
        "2 * 8kB open_sync writes",
        "4 * 4kB open_sync writes",
        "8 * 2kB open_sync writes",
        "16 * 1kB open_sync writes",
    ]
    assert [r["method"] for r in by_key["fsync_other_fd"]["rows"]] == [
        "write, fsync, close",
        "write, close, fsync",
    ]
    (write,) = by_key["no_sync"]["rows"]
    assert write["method"] == "write" and write["ops_per_s"] > 100_000
    wt = by_key["1x8kB"]["rows"][3]
    assert wt["ops_per_s"] is None and wt["note"] == "not available here"
    assert parsed["direct_io"] is True


def test_numbers_are_the_printed_ones() -> None:
    parsed = parse_pg_test_fsync((DATA / "pg18_test_fsync_disk.txt").read_text())
    assert sync_rate(parsed, "fdatasync") == 6158.737
    assert sync_rate(parsed, "fdatasync", "2x8kB") == 4766.557
    assert sync_rate(parsed, "open_datasync") == 6520.857
    assert sync_rate(parsed, "fsync_writethrough") is None
    assert sync_rate(parsed, "no_such_method") is None
    row = parsed["sections"][0]["rows"][1]
    assert row == {"method": "fdatasync", "ops_per_s": 6158.737, "usecs_per_op": 162.0, "note": ""}


def test_tmpfs_is_much_faster_than_this_disk() -> None:
    disk = parse_pg_test_fsync((DATA / "pg18_test_fsync_disk.txt").read_text())
    tmpfs = parse_pg_test_fsync((DATA / "pg18_test_fsync_tmpfs.txt").read_text())
    assert sync_rate(tmpfs, "fdatasync") > 50 * sync_rate(disk, "fdatasync")


def test_no_direct_io_marks() -> None:
    # what pg_test_fsync prints where open() with O_DIRECT fails (e.g. older ext4 data=journal)
    text = (DATA / "pg18_test_fsync_disk.txt").read_text()
    text = text.replace(
        "        open_datasync                      6520.857 ops/sec     153 usecs/op",
        "        open_datasync                                   n/a*",
    ) + (
        "\n* This file system and its mount options do not support direct\n"
        "  I/O, e.g. ext4 in journaled mode.\n"
    )
    parsed = parse_pg_test_fsync(text)
    assert parsed["direct_io"] is False
    row = parsed["sections"][0]["rows"][0]
    assert row["method"] == "open_datasync" and row["ops_per_s"] is None
    assert "O_DIRECT" in row["note"]
    assert sync_rate(parsed, "fdatasync") == 6158.737


@pytest.mark.parametrize("text", ["", "pg_test_fsync: error: could not open output file", "x:\n"])
def test_not_pg_test_fsync_output(text: str) -> None:
    with pytest.raises(ValueError, match="not pg_test_fsync output"):
        parse_pg_test_fsync(text)


def test_fio_json() -> None:
    parsed = parse_fio(json.loads((DATA / "fio_disk.json").read_text()))
    assert parsed["version"] == "fio-3.33"
    by_name = {j["name"]: j for j in parsed["jobs"]}
    assert list(by_name) == ["randread", "randwrite", "seqread", "seqwrite"]
    assert by_name["randread"]["iops"] == pytest.approx(12128.179551)
    assert by_name["randwrite"]["iops"] == pytest.approx(4634.682659)
    assert by_name["randwrite"]["fsync"] == 1 and by_name["randwrite"]["direct"]
    assert by_name["seqread"]["mb_per_s"] == pytest.approx(813.288331)
    assert by_name["seqwrite"]["mb_per_s"] == pytest.approx(456.266602)
    assert all(j["error"] == 0 and j["lat_mean_us"] > 0 for j in parsed["jobs"])
    # the fsync after every random write: its mean time, and none for the jobs that do not sync
    assert by_name["randwrite"]["sync_lat_mean_us"] == pytest.approx(145.584364136)
    assert by_name["randread"]["sync_lat_mean_us"] is None


def test_fio_without_jobs() -> None:
    with pytest.raises(ValueError, match="no jobs"):
        parse_fio({"fio version": "fio-3.33"})


def test_fio_asked_for_but_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fsbench.shutil, "which", lambda name: None)
    with pytest.raises(LabError, match="fio is not installed") as err:
        fsbench.measure(Lab(home=tmp_path, run_as=None), tmp_path, fio=True)
    assert "apt-get install fio" in err.value.hint


def test_fio_argv_is_small_and_json() -> None:
    argv = fsbench.fio_argv("/usr/bin/fio", Path("/d/w"), 2, direct=False)
    assert argv[:2] == ["/usr/bin/fio", "--output-format=json"]
    assert "--size=32M" in argv and "--runtime=2" in argv and "--direct=1" not in argv
    assert [a for a in argv if a.startswith("--name=")] == [
        "--name=randread-4k", "--name=randwrite-4k-fsync", "--name=seqread-1M",
        "--name=seqwrite-1M",
    ]  # fmt: skip
