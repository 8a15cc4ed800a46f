"""OS telemetry arithmetic on /proc contents in the kernel's formats (lines from this machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.telemetry import os_stats
from pglab.telemetry.base import Table

# /proc/diskstats of a virtio disk, one second apart while pgbench ran (the second line hand-
# advanced by known amounts: +100 reads of 8 sectors taking 50 ms, +400 writes of 64 sectors
# taking 600 ms, 700 ms busy, 1300 weighted ms)
BEFORE = " 254       0 vda 87420 17613 8533666 33440 2829006 144662 97404528 335967 0 211448 509942 123911 120 58351888 24835 1259021 115698"  # noqa: E501
AFTER = " 254       0 vda 87520 17613 8534466 33490 2829406 144662 97430128 336567 0 212148 511242 123911 120 58351888 24835 1259021 115698"  # noqa: E501


def test_disk_row_is_iostat_arithmetic() -> None:
    before = os_stats.parse_diskstats(BEFORE)["254:0"]
    after = os_stats.parse_diskstats(AFTER)["254:0"]
    row = dict(zip(os_stats.DISK_COLUMNS, os_stats.disk_row(10.0, 1.0, before, after), strict=True))
    assert row["device"] == "vda"
    assert (row["read_iops"], row["write_iops"]) == (100, 400)
    assert row["read_mb_s"] == pytest.approx(800 * 512 / 2**20)
    assert row["write_mb_s"] == pytest.approx(25600 * 512 / 2**20)
    assert row["await_ms"] == pytest.approx(650 / 500)
    assert row["util_pct"] == pytest.approx(70.0)
    assert row["queue"] == pytest.approx(1.3)
    idle = os_stats.disk_row(11.0, 2.0, after, after)
    assert idle[6] is None and idle[7] == 0  # no IO: no await, not busy


def test_cpu_row_splits_all_cpu_time_into_percentages() -> None:
    before = {"user": 100.0, "nice": 0.0, "system": 50.0, "idle": 1000.0, "iowait": 10.0,
              "irq": 0.0, "softirq": 1.0, "steal": 0.0}  # fmt: skip
    after = {"user": 101.0, "nice": 0.0, "system": 50.5, "idle": 1000.2, "iowait": 10.2,
             "irq": 0.0, "softirq": 1.1, "steal": 0.0}  # fmt: skip
    t, user, system, iowait, steal, idle = os_stats.cpu_row(5.0, before, after)
    assert t == 5.0 and user == pytest.approx(50.0) and system == pytest.approx(30.0)
    assert iowait == pytest.approx(10.0) and idle == pytest.approx(10.0) and steal == 0.0
    assert user + system + iowait + steal + idle == pytest.approx(100.0)


def test_meminfo_in_mib() -> None:
    text = "MemTotal:       24683656 kB\nMemFree:        23450416 kB\nCached:          1051792 kB\n"
    text += "Dirty:            309100 kB\nWriteback:             0 kB\nHugePages_Total:       0\n"
    mem = os_stats.parse_meminfo(text)
    row = os_stats.mem_row(1.0, mem)
    assert row[1] == pytest.approx(309100 / 1024) and row[2] == 0
    assert row[5] is None  # no MemAvailable line: missing, not zero


def test_summary_flags_a_client_bound_run_and_leaves_missing_data_out() -> None:
    # a run stored before the others' CPU was kept: no such figure, never a zero
    procs = Table(
        ["t", "pgbench_cpu_pct", "postgres_cpu_pct"], [[1.0, 95.0, 80.0], [2.0, 97.0, 85.0]]
    )
    got = os_stats.summarize({"os.procs": procs})
    assert got == {"pgbench_cpu_pct": 96.0, "postgres_cpu_pct": 82.5, "client_bound": 1.0}
    procs.rows = [[1.0, 40.0, 150.0]]
    assert os_stats.summarize({"os.procs": procs})["client_bound"] == 0.0
    assert os_stats.summarize({}) == {}


def test_a_process_tree_and_its_cpu_from_proc_files(tmp_path) -> None:
    """The postmaster's processes from the kernel's ``children`` lists (a file per process,
    not a scan of every process), and their CPU from /proc/PID/stat; a recorded tree first,
    then this very process, against psutil."""
    import os
    import subprocess
    import sys

    import psutil

    from pglab.hosts.proc import descendants, pid_cpu_seconds

    def task(pid: int, kids: str, stat: str = "") -> None:
        d = tmp_path / str(pid) / "task" / str(pid)
        d.mkdir(parents=True)
        (d / "children").write_text(kids)
        if stat:
            (tmp_path / str(pid) / "stat").write_text(stat)

    task(10, "11 12 ", "10 (postgres) S 1 10 10 0 -1 0 0 0 0 0 300 100 0 0 20 0 1 0")
    task(11, "", "11 (postgres: a b (c)) S 10 10 10 0 -1 0 0 0 0 0 50 25 0 0 20 0 1 0")
    task(12, "13")  # 13 has ended: no files
    assert sorted(descendants(10, str(tmp_path)) or []) == [11, 12, 13]
    assert descendants(99, str(tmp_path)) is None  # gone, or a kernel without the lists
    assert pid_cpu_seconds([10, 11, 13], 100, str(tmp_path)) == {10: 4.0, 11: 0.75}
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as child:
        try:
            found = descendants(os.getpid())
            assert found is None or child.pid in found  # None: no CONFIG_PROC_CHILDREN
            me = psutil.Process().cpu_times()
            mine = pid_cpu_seconds([os.getpid()], os.sysconf("SC_CLK_TCK"))[os.getpid()]
            assert abs(mine - (me.user + me.system)) < 0.05
        finally:
            child.kill()


def test_others_cpu_is_the_busy_time_less_ours_their_descendants_and_kernel_threads() -> None:
    P = os_stats.Proc
    # 100 is pglab, 200 the postmaster, 2 kthreadd; 300 a neighbour
    before = {100: P(1, 5.0, 0.0), 101: P(100, 1.0, 0.0), 200: P(1, 3.0, 0.0),
              201: P(200, 0.5, 0.0), 203: P(200, 0.2, 0.0), 300: P(1, 10.0, 0.0),
              2: P(0, 0.0, 0.0), 3: P(2, 1.0, 0.0)}  # fmt: skip
    # in one second: pglab 0.5 and its child 0.9; the postmaster 0.1, a backend 0.3, a new one
    # 0.2 and one that exited after 0.1 more (reaped: its 0.3 in all in the postmaster's time);
    # a kernel thread 0.5; the neighbour 0.9 and a child of its that came and went (0.4)
    after = {100: P(1, 5.5, 0.0), 101: P(100, 1.9, 0.0), 200: P(1, 3.1, 0.3),
             201: P(200, 0.8, 0.0), 202: P(200, 0.2, 0.0), 300: P(1, 10.9, 0.4),
             2: P(0, 0.0, 0.0), 3: P(2, 1.5, 0.0)}  # fmt: skip
    ours = 0.5 + 0.9 + 0.1 + 0.3 + 0.2 + 0.1 + 0.5
    busy = ours + 0.9 + 0.4
    got = os_stats.others_cpu(1.0, busy, before, after, [100, 200])
    assert got == pytest.approx(130.0)
    assert os_stats.others_cpu(2.0, busy, before, after, [100, 200, 300]) == pytest.approx(0.0)


def test_scan_processes_reads_this_process() -> None:
    import os

    found = os_stats.scan_processes(Path("/proc"))
    me = found[os.getpid()]
    assert me.ppid == os.getppid() and me.cpu > 0
