"""The profiler as a watcher of one measured phase, entered by the executor beside the
telemetry's ``PhaseWatch``:

    with ProfileWatch(server, spec, workdir, "select 1") as prof:
        result = runner.run(watch)
    tables = {**watch.tables, **prof.tables}

On entry perf records the postmaster and its children (``perf.start``) and a thread reads the
titles of the server's processes twice a second (the kind of each pid: a backend, the
checkpointer, ...). On a clean exit perf is stopped, its recording folded into stacks per kind
(the phase table ``profile``) and what could not be seen is said in ``profile.notes`` (a
binary without symbols, with the Debian package that has them); perf's files in the run's work
directory are removed on every exit. With ``later`` (the executor's) perf's sampling is
switched off on exit (over its control FIFO: at once) and perf is stopped and its recording
folded by ``fold`` once the run's server is stopped: perf writing its file out takes a second or
two and ``perf script``'s unwinding of every sample seconds of CPU, which the run's end overlaps
with the next run's copy; ``discard`` ends it when the run ends otherwise. Where this
machine's CPU counts cycles and instructions (``counters.probe``), ``perf stat`` counts the
server's hardware counters beside the recording (``counters``: the phase table
``profile.counters``). A server pglab made on a host is recorded there by that host's perf over
SSH (``host.HostRecording``), folded here the same way. An existing server is not profiled (its
processes are not pglab's to sample), and its notes say so.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from pglab import procs
from pglab.campaign.spec import ProfileSpec
from pglab.errors import CommandError, HostError
from pglab.lab import Lab
from pglab.postgres.interface import OsView, Server
from pglab.profile import counters, folded, perf
from pglab.profile.host import HostRecording
from pglab.records import TableJson

POLL_S = 0.5
NOT_HERE = "not profiled: the server's processes are not pglab's to sample (an existing server)"


class ProfileWatch:
    def __init__(
        self, server: Server, spec: ProfileSpec, workdir: Path, label: str, later: bool = False
    ):
        """``later``: perf's recording is kept on exit and folded by ``fold`` when the caller
        says (the executor: once the run's server is stopped, off the measured path)."""
        self.server, self.spec, self.workdir = server, spec, workdir
        self.later = later
        self.pending = False  # a recording kept for ``fold``
        self.label = "".join(c if c.isalnum() else "_" for c in label)
        self.tables: dict[str, TableJson] = {}
        self.notes: list[str] = []
        self.kinds: dict[int, str] = {}
        self._proc: subprocess.Popen[Any] | None = None
        self._counting: subprocess.Popen[Any] | None = None  # perf stat, where it counts
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        self._pids: Any = None
        self._host: HostRecording | None = None
        self.seconds = 0.0  # stopping perf and folding its recording, after the phase
        self.folding = 0.0  # of which folding it later (``fold``)

    @property
    def data(self) -> Path:
        return self.workdir / f"perf-{self.label}.data"

    @property
    def counts(self) -> Path:
        return self.data.with_suffix(".stat")

    def __enter__(self) -> ProfileWatch:
        if not self.spec.enabled:
            return self
        view = self.server.os_view()
        if view is not None and view.remote is not None and self.server.owned:
            return self._start_on_host(view)
        if view is None or view.remote is not None or view.postgres_pids is None:
            self.notes.append(NOT_HERE)
            return self
        self._pids = view.postgres_pids
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._poll()
        if not self.kinds:
            self.notes.append("not profiled: no process of the server was found")
            return self
        self._proc = perf.start(self.data, self.spec.frequency)
        if counters.probe().countable:
            try:
                self._counting = counters.start(self.counts, self._pids())
            except (CommandError, OSError) as exc:
                self.notes.append(f"hardware counters: perf stat could not start: {exc}")
        self._poller = threading.Thread(target=self._poll_loop, name="pglab-profile", daemon=True)
        self._poller.start()
        return self

    def _start_on_host(self, view: OsView) -> ProfileWatch:
        assert view.remote is not None
        self._host = HostRecording(view.remote, str(view.datadir), self.spec.frequency)
        try:
            why = self._host.start()
        except HostError as exc:
            why = exc.message
        except BaseException:
            self._host.close()
            raise
        if why is not None:
            self.notes.append(f"not profiled: {why}")
            self._host.close()
            self._host = None
        return self

    def _poll(self) -> None:
        pids = self._pids()
        for pid in pids:
            if pid not in self.kinds:
                with contextlib.suppress(psutil.Error):
                    title = " ".join(psutil.Process(pid).cmdline())
                    # a child just forked still has the postmaster's title: read at the next poll
                    if pid == pids[0] or title.startswith("postgres:"):
                        self.kinds[pid] = folded.kind_of(title)
        for child in psutil.Process().children():  # pgbench here: the client's own CPU
            with contextlib.suppress(psutil.Error):
                if child.pid not in self.kinds and child.name() == "pgbench":
                    self.kinds[child.pid] = folded.CLIENT

    def _poll_loop(self) -> None:
        while not self._stop.wait(POLL_S):
            with contextlib.suppress(Exception):  # a process gone mid-read: the next poll
                self._poll()

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        t0 = time.monotonic()
        try:
            if self._host is not None:
                self._finish_on_host(self._host, failed=exc_type is not None)
            else:
                self._finish(failed=exc_type is not None)
        finally:
            if self._host is not None:
                self._host.close()
            if not self.pending:  # a recording kept for ``fold``: there, with its build ids
                self._remove(self.data)
            for suffix in (".err", ".old", ".ctl", ".ack", *counters.SUFFIXES):
                self.data.with_suffix(suffix).unlink(missing_ok=True)
            recorded = self._proc is not None or self._host is not None
            self.seconds = time.monotonic() - t0 if recorded else 0.0
        if exc_type is None and not self.pending:
            self._note_table()

    def fold(self) -> None:
        """The recording kept on exit (``later``: perf's sampling off, perf still running)
        now: perf stopped (its file written out), folded into ``tables``, its files removed;
        ``seconds`` and ``folding`` count it."""
        if not self.pending:
            return
        t0 = time.monotonic()
        try:
            assert self._proc is not None
            why = perf.stop(self._proc, self.data)
            if why is None:
                self._fold()
            else:
                self.notes.append(f"not profiled: {why}")
        finally:
            self.discard()
            self.folding = time.monotonic() - t0
            self.seconds += self.folding
        self._note_table()

    def discard(self) -> None:
        """A recording kept for ``fold`` dropped: perf ended, its files removed (a run that
        ends otherwise, Ctrl-C among them)."""
        if self._proc is not None and self._proc.poll() is None:
            procs.terminate(self._proc, signal.SIGKILL)
        self.pending = False
        self._remove(self.data)

    @staticmethod
    def _remove(data: Path) -> None:
        """A recording and perf's build ids beside it."""
        data.unlink(missing_ok=True)
        shutil.rmtree(perf.buildid_dir(data), ignore_errors=True)

    def _note_table(self) -> None:
        if self.notes:
            self.tables[folded.NOTES] = {
                "columns": folded.NOTE_COLUMNS,
                "rows": [["profile", n] for n in self.notes],
            }

    def _finish(self, failed: bool) -> None:
        if self._poller is not None:
            self._stop.set()
            self._poller.join(timeout=5)
        if self._proc is None:
            return
        if self._counting is not None:
            counted, not_counted = counters.stop(self._counting, self.counts)
            if counted and not failed:
                self.tables[counters.TABLE] = counters.table(counted)
            elif not failed:
                self.notes.append(f"hardware counters: {not_counted}")
        if self.later and not failed:  # sampling off now; perf stopped and folded later
            try:
                perf.disable(self._proc, self.data)
                self.pending = True
                return
            except CommandError:
                pass  # perf ended or did not answer: stopped now, as without ``later``
        why = perf.stop(self._proc, self.data)
        if failed:
            return  # the phase failed: nothing of it is kept
        if why is not None:
            self.notes.append(f"not profiled: {why}")
            return
        self._fold()

    def _fold(self) -> None:
        try:
            found = folded.fold(perf.script(self.data), self.kinds)
        except CommandError as exc:
            self.notes.append(f"not profiled: {exc.message}")
            return
        self.tables[folded.TABLE] = folded.table(found)
        for binary in found.stripped():
            self.notes.append(perf.no_symbols(binary))

    def _finish_on_host(self, host: HostRecording, failed: bool) -> None:
        found: folded.Folded | None = None
        try:
            why = host.stop(keep=not failed)
            if failed:
                return  # the phase failed: nothing of it is kept
            found = folded.fold(host.script(), host.kinds) if why is None else None
        except HostError as exc:
            why = exc.message
        if found is None:
            self.notes.append(f"not profiled: {why}")
            return
        self.tables[folded.TABLE] = folded.table(found)
        self.notes += host.notes(found)


def sweep_leftovers(lab: Lab) -> list[str]:
    """perf files a dead pglab left in its run work directories (``PID-POINT``), removed."""
    removed = []
    for data in (lab.home / "work").glob("*-*/perf-*"):
        tag = data.parent.name.split("-", 1)[0]
        if tag.isdigit() and not psutil.pid_exists(int(tag)):
            if data.is_dir() and not data.is_symlink():  # perf's build ids (``.debug``)
                shutil.rmtree(data, ignore_errors=True)
            else:
                data.unlink(missing_ok=True)
            removed.append(str(data))
    return [f"removed {len(removed)} perf file(s) of a dead pglab"] if removed else []
