"""A profiled run's recording is folded off the measured path: once its server is stopped (its
data directory thrown away: ``reset = "run"``), beside the next run's copy, with real perf on
the embedded PostgreSQL 18; perf's files, its build ids among them, are gone after the run and
none went to ``~/.debug``."""

from __future__ import annotations

import contextlib
import shutil
import time
import tomllib
from pathlib import Path

import psutil
import pytest

from pglab.campaign import parse as campaign
from pglab.campaign.spec import ProfileSpec
from pglab.lab import Lab
from pglab.planning.plan import make_plan
from pglab.postgres.lease import Upcoming
from pglab.postgres.sources import resolve
from pglab.profile import folded
from pglab.profile.watch import ProfileWatch
from pglab.run.executor import Executor
from pglab.store import open_store

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("perf") is None, reason="no perf (linux-perf)"),
]

CAMPAIGN = """name = "prof-later"
repeats = 2
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 2
duration = 2
latency_log = "off"
[profile]
frequency = 99
"""


@pytest.mark.usefixtures("no_leftovers")
def test_a_recording_is_folded_once_the_server_is_stopped(
    lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # perf's default build-id cache: ~/.debug
    plan = make_plan(campaign.parse(tomllib.loads(CAMPAIGN), "c"))
    binaries = resolve(plan.runs[0].server, lab)
    store = open_store(str(tmp_path / "r.sqlite"))
    executor = Executor(lab, store)
    running_then: list[bool] = []
    fold = ProfileWatch.fold

    def recorded(self: ProfileWatch) -> None:  # the real fold, and whether the server ran
        cluster = executor.cluster
        running_then.append(cluster is not None and cluster.running)
        fold(self)

    monkeypatch.setattr(ProfileWatch, "fold", recorded)
    try:
        first = plan.runs[0]
        result = executor.run_one(first, binaries, upcoming=Upcoming(plan.runs[1], binaries))
        assert result.status == "ok", result.error
        assert running_then == [False]  # folded after the server stopped
        (phase,) = result.phases
        table = phase.tables[folded.TABLE]
        kinds = {row[0]: row[1] for row in table["rows"]}
        assert kinds.get("backend", 0) > 0, kinds
        assert result.timings.profile_s is not None and result.timings.profile_s > 0
        assert not list((lab.home / "work").glob("*/perf-*"))  # recording, build ids: gone
        assert not (home / ".debug").exists()
        second = executor.run_one(plan.runs[1], binaries)  # on the copy begun meanwhile
        assert second.status == "ok", second.error
        assert second.timings.reset_ahead is True
    finally:
        executor.close()
        store.close()


def _perfs() -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if child.name() == "perf" and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
    return found


@pytest.mark.usefixtures("no_leftovers")
def test_a_recording_kept_for_later_is_dropped_whole(lab: Lab, tmp_path: Path) -> None:
    """perf kept for the folding (its sampling off) is ended, and its files removed, when the
    run ends otherwise (``discard``: what the executor does on Ctrl-C or an error)."""
    doc = CAMPAIGN.replace("[profile]\nfrequency = 99\n", "").replace(
        "scale = 1\n", 'scale = 1\nreset = "point"\n'
    )
    plan = make_plan(campaign.parse(tomllib.loads(doc), "c"))
    binaries = resolve(plan.runs[0].server, lab)
    store = open_store(str(tmp_path / "r.sqlite"))
    executor = Executor(lab, store)
    try:
        assert executor.run_one(plan.runs[0], binaries).status == "ok"
        cluster = executor.cluster  # kept running: its data is the point's next run's
        assert cluster is not None and cluster.running
        work = tmp_path / "work"
        before = {p.pid for p in _perfs()}
        with ProfileWatch(cluster, ProfileSpec(enabled=True), work, "x", later=True) as prof:
            time.sleep(0.5)
        assert prof.pending and prof.seconds < 5
        kept = [p for p in _perfs() if p.pid not in before]
        assert len(kept) == 1  # still running, its sampling off
        prof.discard()
        assert not prof.pending
        assert not [p for p in _perfs() if p.pid not in before]  # ended and reaped
        assert not list(work.iterdir())
    finally:
        executor.close()
        store.close()
