"""The telemetry runner, checkpoint events from real server logs, the waits summary."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from pglab.telemetry import checkpoints, waits
from pglab.telemetry.base import SamplerOff, Table
from pglab.telemetry.runner import NOTES, TelemetryRunner

LOGS = Path(__file__).resolve().parents[1] / "data" / "server_logs"


class Counting:
    """A sampler that records when it was called; optionally fails on a given call."""

    def __init__(self, name: str, interval: float, fail_at: str | None = None, after: int = 0):
        self.name, self.interval = name, interval
        self.fail_at, self.after = fail_at, after
        self.calls: list[str] = []
        self.times: list[float] = []
        self.finished = threading.Event()

    def _maybe_fail(self, where: str) -> None:
        if self.fail_at == where and self.calls.count(where) > self.after:
            raise SamplerOff(f"no {self.name} here")

    def start(self, t: float) -> None:
        self.calls.append("start")
        self._maybe_fail("start")

    def sample(self, t: float) -> None:
        self.calls.append("sample")
        self.times.append(t)
        self._maybe_fail("sample")

    def finish(self, t: float) -> dict[str, Table]:
        self.calls.append("finish")
        self.finished.set()
        table = Table(["t", "n"])
        for i, when in enumerate(self.times):
            table.add(when, i)
        return {self.name: table}


def test_runner_samples_on_schedule_and_returns_every_table() -> None:
    fast, slow = Counting("fast", 0.05), Counting("slow", 0.2)
    runner = TelemetryRunner([fast, slow])
    runner.start()
    time.sleep(0.55)
    tables = runner.stop()
    assert set(tables) == {"fast", "slow"}
    assert fast.calls[0] == "start" and fast.calls[-1] == "finish"
    assert 5 <= len(fast.times) <= 12 and 1 <= len(slow.times) <= 3
    assert all(b > a for a, b in zip(fast.times, fast.times[1:], strict=False))


def test_a_failing_sampler_is_switched_off_with_its_reason_and_the_others_go_on() -> None:
    broken_at_start = Counting("nostart", 0.05, fail_at="start")
    broken_later = Counting("later", 0.05, fail_at="sample", after=2)
    fine = Counting("fine", 0.05)
    runner = TelemetryRunner([broken_at_start, broken_later, fine])
    runner.start()
    time.sleep(0.4)
    tables = runner.stop()
    assert "fine" in tables and "nostart" not in tables and "later" not in tables
    notes = {row[0]: row[1] for row in tables[NOTES].rows}
    assert notes == {
        "nostart": "off (start): no nostart here",
        "later": "off (sample): no later here",
    }
    # a sampler switched off still got finish() to release what it held, and is not sampled
    assert broken_at_start.finished.is_set() and "sample" not in broken_at_start.calls
    assert broken_later.finished.is_set() and broken_later.calls.count("sample") == 3


def test_a_slow_sampler_skips_calls_instead_of_piling_them_up() -> None:
    class Slow(Counting):
        def sample(self, t: float) -> None:
            super().sample(t)
            time.sleep(0.25)

    slow = Slow("slow", 0.05)
    runner = TelemetryRunner([slow])
    runner.start()
    time.sleep(0.6)
    runner.stop()
    assert len(slow.times) <= 4  # 0.6 s of 0.25 s calls, not 12 calls queued at 0.05 s


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_checkpoints_from_a_real_server_log(version: str) -> None:
    table = checkpoints.parse((LOGS / f"{version}_checkpoints.log").read_text())
    assert table.columns == checkpoints.COLUMNS
    assert len(table.rows) == 2
    row = dict(zip(table.columns, table.rows[0], strict=True))
    assert row["reason"] == "immediate force wait"
    assert row["t"] is not None and 0 < row["t_end"] - row["t"] < 1
    assert row["buffers"] > 1000 and 0 < row["buffers_pct"] < 100
    assert row["total_s"] >= row["write_s"] and row["distance_kb"] > 0
    assert (row["slru_buffers"] is None) == (version == "pg15")  # 17+ logs SLRU buffers
    summary = checkpoints.summarize(table)
    assert summary["checkpoints"] == 2
    assert summary["checkpoint_buffers"] == sum(r[3] for r in table.rows)


def test_checkpoint_cut_by_the_window_has_no_invented_figures() -> None:
    text = (LOGS / "pg18_checkpoints.log").read_text().splitlines()
    # the window ends after a "starting" line and begins after another one's "starting"
    table = checkpoints.parse("\n".join(text[1:3]))
    first, second = (dict(zip(table.columns, r, strict=True)) for r in table.rows)
    assert first["t"] is None and first["reason"] is None and first["buffers"] > 0
    assert second["t"] is not None and second["t_end"] is None and second["buffers"] is None
    assert checkpoints.summarize(table)["checkpoints"] == 1


def test_checkpoint_starting_for_time_and_wal() -> None:
    log = (
        "2026-11-22 15:00:00.000 UTC [1] LOG:  checkpoint starting: time\n"
        "2026-11-22 15:00:27.500 UTC [1] LOG:  checkpoint complete: wrote 10 buffers (0.1%); "
        "0 WAL file(s) added, 0 removed, 0 recycled; write=27.001 s, sync=0.002 s, "
        "total=27.500 s; sync files=3, longest=0.001 s, average=0.001 s; distance=5 kB, "
        "estimate=9 kB\n"
        "2026-11-22 15:00:30.000 UTC [1] LOG:  checkpoint starting: wal\n"
    )
    table = checkpoints.parse(log)
    assert [r[2] for r in table.rows] == ["time", "wal"]
    assert table.rows[0][1] - table.rows[0][0] == pytest.approx(27.5)
    assert table.rows[0][0] == 1795359600.0  # 2026-11-22 15:00:00 UTC


def test_top_waits_are_shares_of_counted_waits_and_average_sessions() -> None:
    table = Table(list(waits.COLUMNS))
    table.add(100.0, 10, "LWLock", "WALWrite", 15)
    table.add(100.0, 10, "CPU", "running", 5)
    table.add(101.0, 10, "LWLock", "WALWrite", 5)
    table.add(101.0, 10, "Lock", "transactionid", 15)
    got = waits.top(table, n=2)
    assert got == [("LWLock:WALWrite", 50.0, 1.0), ("Lock:transactionid", 37.5, 0.75)]
    assert waits.top(None) == [] and waits.top(Table(list(waits.COLUMNS))) == []
