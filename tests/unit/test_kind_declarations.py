"""What the plan, the analysis, the views and tune ask of a kind is declared on its ``Workload``
(issue 51): the modules that ask name no kind (``test_architecture``'s count); these tests hold
the declarations to what those modules said by themselves before, and show that a kind added
through the registry is rendered by its own declarations."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

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


# In a process of its own: the toy kind's declarations added to the kinds' (workloads/work)
# before the campaign's modules are imported, as a kind's package adds them; nothing of
# campaign/ changed. What the JSON Schema, --help and the parser then say of its key.
TOY_KEYS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pglab.workloads import work
from helpers.toy_workload import work as toy

work.KIND_WORKLOAD_ROWS += toy.ROWS
work.REFUSED_ELSEWHERE += toy.REFUSED_ELSEWHERE
for name in [m for m in sys.modules if m.startswith("pglab.campaign.")]:
    if name not in ("pglab.campaign.spec", "pglab.campaign.identity", "pglab.campaign.dsn",
                    "pglab.campaign.os_spec", "pglab.campaign.target_spec"):
        del sys.modules[name]
from pglab.campaign import json_schema, parse, schema
from pglab.errors import CampaignError

def said(doc):
    try:
        parse.parse(doc, "t")
    except CampaignError as exc:
        return exc.message.split("\\n  ")[1:]
    return []

built = json_schema.build()["$defs"]["workload"]
refused = [
    rule["if"]["properties"]["generator"]["const"]
    for rule in built["allOf"]
    if "pause_ms" in rule.get("then", {}).get("properties", {})
]
print(json.dumps({
    "property": built["properties"].get("pause_ms"),
    "refused_beside": refused,
    "help": [line for line in schema.help_layout().splitlines() if "pause_ms" in line],
    "pgbench": said({"workload": {"pause_ms": 10}}),
    "sysbench": said({"workload": {"generator": "sysbench", "pause_ms": 10}}),
    "typed": said({"workload": {"pause_ms": "soon"}}),
}))
"""


def test_a_toy_kind_s_declared_key_reaches_the_parser_and_the_json_schema() -> None:
    """A kind's keys, declared in its package, are the campaign file's: its rows in the JSON
    Schema and ``pglab run --help``, its value checked by its declaration, its refusal beside
    a phase of another kind said by the parser and stated by the JSON Schema."""
    tests = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", TOY_KEYS, str(tests)], capture_output=True, text=True, check=True
    )
    found = json.loads(out.stdout)
    assert found["property"] == {
        "type": "integer",
        "minimum": 0,
        "description": "toy: milliseconds between two counts",
    }
    assert found["refused_beside"] == ["pgbench", "sysbench"]
    assert found["help"] == [
        "  # pause_ms = 10".ljust(30) + "# toy: milliseconds between two counts; default none"
    ]
    said = "[workload]: pause_ms: the toy kind's, but this phase counts nothing"
    assert found["pgbench"] == [said]
    assert found["sysbench"] == [said]
    assert any(
        s.startswith("[workload]: pause_ms = ") and ": expected " in s for s in found["typed"]
    )
