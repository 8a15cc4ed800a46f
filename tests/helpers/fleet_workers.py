"""``pglab worker`` processes for the tests of a fleet (tests/integration/test_fleet.py, and
``pglab bisect --fleet`` in test_bisect.py): each with a lab home and a log of its own."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import lab_parent, lab_processes


class Workers:
    """``pglab worker`` processes, each with a lab home and a log of its own."""

    def __init__(self, store: str, root: Path):
        self.store, self.root = store, root
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str, *extra: str) -> subprocess.Popen:
        home = self.home(name)
        home.mkdir(mode=0o755, exist_ok=True)
        log = open(self.root / f"{name}.log", "ab")  # noqa: SIM115 - the worker writes to it
        proc = subprocess.Popen(
            [sys.executable, "-m", "pglab", "worker", "--store", self.store, "--lab-dir",
             str(home), "--name", name, *extra],
            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "COLUMNS": "200"},
        )  # fmt: skip
        log.close()
        self.procs[name] = proc
        self.wait_log(name, "waiting for jobs")
        return proc

    def home(self, name: str) -> Path:
        return self.root / name

    def log(self, name: str) -> str:
        return (self.root / f"{name}.log").read_text(errors="replace")

    def wait_log(self, name: str, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.log(name):
            proc = self.procs[name]
            assert proc.poll() is None, f"worker {name} ended:\n{self.log(name)[-3000:]}"
            assert time.monotonic() < deadline, f"{name} never said {text!r}:\n{self.log(name)}"
            time.sleep(0.1)

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for name, proc in self.procs.items():
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                pytest.fail(f"worker {name} did not stop on SIGTERM:\n{self.log(name)[-2000:]}")


@contextlib.contextmanager
def running_workers(store_url: str) -> Iterator[Workers]:
    """``Workers`` on ``store_url``, each in a lab home under a fresh directory where the
    session's lab home is (``conftest.lab_parent``: /dev/shm when it has room, so that each
    worker's initdb, dataset and copies are made in memory, not at disk speed); every worker
    stopped afterwards (SIGTERM), and nothing of their labs left running."""
    root = Path(tempfile.mkdtemp(prefix="pglab-fleet-", dir=lab_parent()))
    root.chmod(0o755)
    w = Workers(store_url, root)
    try:
        yield w
    finally:
        w.stop_all()
        left = [p for name in w.procs for p in lab_processes(w.home(name))]
        for p in left:
            p.kill()
        shutil.rmtree(root, ignore_errors=True)
        assert not left, f"left running: {left}"
