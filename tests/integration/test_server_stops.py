"""How pglab stops the servers it started between runs: at once ("immediate": no shutdown
checkpoint) when the run's data directory is thrown away after it (``reset = "run"``, a fresh
copy for every run), cleanly ("fast") when the next run of its point starts from what it leaves
(``reset = "point"``). The stops are those of the real servers; the test only records them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.cli import main
from pglab.lab import Lab
from pglab.postgres.server import Cluster
from pglab.store import open_store

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
