"""A kind's dataset is its workload's (``Workload.dataset``: a ``postgres.dataset.DatasetKind``):
the servers' package makes templates and pglab's database on an existing server and asks the
kind, found through the registry, to load its rows; the loaders' shared loop
(``workloads.loading``) stops at the first unit that fails."""

from __future__ import annotations

import threading

import pytest

from pglab.campaign.spec import DatasetSpec
from pglab.postgres import dataset as datasets
from pglab.workloads import dataset_kind, dataset_kinds, described, estimated_size
from pglab.workloads.loading import Progress, on_connections


@pytest.mark.parametrize("kit", ["tpcc", "ycsb", "tpce", "tpch", "sysbench", "replay"])
def test_a_kit_s_dataset_is_found_through_the_registry(kit: str) -> None:
    spec = DatasetSpec(kit=kit, scale=1 if kit != "tpch" else 0.01)  # type: ignore[arg-type]
    kind = dataset_kind(spec)
    assert kind is not None and kind.name == kit
    assert described(spec) == kind.described(spec) == datasets.described(spec, kind)
    assert estimated_size(spec) == kind.estimated_size(spec)


def test_pgbench_s_tables_are_the_servers_package_s_own() -> None:
    spec = DatasetSpec(scale=10)
    assert dataset_kind(spec) is None
    assert described(spec) == "scale 10"
    assert estimated_size(spec) == datasets.estimated_size(spec)
    assert sorted(k.name for k in dataset_kinds()) == sorted(
        ["tpcc", "ycsb", "tpce", "sysbench", "replay", "tpch"]
    )


def test_a_dataset_given_another_kind_s_loader_is_refused() -> None:
    """``dataset.ensure`` and ``bench_db.ensure`` check the kind they are given: a kit's
    dataset without its kind would otherwise be made by ``pgbench -i``."""
    tpcc = dataset_kind(DatasetSpec(kit="tpcc", scale=1))
    with pytest.raises(ValueError, match="kit 'ycsb'"):
        datasets.described(DatasetSpec(kit="ycsb", scale=1), tpcc)
    with pytest.raises(ValueError, match="kit 'tpcc'.*'pgbench'"):
        datasets.estimated_size(DatasetSpec(kit="tpcc", scale=1))
    with pytest.raises(ValueError, match="kit None"):
        datasets.described(DatasetSpec(scale=1), tpcc)


def test_the_units_stop_at_the_first_that_fails() -> None:
    loaded: list[int] = []
    said: list[str] = []
    progress = Progress(lambda done, seconds: f"{done:g} of 10", said.append)

    def one(n: int) -> None:
        if n == 3:
            raise RuntimeError("unit 3 failed")
        loaded.append(n)

    with pytest.raises(RuntimeError, match="unit 3"):
        on_connections(range(1, 11), 1, one, lambda n: progress.add(1), "test")
    assert loaded == [1, 2] and said == ["1 of 10", "2 of 10"]  # none after the failure


def test_the_units_run_on_as_many_connections_as_asked() -> None:
    names: set[str] = set()
    barrier = threading.Barrier(2, timeout=10)

    def one(n: int) -> None:
        names.add(threading.current_thread().name)
        barrier.wait()  # both units at once, or a BrokenBarrierError

    on_connections([1, 2], 2, one, lambda n: None, "pglab-test")
    assert len(names) == 2 and all(n.startswith("pglab-test") for n in names)


@pytest.mark.parametrize(
    ("spec", "seconds"),
    [
        (DatasetSpec(scale=100), 25.0),  # pgbench -i: 0.25 s per unit of scale
        (DatasetSpec(kit="tpcc", scale=4), 48.0),
        (DatasetSpec(kit="ycsb", scale=1_000_000), 20.0),
        (DatasetSpec(kit="ycsb", scale=1_000_000, fields=3, field_length=50), 20.0 * 343 / 1200),
        (DatasetSpec(kit="tpch", scale=0.5), 60.0),  # type: ignore[arg-type]
        (DatasetSpec(kit="tpce", scale=5000), 150.0),
    ],
)
def test_the_plan_s_eta_of_a_dataset_is_its_kind_s(spec: DatasetSpec, seconds: float) -> None:
    assert datasets.init_seconds(spec, dataset_kind(spec)) == pytest.approx(seconds)
