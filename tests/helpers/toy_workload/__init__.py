"""A toy kind of workload, kept with the tests: what adding a kind takes (issue 51). One
folder (this one: its runner and its metrics) and one line in the registry
(``register``): the executor, the store and the views do not change.

Its phase counts ``pgbench_accounts`` over and over on pglab's own session for the phase's
duration; its figure is counts per second (the run's ``tps``), its table ``toy.counts`` (the
counts made and the rows each saw), its run metric ``toy_counts``.
"""

from __future__ import annotations

import pytest

from helpers.toy_workload.metrics import toy_metrics
from helpers.toy_workload.runner import ToyCount
from pglab.workloads import REGISTRY
from pglab.workloads.interface import Figure, Workload

KIND = "toy"
TOY = Workload(
    KIND,
    ToyCount,
    (toy_metrics,),
    None,
    (Figure("counts/s", "tps", "counts/s", items=("toy_counts",), held_when="toy_counts"),),
)


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry's one line for the toy kind, for one test."""
    monkeypatch.setitem(REGISTRY, KIND, TOY)
