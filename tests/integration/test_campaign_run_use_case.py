"""The "run a campaign" use case (``run/campaign_run.py``) on a real server and pgbench: its
steps in their order as a caller's screen sees them, the live state in the lab while the runs
go, the tidy rows as ``pglab run`` leaves them and as a fleet's job leaves them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pglab.campaign import parse as campaign
from pglab.campaign.spec import RunSpec
from pglab.lab import Lab
from pglab.records import RunResult
from pglab.run import campaign_run
from pglab.run import live as states
from pglab.run.campaign_run import How, Outline
from pglab.run.executor import Events, Executor, QuietEvents
from pglab.run.live import LiveRecorder
from pglab.store import open_store

pytestmark = pytest.mark.integration

ONE_RUN = """
name = "use-case"
[dataset]
scale = 1
[workload]
clients = 1
duration = 1
latency_log = "off"
"""


class Screen(QuietEvents):
    """What a caller is told, in order; whether the live state was in the lab at each run."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.told: list[str] = []

    def status(self, message: str) -> None:
        self.told.append(f"status: {message}")

    def outlined(self, outline: Outline) -> None:
        self.told.append(f"outlined: {len(outline.plan.runs)} run(s) to do")

    @contextlib.contextmanager
    def drawing(self, recorder: LiveRecorder) -> Iterator[Events]:
        self.told.append("drawing")
        yield self
        self.told.append("drawn")

    def run_started(self, run: RunSpec, index: int, total: int) -> None:
        state = states.read(self.home, run.campaign)
        self.told.append(f"run {index}/{total}" + (" (live)" if state is not None else ""))

    def run_finished(self, run: RunSpec, result: RunResult) -> None:
        self.told.append(f"finished: {result.status}")


def test_a_campaign_runs_through_the_use_case_step_by_step(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(ONE_RUN)
    camp = campaign.load(path)
    with open_store(str(tmp_path / "r.sqlite")) as store:
        first = Screen(lab.home)
        out = campaign_run.run_campaign(
            Executor(lab, store, first), camp, How(tidy=False), first
        )  # as a fleet's job: its tidy rows left to export
        assert out.ok == 1 and out.failed == 0
        assert store.runs_without_tidy("use-case") == out.run_ids
        steps = [t for t in first.told if not t.startswith("status: ")]
        assert steps == ["outlined: 1 run(s) to do", "drawing", "run 1/1 (live)", "finished: ok",
                         "drawn"], first.told  # fmt: skip
        assert states.read(lab.home, "use-case") is None  # the live state gone with the run

        again = Screen(lab.home)  # resumed: nothing left to run, the tidy rows made
        out = campaign_run.run_campaign(Executor(lab, store, again), camp, How(), again)
        assert out.ok == 0 and out.run_ids == []
        steps = [t for t in again.told if not t.startswith("status: ") or "resuming" in t]
        resuming = "status: resuming: 1 run(s) already stored, 0 to do"
        assert steps == ["outlined: 0 run(s) to do", "drawing", resuming, "drawn"], again.told
        assert store.runs_without_tidy("use-case") == []
