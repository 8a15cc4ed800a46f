"""How pglab stops the servers it started between runs: at once ("immediate": no shutdown
checkpoint) when the run's data directory is thrown away after it (``reset = "run"``, a fresh
copy for every run), cleanly ("fast") when the next run of its point starts from what it leaves
(``reset = "point"``). The stops are those of the real servers; the test only records them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pglab.campaign import parse as campaign
from pglab.campaign.spec import RunSpec
from pglab.cli import main
from pglab.lab import Lab
from pglab.planning.plan import make_plan
from pglab.postgres.lease import Upcoming
from pglab.postgres.server import Cluster
from pglab.postgres.sources import Binaries, resolve
from pglab.run.executor import Executor
from pglab.store import Store, open_store

pytestmark = pytest.mark.integration

CAMPAIGN = """name = "{name}"
repeats = 2
[dataset]
scale = 1
reset = "{reset}"
[workload]
script = "tpcb-like"
clients = 1
duration = 1
"""


@pytest.mark.usefixtures("no_leftovers")
@pytest.mark.parametrize(("reset", "mode"), [("run", "immediate"), ("point", "fast")])
def test_a_server_whose_data_is_thrown_away_stops_at_once(
    lab: Lab, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reset: str, mode: str
) -> None:
    stops: list[str] = []
    original = Cluster.stop

    def recorded(self: Cluster, mode: str = "fast", timeout: float = 120) -> None:
        running = self.proc is not None and self.proc.poll() is None
        scratch = self.datadir.name.startswith("catalog-")  # the settings catalog's server
        if running and self.datadir.parent == lab.clusters and not scratch:  # a run's
            stops.append(mode)
        original(self, mode, timeout)

    monkeypatch.setattr(Cluster, "stop", recorded)
    name = f"stops-{reset}"
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN.format(name=name, reset=reset))
    store = tmp_path / "r.sqlite"
    assert main(["run", str(path), "--lab-dir", str(lab.home), "--store", str(store)]) == 0
    with open_store(str(store)) as s:
        runs = [s.get_run(r.id) for r in s.list_runs(name)]
    assert len(runs) == 2 and all(r is not None and r.ok for r in runs)
    # reset = "run": stopped before the second run's copy and at the end, both at once; with
    # reset = "point" the one server serves both repeats and stops cleanly at the end
    assert stops == ([mode] * 2 if reset == "run" else [mode]), stops


def _executor_runs(
    lab: Lab, tmp_path: Path, reset: str
) -> tuple[tuple[RunSpec, ...], Binaries, Store]:
    doc = CAMPAIGN.format(name=f"stops-log-{reset}", reset=reset)
    plan = make_plan(campaign.parse(tomllib.loads(doc), "c"))
    binaries = resolve(plan.runs[0].server, lab)
    return plan.runs, binaries, open_store(str(tmp_path / "r.sqlite"))


@pytest.mark.usefixtures("no_leftovers")
def test_a_thrown_away_server_writes_no_shutdown_checkpoint_and_the_next_copy_is_fresh(
    lab: Lab, tmp_path: Path
) -> None:
    """With reset = "run" the run's server is stopped as its run ends, at once (its log says
    so, and has no shutdown checkpoint), and the next run's copy, begun then, is a fresh one:
    the second run's server holds the second run's transactions only."""
    runs, binaries, store = _executor_runs(lab, tmp_path, "run")
    executor = Executor(lab, store)
    try:
        first = executor.run_one(runs[0], binaries, upcoming=Upcoming(runs[1], binaries))
        assert first.status == "ok", first.error
        cluster = executor.cluster
        assert cluster is not None and not cluster.running  # stopped as its run ended
        log = cluster.log_path.read_text()
        assert "received immediate shutdown request" in log, log[-2000:]
        assert "received fast shutdown request" not in log
        assert "checkpoint starting: shutdown" not in log, log[-2000:]
        assert first.timings.stop_s is not None and first.timings.stop_s < 10
        second = executor.run_one(runs[1], binaries)  # takes the copy begun for it
        assert second.status == "ok", second.error
        assert second.timings.reset_waited_s is not None
        assert second.timings.reset_s is not None and second.timings.reset_s > 0
        cluster = executor.cluster
        assert cluster is not None and not cluster.running
        cluster.start()  # its own data: the committed transactions of its run alone
        with cluster.connect() as conn:
            row = conn.execute("SELECT count(*) FROM pgbench_history").fetchone()
        (phase,) = second.phases
        assert row is not None and row[0] == phase.report.transactions, (row, phase.report)
    finally:
        executor.close()
        store.close()


@pytest.mark.usefixtures("no_leftovers")
def test_a_server_whose_data_the_next_run_uses_stops_with_its_checkpoint(
    lab: Lab, tmp_path: Path
) -> None:
    """With reset = "point" the server is kept between its point's runs and stopped cleanly
    (fast, with its shutdown checkpoint) when another point's comes."""
    doc = CAMPAIGN.format(name="stops-log-point", reset="point") + "[matrix]\nclients = [1, 2]\n"
    plan = make_plan(campaign.parse(tomllib.loads(doc.replace("clients = 1\n", "")), "c"))
    binaries = resolve(plan.runs[0].server, lab)
    store = open_store(str(tmp_path / "r.sqlite"))
    executor = Executor(lab, store)
    try:
        first = executor.run_one(plan.runs[0], binaries, upcoming=Upcoming(plan.runs[1], binaries))
        assert first.status == "ok", first.error
        cluster = executor.cluster
        assert cluster is not None and cluster.running  # its data is the point's next run's
        other = next(r for r in plan.runs if r.point_key != plan.runs[0].point_key)
        assert executor.run_one(other, binaries).status == "ok"
        log = cluster.log_path.read_text()
        assert "received fast shutdown request" in log, log[-2000:]
        assert "checkpoint starting: shutdown" in log, log[-2000:]
        assert "received immediate shutdown request" not in log
    finally:
        executor.close()
        store.close()
