"""The live view's parts on given data: sparklines, checkpoint marks under the seconds they
overlap, the panel as text at 80 and 100 columns, and the state file a running pglab writes and
`pglab watch` reads (a file whose pglab is gone is not a running campaign)."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest
from rich.console import Console

from pglab.cli import live
from pglab.run import live as states
from pglab.run.live import LiveRecorder, LiveState
from pglab.telemetry.base import Table
from pglab.telemetry.checkpoints import COLUMNS as CKPT_COLUMNS
from pglab.telemetry.waits import COLUMNS as WAIT_COLUMNS


def test_sparkline_scales_from_zero_and_aligns_right() -> None:
    assert live.sparkline([0, 50, 100], 3) == "▁▅█"
    assert live.sparkline([10, 10], 5) == "   ██"  # steady TPS reads as a flat top line
    assert live.sparkline([None, 1.0], 2) == " █"  # a second without a latency
    assert live.sparkline([], 4) == "    "
    assert live.sparkline([1, 2, 3, 4, 5, 6], 3) == "▆▇█"  # the last ones


def test_checkpoint_marks_stand_under_the_seconds_they_overlap() -> None:
    times = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0]
    ckpts = [[101.5, 103.5, "time"]]
    assert live.checkpoint_marks(times, ckpts) == "··▲━━·"
    assert live.checkpoint_marks(times, [[103.2, None, "wal"]]) == "····▲━"  # still running
    assert live.checkpoint_marks(times, [[None, 101.5, None]]) == "━━━···"  # began before


def state(now: float, **kw) -> LiveState:
    # 1,000 TPS, 400 in the 5 seconds after the checkpoint began, 20 seconds ago
    samples = [[now - 39 + i, 400.0 if 20 <= i < 25 else 1000.0 + i, 2.0] for i in range(40)]
    base = dict(
        campaign="demo", pid=1, pid_started=0.0, started=now - 300, total_s=600.0, done_s=300.0,
        run_index=3, run_total=8, label="fpw=on c=4", repeat=2, ok=2, samples=samples,
        checkpoints=[[now - 20, now - 12, "time"]],
        waits_at=now,
        waits=[["LWLock:WALWrite", 41.0, 1.2], ["IO:WalSync", 30.0, 0.9],
               ["CPU:running", 20.0, 0.5]],
    )  # fmt: skip
    base.update(kw)
    return LiveState(**base)


def text(st: LiveState, now: float, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(live.panel(st, now, width, "Ctrl-C stops the campaign"))
    return console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("width", [80, 100])
def test_the_panel_says_everything_within_the_width(width: int) -> None:
    now = time.time()
    out = text(state(now), now, width)
    lines = out.splitlines()
    assert all(len(line) <= width - 2 for line in lines), out
    assert "pglab · demo · run 3/8: fpw=on c=4 #2" in lines[0]
    tps = next(line for line in lines if "TPS" in line)
    assert "1,039 now, 400–1,039" in tps
    marks = next(line for line in lines if "checkpoint" in line)
    assert "▲━━━━━━━━" in marks and " time, 8.0 s" in marks
    # the dip stands above the seconds after the checkpoint began
    at = marks.index("▲")
    assert tps[at : at + 7] == "█▄▄▄▄▄█"
    assert "ms avg" in next(line for line in lines if "latency" in line)
    assert "last 5 s: LWLock:WALWrite 41%" in out
    assert "50% · 2 ok · 5m00s elapsed · ETA 5m00s" in out
    assert "…" not in out and "Ctrl-C stops the campaign" in lines[-1]


def test_the_panel_before_the_first_second_and_without_telemetry() -> None:
    now = time.time()
    out = text(state(now, samples=[], checkpoints=[], waits=[], waits_at=None,
                     status="initializing dataset scale 100"), now, 100)  # fmt: skip
    assert "waiting for pgbench's first second (initializing dataset scale 100)" in out
    assert "none in this run yet" in out
    assert "not sampled now" in out


def test_waits_that_do_not_fit_are_left_out_whole() -> None:
    st = state(time.time())
    assert live.waits_text(st, 40) == "last 5 s: LWLock:WALWrite 41%"
    assert live.waits_text(st, 200).endswith("CPU:running 20%")


class Run:
    """The few parts of a RunSpec the recorder reads."""

    label = "c=2"
    repeat = 1
    phases = ("main",)

    def estimated_seconds(self) -> float:
        return 10.0


def test_the_recorder_writes_what_watch_reads_and_removes_it(tmp_path: Path) -> None:
    from pglab.records import ProgressSample

    rec = LiveRecorder(tmp_path, "demo", 100.0)
    with rec:
        rec.run_started(Run(), 1, 4)  # type: ignore[arg-type]
        for i in range(3):
            rec.progress(ProgressSample(t=i + 1.0, tps=500.0 + i, latency_avg_ms=1.5))
        t = time.time()
        ckpt = Table(list(CKPT_COLUMNS), [[t - 1, None, "time"] + [None] * 11])
        waits = Table(
            list(WAIT_COLUMNS), [[t, 10, "IO", "WalSync", 7], [t, 10, "CPU", "running", 3]]
        )
        rec.telemetry({"checkpoints": ckpt, "waits": waits})
        ckpt.rows[0][1] = t  # the next read of the log finds its end
        rec.telemetry({"checkpoints": ckpt})
        rec._write(force=True)
        found = states.read(tmp_path, "demo")
        assert found is not None and found.pid == os.getpid()
        assert [s[1] for s in found.samples] == [500.0, 501.0, 502.0]
        assert found.checkpoints == [[t - 1, t, "time"]]  # one checkpoint, now with its end
        assert found.waits[0][:2] == ["IO:WalSync", 70.0]
        assert (found.run_index, found.run_total, found.done_s) == (1, 4, 3.0)
        assert states.read(tmp_path, "other") is None
    assert states.read(tmp_path) is None and not list((tmp_path / "live").glob("*.json"))


def test_a_state_left_by_a_dead_pglab_is_not_running(tmp_path: Path) -> None:
    (tmp_path / "live").mkdir()
    dead = LiveState("old", pid=os.getpid(), pid_started=1.0, started=1.0, total_s=1.0)
    (tmp_path / "live" / "1.json").write_text(dead.to_json())  # same pid, not the same start
    (tmp_path / "live" / "2.json").write_text("{half a file")
    assert states.running(tmp_path) == []
    assert json.loads(dead.to_json())["campaign"] == "old"
    with LiveRecorder(tmp_path, "new", 10.0):  # the next pglab sweeps the dead one's away
        names = {p.name for p in (tmp_path / "live").iterdir()}
        assert "1.json" not in names and f"{os.getpid()}.json" in names


def test_checkpoints_of_a_server_without_a_log_are_not_said_to_be_none() -> None:
    now = time.time()
    out = text(state(now, checkpoints=[], log_read=False), now, 100)
    assert "no server log to read" in out and "none in this run" not in out
    out = text(state(now, checkpoints=[], log_read=True), now, 100)
    assert "none in this run yet" in out
