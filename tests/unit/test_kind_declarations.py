"""What the plan, the analysis, the views and tune ask of a kind is declared on its ``Workload``
(issue 51): the modules that ask name no kind (``test_architecture``'s count); these tests hold
the declarations to what those modules said by themselves before, and show that a kind added
through the registry is rendered by its own declarations."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pglab import workloads
from pglab.analysis import noise, tidy
from pglab.campaign import schema
from pglab.campaign.spec import PhaseSpec
from pglab.cli import fmt
from pglab.workloads import REGISTRY, columns
from pglab.workloads.tpch.work import TpchWork
from pglab.workloads.work import TUNE_OBJECTIVES

BASE = PhaseSpec(name="main", duration=60)


@pytest.mark.parametrize(
    ("phase", "kind", "figure"),
    [
        ({"operation": "vacuum"}, "vacuum", "MB/s"),
        ({"generator": "sysbench", "test": "oltp_read_only"}, "sysbench oltp_read_only", "tps"),
        ({"kit": "tpch"}, "tpch power", "QphH"),
        ({"kit": "tpch", "mode": "throughput"}, "tpch throughput", "QthH"),
        ({"kit": "tpcc", "mode": "standard"}, "tpcc kit", "tps"),
        ({"generator": "pgbench"}, "pgbench", "tps"),
    ],
)
def test_each_kind_says_what_makes_stored_points_alike(
    phase: dict[str, str], kind: str, figure: str
) -> None:
    point = {"phases": [{**phase, "duration": 30}], "server": {}}
    assert noise.likeness(point) == noise.Likeness(kind, figure, 30.0, "embedded")


def test_the_load_generators_are_declared_with_their_threads_option() -> None:
    assert workloads.threads_options() == {"sysbench": "--threads", "pgbench": "-j"}
    assert workloads.generator_said({"sysbench_version": "1.0.20"}) == "sysbench 1.0.20"
    assert workloads.generator_said({"pgbench_version": "18.1"}) is None


def test_the_tune_objectives_of_the_kinds() -> None:
    found = workloads.objectives()
    assert sorted(found) == ["geomean", "nopm", "tpse"]
    assert found["geomean"].kinds == ("tpch",)
    assert set(found["nopm"].kinds) == {"tpcc", "ycsb", "tpce", "tpch"}  # any kit
    # [tune]'s objective key (campaign/schema/tune) takes them from the kinds' declarations
    assert {o.name for o in TUNE_OBJECTIVES} == set(found)
    assert schema.OBJECTIVES == ("tps", "p99", "nopm", "geomean", "tpse")
    assert schema.key(schema.TUNE, "objective").doc == (
        'what is optimised: tps (higher), p99 (latency, lower), nopm (kit = "tpcc"\'s '
        "New-Orders per minute, higher), geomean (kit = \"tpch\"'s queries' geometric mean, "
        'lower) or tpse (kit = "tpce"\'s Trade-Results per second, higher)'
    )


def test_the_figures_not_a_tps_are_the_declared_ones() -> None:
    """The ``tps`` column's meaning names every figure held in a metric of its own."""
    declared = {metric for metric, _ in workloads.figures_not_tps()}
    assert set(columns.NOT_TPS) == declared
    assert declared <= {c.name for c in tidy.KIT_COLUMNS}
    tps = next(c for c in tidy.COLUMNS if c.name == "tps")
    assert tps.doc.endswith("(mb_s, power, throughput, replay.statements_active_s)")


def test_a_kind_is_listed_and_judged_by_its_own_declarations(monkeypatch) -> None:
    """A toy kind's plan line and likeness, declared on its ``Workload``, are what the plan's
    outline and the noise say of its phases; without them, what pgbench's phases get."""
    from helpers import toy_workload
    from helpers.toy_workload.work import ToyWork

    toy = replace(BASE, work=ToyWork(), clients=3)
    toy_workload.register(monkeypatch)
    # a kind that declares no plan line: pgbench's, with its work's label
    assert fmt.phase(toy) == "main: toy count c=3 60s"
    monkeypatch.setitem(
        REGISTRY,
        toy_workload.KIND,
        replace(
            toy_workload.TOY,
            said=lambda ph: f"toy count on {ph.clients} sessions",
            likeness=lambda ph: ("toy", "counts/s") if ph.get("generator") == "toy" else None,
        ),
    )
    assert fmt.phase(toy) == "main: toy count on 3 sessions"
    assert fmt.phase(replace(toy, measured=False)) == "main: toy count on 3 sessions (unmeasured)"
    point = {"phases": [{"generator": "toy", "duration": 60}], "server": {}}
    assert noise.likeness(point).text() == "toy counts/s, 60 s, embedded"


def test_a_tpch_phase_is_listed_by_its_kind() -> None:
    tpch = replace(BASE, work=TpchWork(mode="power", queries=(1, 6), query_timeout=30.0))
    assert fmt.phase(tpch) == "main: tpch power run of Q1,Q6, at most 30s each"
    streams = replace(BASE, work=TpchWork(mode="throughput"), clients=2, times=2)
    assert fmt.phase(streams) == "main: tpch throughput run of 22 queries, 2 streams ×2"
