"""ETA honesty, as a mechanism test: a VACUUM (after 10% updates) and a CREATE INDEX on scale 50
(~650 MB of accounts, bigger than shared_buffers), run twice; at 25%, 50% and 75% of each one's
main progress phase (scanning heap; building index: scanning table) the ETA shown is compared
with the time that phase really had left, |ETA - left| / left (``workloads.maintenance.eta``), and
the first run must have told it by its rate, the second from the first ("history").

The issue's target, a median error of at most 20%, is for operations long enough to matter:
``bench/maintenance_eta.py`` measures it (a VACUUM throttled by vacuum_cost_delay, 20+ s of
heap scan; a CREATE INDEX with an external sort at scale 200) and docs/guides/maintenance.md
records its figures. Here the phases last 2-3 s, on a shared 2-core machine (other sessions'
PostgreSQL tests beside it, load average 4-7), where the end of a phase and short-term changes of
rate dominate: over five runs of this test the median per operation and estimator ranged 0.05-0.51
(VACUUM at its rate so far, whose scan speeds up as it reaches the pages the dirtying left in
shared_buffers, 0.06-0.34; CREATE INDEX told from the earlier run 0.08-0.51 when the load
changed between the two runs). So this test holds what it can hold without flaking: the median
of the six errors per operation (both runs, both estimators) at most 60% (observed 0.10-0.38),
which still catches an ETA off by a factor; it prints every error.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from pglab.campaign import parse as campaign
from pglab.lab import Lab
from pglab.run import campaign_run
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store
from pglab.workloads.maintenance import operations
from pglab.workloads.maintenance.eta import eta_errors

pytestmark = pytest.mark.integration

MAIN_PHASE = {"vacuum": "scanning heap", "index": "building index: scanning table"}
CAMPAIGN = """
name = "eta"
repeats = 2
order = "sequential"
[dataset]
scale = 50
[[phases]]
name = "vacuum"
operation = "vacuum"
dirty = 0.1
[[phases]]
name = "index"
operation = "create_index"
"""


def test_the_eta_error_at_a_quarter_half_and_three_quarters_is_measured(
    tmp_path: Path, lab: Lab, monkeypatch
) -> None:
    # a progress row every 0.1 s instead of 1 s: the ETA is told the same way, but the end of
    # a phase of a few seconds is then known to ±0.05 s (at 1 s it would swamp the error)
    monkeypatch.setattr(operations, "PROGRESS_S", 0.1)
    path = tmp_path / "eta.toml"
    path.write_text(CAMPAIGN)
    # once in CI a phase gave no row to judge at all (too few rows with an ETA: a phase of a
    # fraction of a second on a busy machine); that is no measure of the ETA, so the campaign
    # is measured again, once, saying why
    for attempt in range(2):
        said = _measured(lab, tmp_path / f"r{attempt}.sqlite", path)
        if all(len(errors) == 3 for errors in said.values()):
            break
        print(f"attempt {attempt + 1}: a phase had too few rows to judge: {said}")
    for (name, how), errors in said.items():
        assert len(errors) == 3 and {by for _, by in errors} == {how}, (name, errors)
    said = {k: [round(e, 3) for e, _ in v] for k, v in said.items()}
    print("ETA errors at 25/50/75%:", said)
    for name in MAIN_PHASE:  # 0.60, not the 0.20: see the module's docstring
        assert statistics.median(said[(name, "rate")] + said[(name, "history")]) <= 0.60, said


def _measured(lab: Lab, store_path: Path, path: Path) -> dict[tuple[str, str], list]:
    """Each operation's ETA errors in the first run (told by its rate) and the second (from
    the first: "history"), with how each was told."""
    with open_store(str(store_path)) as store:
        out = campaign_run.run_campaign(Executor(lab, store, QuietEvents()), campaign.load(path))
        assert out.ok == 2
        first, second = (store.get_run(r.id) for r in store.list_runs("eta"))
    said = {}
    for run, how in ((first, "rate"), (second, "history")):
        for ph in run.phases:
            tables = run.series[str(ph.idx)]
            rows = next(t for k, t in tables.items() if k.startswith("progress."))["rows"]
            said[(ph.name, how)] = eta_errors(
                rows, MAIN_PHASE[ph.name], ph.started_at + ph.elapsed_s
            )
    return said
