"""What ``campaign/`` and the core modules say of a kind comes from the kinds' declarations
(issue 51): a dataset kind's own fields in its points, whether a kit writes, which kits take a
fractional scale, a kind that runs on this machine only, the namespace of a kind's metrics.
These tests hold the declarations to what those modules said by themselves before (points
keep their keys, messages their words, stored metric keys their parts)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers.campaign_text import refused

from pglab import metric_units
from pglab.campaign.spec import DatasetSpec
from pglab.metric_units import MetricKey
from pglab.workloads.kits.work.kits import FRACTIONAL_KITS, KITS, TPCH

PLAIN = {
    "scale": 10,
    "init_steps": None,
    "partitions": 0,
    "partition_method": None,
    "fillfactor": 100,
    "unlogged_tables": False,
    "reset": "run",
}


@pytest.mark.parametrize(
    ("dataset", "own"),
    [
        (DatasetSpec(), {}),
        (DatasetSpec(kit="tpcc"), {"kit": "tpcc"}),
        (DatasetSpec(kit="sysbench"), {"kit": "sysbench", "tables": 1, "table_size": 10000}),
        (
            DatasetSpec(kit="sysbench", tables=4, table_size=500),
            {"kit": "sysbench", "tables": 4, "table_size": 500},
        ),
        (
            DatasetSpec(kit="replay", dump="/d", roles=("app",), databases=("db", "x")),
            {"kit": "replay", "dump": "/d", "roles": ["app"], "databases": ["db", "x"]},
        ),
        # YCSB's record shape only when not YCSB's default: its points stored before keep keys
        (DatasetSpec(kit="ycsb"), {"kit": "ycsb"}),
        (DatasetSpec(kit="ycsb", fields=3), {"kit": "ycsb", "fields": 3}),
        (DatasetSpec(kit="ycsb", field_length=50), {"kit": "ycsb", "field_length": 50}),
        (DatasetSpec(kit="tpcc", fields=3, tables=4), {"kit": "tpcc"}),  # not its fields
    ],
)
def test_a_dataset_kind_s_own_fields_are_in_its_points(
    dataset: DatasetSpec, own: dict[str, object]
) -> None:
    found = dataset.point_identity()
    assert found == {**PLAIN, **own}
    assert list(found) == [*PLAIN, *own]  # in the order they were written before


def test_the_kits_table_says_whether_a_kit_writes() -> None:
    assert KITS["tpcc"].writes_in("procedures") and KITS["tpce"].writes_in("client")
    assert KITS["ycsb"].writes_in("a") and not KITS["ycsb"].writes_in("c")
    assert not KITS["tpch"].writes_in("power") and not KITS["tpch"].writes_in(None)


def test_the_fractional_scale_is_the_kits_that_declare_one() -> None:
    assert FRACTIONAL_KITS == (TPCH,)
    said = refused("[dataset]\nscale = 0.5\n[workload]\nscript = 'tpcb-like'\n")
    assert 'scale = 0.5: a fraction is a scale factor of kit = "tpch"; pgbench' in said


def test_a_kind_run_on_this_machine_only_is_refused_generator_hosts() -> None:
    said = refused(
        '[hosts.gen1]\nssh = "root@10.0.0.1"\n'
        '[workload]\ngenerator = "sysbench"\ngenerators = ["gen1"]\n'
    )
    assert (
        'phase "main": generator = "sysbench" runs on this machine; generator hosts '
        "(generators = [...]) run pgbench only"
    ) in said


# the modules that cut stored metric keys apart, each imported alone in a fresh process
# (planning/hints cannot be imported first: campaign/phase_work and the registry import each
# other, which the commands' imports never meet)
PARSERS = (
    "pglab.analysis.compare",
    "pglab.analysis.executions",
    "pglab.analysis.points",
    "pglab.analysis.run_warnings",
)


@pytest.mark.parametrize("module", PARSERS)
def test_a_kind_s_metric_namespace_is_declared_wherever_keys_are_cut_apart(module: str) -> None:
    """``metric_units`` names no kind: the replay kind declares its namespace, ``replay.``,
    when its declarations are imported, which every module cutting keys apart does."""
    code = (
        "from pglab import metric_units as m\nbefore = list(m.NAMESPACES)\n"
        f"import {module}\n"
        "print(before, m.NAMESPACES, m.MetricKey.parse('phase.a.b.replay.lag_s'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ("[] ['replay.'] MetricKey(name='replay.lag_s', phase='a.b')"), (
        out.stdout
    )


def test_a_namespace_declared_cuts_its_keys_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metric_units, "NAMESPACES", list(metric_units.NAMESPACES))
    monkeypatch.setattr(metric_units, "METRIC_UNITS", dict(metric_units.METRIC_UNITS))
    assert MetricKey.parse("phase.a.b.toy.rows_s") == MetricKey("rows_s", "a.b.toy")
    assert metric_units.declare_namespace("toy", {"rows_s": "rows/s"}) == "toy."
    assert MetricKey.parse("phase.a.b.toy.rows_s") == MetricKey("toy.rows_s", "a.b")
    assert MetricKey("toy.rows_s", "a.b").text == "phase.a.b.toy.rows_s"
    assert metric_units.metric_unit("phase.a.b.toy.rows_s") == "rows/s"
    assert metric_units.metric_unit("phase.r.replay.lag_s") == "s"  # the replay's, still
