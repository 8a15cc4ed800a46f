"""A kind of workload added from a test-only folder (``tests/helpers/toy_workload``: its
runner and its metrics) through the registry's one line, run end to end on a real server
(issue 51: adding a kind is one folder and one registry line; nothing else changes)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from helpers import toy_workload
from helpers.toy_workload.runner import TABLE
from helpers.toy_workload.work import ToyWork

from pglab.campaign import parse as campaign
from pglab.campaign.parse import Campaign
from pglab.lab import Lab
from pglab.run import campaign_run
from pglab.run.executor import Executor
from pglab.store import open_store
from pglab.workloads import REGISTRY, figure_of, kind_of

pytestmark = pytest.mark.integration

DOC = """name = "toy"
[dataset]
scale = 1
[workload]
clients = 1
duration = 2
"""


def _toy(c: Campaign) -> Campaign:
    """The campaign with its phases of the toy kind, its work (``toy_workload/work.py``; the
    parser knows no such kind: a kind's campaign keys are a later step)."""
    return replace(c, variants=tuple(
        replace(v, phases=tuple(replace(p, work=ToyWork(p.pgbench)) for p in v.phases))
        for v in c.variants
    ))  # fmt: skip


def test_a_toy_kind_registered_from_a_test_folder_runs_end_to_end(
    tmp_path: Path, lab: Lab, no_leftovers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(DOC)
    toy = _toy(campaign.load(path))
    phase = toy.variants[0].phases[0]
    with pytest.raises(KeyError):  # not registered: no runner for it
        REGISTRY[kind_of(phase)]
    toy_workload.register(monkeypatch)
    assert REGISTRY[kind_of(phase)] is toy_workload.TOY
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), toy)
        (run_id,) = out.run_ids
        run = store.get_run(run_id)
    assert run is not None and run.status == "ok", run and run.error
    (ph,) = run.phases
    assert ph.argv == ["toy", "count"]  # the toy's runner ran it, not pgbench
    counts, rows = run.series[str(ph.idx)][TABLE]["rows"][0]
    assert rows == 100_000  # pgbench_accounts at scale 1: the dataset was made for it
    assert counts == ph.transactions and counts >= 2
    assert run.metrics["toy_counts"] == counts  # its metrics function, through the registry
    assert run.tps == pytest.approx(counts / ph.elapsed_s, rel=0.05)  # its figure, counts/s
    assert figure_of(run.metrics) == "counts/s"  # what the views call it: its declaration
