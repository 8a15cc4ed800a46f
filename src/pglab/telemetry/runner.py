"""Runs samplers beside a phase: one thread each, on a fixed schedule, never in pgbench's way.

``start()`` takes every sampler's "before" snapshot; a thread per sampler then calls
``sample(t)`` at ``t0 + k * interval`` (a late call is skipped, not made up, so a slow sampler
cannot pile up work); ``stop()`` ends the threads and takes the "after" snapshots. A sampler that
raises is switched off with its reason in the ``telemetry.notes`` table, and the phase goes on:
the telemetry of a run must never cost the run.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Sequence

from pglab.telemetry.base import Sampler, SamplerOff, Table

NOTES = "telemetry.notes"


class TelemetryRunner:
    def __init__(self, samplers: Sequence[Sampler]):
        self.samplers = list(samplers)
        self.notes = Table(["sampler", "note"])
        self._active: list[Sampler] = []
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def _off(self, sampler: Sampler, where: str, exc: BaseException) -> None:
        reason = str(exc) if isinstance(exc, SamplerOff) else f"{type(exc).__name__}: {exc}"
        with self._lock:
            self.notes.add(sampler.name, f"off ({where}): {reason}")

    def start(self) -> None:
        t0 = time.time()
        for s in self.samplers:
            try:
                s.start(t0)
            except Exception as exc:  # noqa: BLE001 - any failure switches the sampler off
                self._off(s, "start", exc)
                self._finish_quietly(s)
                continue
            self._active.append(s)
        for s in self._active:
            th = threading.Thread(target=self._loop, args=(s, t0), name=f"pglab-{s.name}")
            th.daemon = True
            th.start()
            self._threads.append(th)

    def _loop(self, sampler: Sampler, t0: float) -> None:
        k = 1
        while True:
            due = t0 + k * sampler.interval
            if self._stop.wait(max(0.0, due - time.time())):
                return
            now = time.time()
            try:
                sampler.sample(now)
            except Exception as exc:  # noqa: BLE001
                self._off(sampler, "sample", exc)
                with self._lock:
                    self._active.remove(sampler)
                self._finish_quietly(sampler)
                return
            # the next due time still ahead of us: calls missed while this one ran are skipped
            k = max(k + 1, int((time.time() - t0) / sampler.interval) + 1)

    def stop(self) -> dict[str, Table]:
        """End the sampling and return every table, with ``telemetry.notes`` if any."""
        self._stop.set()
        for th in self._threads:
            th.join(timeout=30)
        t = time.time()
        tables: dict[str, Table] = {}
        with self._lock:
            active = list(self._active)
        # in reverse: the statistics sampler, first to start, finishes last, so that its
        # closing snapshot comes after the other samplers' sessions have ended
        for s in reversed(active):
            try:
                tables.update(s.finish(t))
            except Exception as exc:  # noqa: BLE001
                self._off(s, "finish", exc)
        if self.notes.rows:
            tables[NOTES] = self.notes
        return tables

    def _finish_quietly(self, sampler: Sampler) -> None:
        """Let a sampler that was switched off release what it holds (connections)."""
        with contextlib.suppress(Exception):  # it is off already; its reason is recorded
            sampler.finish(time.time())
