"""What a running campaign looks like right now, for a live view in its own terminal and for
``pglab watch`` in another.

``LiveRecorder`` sits between the executor and the caller's events (it passes every event on)
and keeps a ``LiveState``: the campaign's progress, the current run's per-second TPS and latency
(pgbench's progress lines) over the last minute, its checkpoints and the waits of the last
seconds (``PhaseWatch``'s ``on_live``). It writes the state, at most once a second, to
``<lab home>/live/<pid>.json`` (written whole and renamed, so a reader never sees half of it) and
removes the file when the campaign ends. ``read`` finds the state of a campaign running in the
lab: a file whose pglab is gone (killed) is ignored, so nothing has to clean it up first.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

from pglab import workloads
from pglab.campaign.spec import RunSpec
from pglab.planning.plan import RUN_OVERHEAD_S
from pglab.records import ProgressSample, RunResult, reason_of
from pglab.run.executor import Events, QuietEvents
from pglab.telemetry import waits as waits_table
from pglab.telemetry.base import Table

WINDOW_S = 60  # the seconds of TPS and latency kept for the sparklines
FINISHED_KEPT = 5  # the last finished runs kept in the state


@dataclass
class LiveState:
    """The state of one running campaign, as ``pglab run`` draws it and ``pglab watch`` reads it.
    Times are epoch seconds. ``samples``: [t, tps, latency_ms or None] per second of the current
    run; ``checkpoints``: [start or None, end or None, reason] of the current run; ``waits``:
    [type:event, % of the waits counted, average processes] over the last seconds."""

    campaign: str
    pid: int
    pid_started: float  # the process's start time: a reused pid is not this pglab
    started: float
    total_s: float  # the plan's estimated seconds
    done_s: float = 0.0  # of them, done
    updated: float = 0.0
    run_index: int = 0
    run_total: int = 0
    label: str = ""
    repeat: int = 0
    phase: str = ""
    ok: int = 0
    failed: int = 0
    status: str = ""  # the last thing the executor said
    live_tps: bool = True  # False: the phase runs without pgbench's -P (progress = false)
    samples: list[list[Any]] = field(default_factory=list)
    checkpoints: list[list[Any]] = field(default_factory=list)
    waits: list[list[Any]] = field(default_factory=list)
    waits_at: float | None = None  # when the waits were read; None: none in this phase
    log_read: bool = False  # the server log was read for checkpoints in this run
    finished: list[list[Any]] = field(default_factory=list)  # [label, repeat, ok, tps or reason]

    def eta_s(self, now: float) -> float:
        """The seconds left: the estimate left, at the pace the campaign has kept so far."""
        left = max(self.total_s - self.done_s, 0.0)
        elapsed = now - self.started
        return left * elapsed / self.done_s if self.done_s > 30 else left

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> LiveState:
        data = json.loads(text)
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def live_dir(home: Path) -> Path:
    return home / "live"


class LiveRecorder:
    """Events for the executor: keeps the live state, writes it for ``pglab watch`` and passes
    every event on to ``inner``. ``snapshot()`` is the state now (from any thread)."""

    def __init__(self, home: Path, campaign: str, total_s: float, inner: Events | None = None):
        self.inner: Events = inner or QuietEvents()
        me = psutil.Process()
        now = time.time()
        self.state = LiveState(campaign, me.pid, me.create_time(), now, total_s)
        self.path = live_dir(home) / f"{me.pid}.json"
        self._samples: deque[list[Any]] = deque(maxlen=WINDOW_S)
        self._lock = threading.Lock()  # the state: the executor's thread and PhaseWatch's
        self._file_lock = threading.Lock()  # one writer of the file at a time
        self._written = 0.0
        self._run_budget = 0.0
        self._run_used = 0.0

    def __enter__(self) -> LiveRecorder:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _sweep(self.path.parent)
        self._write(force=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.path.unlink(missing_ok=True)

    def snapshot(self) -> LiveState:
        with self._lock:
            return LiveState.from_json(self._dump())

    def _dump(self) -> str:
        self.state.samples = list(self._samples)
        return self.state.to_json()

    def _write(self, force: bool = False) -> None:
        """The state to its file, at most once a second unless ``force``; a failure to write
        (a full disk) costs the watchers their view, never the run."""
        now = time.time()
        if not force and now - self._written < 0.9:
            return
        self._written = now
        with self._lock:
            self.state.updated = now
            text = self._dump()
        tmp = self.path.with_suffix(".tmp")
        with self._file_lock, contextlib.suppress(OSError):
            tmp.write_text(text)
            os.replace(tmp, self.path)  # a reader sees the old state or the new, never half

    # -- the executor's events ------------------------------------------------------------------
    def status(self, message: str) -> None:
        with self._lock:
            self.state.status = message
        self._write()
        self.inner.status(message)

    def run_started(self, run: RunSpec, index: int, total: int) -> None:
        self._run_budget = run.estimated_seconds() + RUN_OVERHEAD_S
        self._run_used = 0.0
        with self._lock:
            s = self.state
            s.run_index, s.run_total, s.label, s.repeat = index, total, run.label, run.repeat
            s.phase, s.checkpoints, s.waits, s.waits_at, s.log_read = "", [], [], None, False
            self._samples.clear()
        self._write(force=True)
        self.inner.run_started(run, index, total)

    def phase_started(self, run: RunSpec, phase: str, iteration: int) -> None:
        with self._lock:
            self.state.phase = "" if len(run.phases) == 1 else f"{phase} {iteration}"
            self.state.live_tps = run.live(phase)
            self.state.waits, self.state.waits_at = [], None
        self._write(force=True)
        self.inner.phase_started(run, phase, iteration)

    def progress(self, sample: ProgressSample) -> None:
        with self._lock:
            self._samples.append([time.time(), sample.tps, sample.latency_avg_ms])
            if self._run_used + 1 < self._run_budget:
                self._run_used += 1
                self.state.done_s += 1
        self._write()
        self.inner.progress(sample)

    def operation(self, text: str) -> None:
        self.inner.operation(text)  # the progress line's; `pglab watch` shows the phase

    def telemetry(self, tables: dict[str, Table]) -> None:
        with self._lock:
            if (ckpt := tables.get("checkpoints")) is not None:
                self._merge_checkpoints(ckpt)
                self.state.log_read = True
            if "waits" in tables:
                self.state.waits = [list(w) for w in waits_table.top(tables["waits"], 4)]
                self.state.waits_at = time.time()
        self._write()
        self.inner.telemetry(tables)

    def _merge_checkpoints(self, table: Table) -> None:
        """The checkpoints logged in this phase, over what the run had: each read of the log
        gives the phase's checkpoints again, a running one's end once it has come."""
        idx = {c: i for i, c in enumerate(table.columns)}
        by_key = {_key(c): c for c in self.state.checkpoints}
        for row in table.rows:
            item = [row[idx["t"]], row[idx["t_end"]], row[idx["reason"]]]
            by_key[_key(item)] = item
        self.state.checkpoints = sorted(by_key.values(), key=lambda c: c[0] or c[1] or 0.0)

    def run_finished(self, run: RunSpec, result: RunResult) -> None:
        ok = result.status == "ok"
        with self._lock:
            s = self.state
            s.done_s += max(self._run_budget - self._run_used, 0.0)
            s.ok, s.failed = s.ok + ok, s.failed + (not ok)
            what = (
                (workloads.figure_value(result.metrics.of_run()) or 0.0)
                if ok
                else reason_of(result.error)
            )
            s.finished = [*s.finished, [run.label, run.repeat, ok, what]][-FINISHED_KEPT:]
        self._write(force=True)
        self.inner.run_finished(run, result)


def _key(checkpoint: list[Any]) -> tuple[str, float]:
    start, end = checkpoint[0], checkpoint[1]
    return ("start", start) if start is not None else ("end", end)


def running(home: Path) -> list[LiveState]:
    """The campaigns running in the lab now (their pglab alive), the latest started first."""
    found = [s for _, s in _states(live_dir(home)) if s and _alive(s.pid, s.pid_started)]
    return sorted(found, key=lambda s: -s.started)


def _states(directory: Path) -> list[tuple[Path, LiveState | None]]:
    """Every state file with its state (None: not a state)."""
    found: list[tuple[Path, LiveState | None]] = []
    for path in directory.glob("*.json"):
        try:
            state: LiveState | None = LiveState.from_json(path.read_text())
        except FileNotFoundError:
            continue  # removed while read
        except (OSError, ValueError, TypeError):
            state = None
        found.append((path, state))
    return found


def _sweep(directory: Path) -> None:
    """Remove the states that killed pglabs left (a watcher ignores them anyway)."""
    for path, state in _states(directory):
        if state is not None and not _alive(state.pid, state.pid_started):
            path.unlink(missing_ok=True)


def read(home: Path, campaign: str | None = None) -> LiveState | None:
    """The state of ``campaign`` (else of the campaign started last) if it runs now."""
    for state in running(home):
        if campaign is None or state.campaign == campaign:
            return state
    return None


def _alive(pid: int, started: float) -> bool:
    try:
        created: float = psutil.Process(pid).create_time()
        return abs(created - started) < 1.0
    except psutil.Error:
        return False
