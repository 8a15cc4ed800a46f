"""The suite's own timing report (``helpers.file_times``): the machine's CPU ticks read from
``/proc/stat`` as the kernel writes them, and the share of every core they make."""

from __future__ import annotations

from pathlib import Path

from helpers.file_times import busy_pct, cpu_ticks

# the first lines of a real /proc/stat (2 cores, Linux 6.1): user nice system idle iowait irq
# softirq steal guest guest_nice
STAT = """cpu  128346 5102 41235 352214 2311 0 1022 0 0 0
cpu0 64001 2550 20617 176108 1150 0 511 0 0 0
cpu1 64345 2552 20618 176106 1161 0 511 0 0 0
"""


def test_busy_is_all_but_idle_and_iowait(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text(STAT)
    ticks = cpu_ticks(stat)
    assert ticks is not None
    busy, total = ticks
    assert total == 128346 + 5102 + 41235 + 352214 + 2311 + 0 + 1022 + 0
    assert busy == total - 352214 - 2311


def test_no_proc_stat_gives_no_ticks(tmp_path: Path) -> None:
    assert cpu_ticks(tmp_path / "missing") is None
    (tmp_path / "other").write_text("intr 1 2 3\n")
    assert cpu_ticks(tmp_path / "other") is None


def test_the_share_is_of_every_core() -> None:
    assert busy_pct(50, 200) == " 25%"
    assert busy_pct(200, 200) == "100%"
    assert busy_pct(0, 0) == "   -"


def test_the_machine_s_ticks_only_grow() -> None:
    first, second = cpu_ticks(), cpu_ticks()
    assert first is not None and second is not None  # Linux: CI's machine and ours
    assert second[1] >= first[1] and second[0] >= first[0]
