"""Maintenance operations' pure parts: the campaign keys and their checks, the statements, the
figures (MB/s), progress rows, VACUUM VERBOSE's workers, preflight's parallel limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pglab.campaign import parse as campaign
from pglab.campaign.spec import PhaseSpec, Script
from pglab.cli import fmt
from pglab.errors import CampaignError
from pglab.maintenance import figures
from pglab.postgres.settings import SettingDef
from pglab.run.plan import expand_points
from pglab.run.preflight import _parallel_problems

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def parse(doc: dict[str, Any]) -> campaign.Campaign:
    return campaign.parse(doc, default_name="t", base_dir=EXAMPLES)


def problems(doc: dict[str, Any]) -> str:
    with pytest.raises(CampaignError) as info:
        parse(doc)
    return info.value.message


def test_an_operation_phase_takes_its_options_and_a_matrix_axis_reaches_only_it() -> None:
    c = parse({
        "phases": [
            {"name": "warm", "script": "select-only", "measured": False},
            {"name": "vac", "operation": "vacuum", "dirty": 0.1, "freeze": True},
            {"name": "idx", "operation": "create_index", "columns": ["bid", "abalance"]},
        ],
        "matrix": {"parallel": [0, 2]},
    })  # fmt: skip
    warm, vac, idx = c.variants[0].phases
    assert warm.operation is None and vac.operation == "vacuum" and vac.dirty == 0.1
    assert vac.freeze and idx.columns == ("bid", "abalance")
    points = expand_points(c)
    assert [[ph.parallel for ph in pt.phases] for pt in points] == [[0, 0, 0], [0, 2, 2]]
    assert len({pt.point_key for pt in points}) == 2


def test_a_pgbench_phase_keeps_the_point_key_it_had_before_operations() -> None:
    # the operation fields are left out of a pgbench phase's identity
    (pt,) = expand_points(parse({"workload": {"script": "select-only"}}))
    assert "operation" not in pt.point_dict()["phases"][0]


@pytest.mark.parametrize(("doc", "said"), [
    ({"workload": {"operation": "vacum"}}, 'unknown operation \'vacum\' — did you mean "vacuum"'),
    ({"phases": [{"operation": "vacuum", "script": "tpcb-like"}]},
     "give script(s) or operation, not both"),
    ({"workload": {"parallel": 2}}, "parallel: an option of a maintenance operation"),
    ({"workload": {"operation": "analyze", "parallel": 2}},
     'parallel is not an option of operation = "analyze" (its options: none)'),
    ({"workload": {"operation": "create_index", "dirty": 0.5}},
     'dirty is not an option of operation = "create_index"'),
    ({"workload": {"operation": "vacuum", "dirty": 1.5}}, "dirty = 1.5: expected the fraction"),
    ({"workload": {"operation": "create_index", "columns": ["nope"]}},
     "expected distinct columns of pgbench_accounts"),
    ({"workload": {"operation": "create_index", "parallel": -1}}, "parallel = -1"),
    ({"matrix": {"parallel": [0, 1]}}, "parallel: no phase runs an operation that takes it"),
    ({"phases": [{"script": "select-only"}, {"operation": "analyze"}]},
     "measured phases are all pgbench scripts (TPS) or all operations (MB/s)"),
])  # fmt: skip
def test_bad_operation_input_is_said_before_anything_runs(doc: dict, said: str) -> None:
    assert said in problems(doc)


def test_a_script_after_an_operation_in_workload_makes_a_pgbench_phase() -> None:
    c = parse({
        "workload": {"operation": "vacuum", "dirty": 0.2},
        "phases": [{"name": "a", "script": "select-only", "measured": False}, {"name": "b"}],
    })  # fmt: skip
    a, b = c.variants[0].phases
    assert a.operation is None and a.dirty == 0.0
    assert b.operation == "vacuum" and b.dirty == 0.2


def test_mb_per_s_is_bytes_over_time() -> None:
    assert figures.mb_per_s(150_000_000, 1.5) == pytest.approx(100.0)
    assert figures.mb_per_s(10, 0.0) == 0.0
    ph = PhaseSpec("i", (), operation="create_index", parallel=1)
    figs = figures.figures(ph, 2.0, 300_000_000, None, 1, 65536)
    assert figs.mb_s == pytest.approx(150.0) and figs.workers_launched == 1
    assert figures.OperationFigures.from_table(figs.to_table()) == figs


def test_progress_rows_say_the_share_done_once_the_total_is_known() -> None:
    assert figures.progress_row(10.0, ("scanning heap", 410, 1000)) == [
        10.0, "scanning heap", 410, 1000, 41.0,
    ]  # fmt: skip
    assert figures.progress_row(11.0, ("initializing", None, 0)) == [
        11.0, "initializing", 0, 0, None,
    ]  # fmt: skip


def test_the_statements_of_each_operation() -> None:
    vac = PhaseSpec("v", (), operation="vacuum", parallel=2, freeze=True)
    assert figures.statement(vac) == "VACUUM (VERBOSE, PARALLEL 2, FREEZE) pgbench_accounts"
    assert figures.statement(PhaseSpec("a", (), operation="analyze")) == "ANALYZE pgbench_accounts"
    idx = PhaseSpec("i", (), operation="create_index", columns=("bid", "abalance"))
    assert figures.statement(idx) == (
        "CREATE INDEX pglab_operation_idx ON pgbench_accounts USING btree (bid, abalance)"
    )
    with pytest.raises(ValueError):
        figures.statement(PhaseSpec("p", (Script(builtin="tpcb-like"),)))
    dirty = figures.dirty_statement(0.1)
    assert dirty.startswith("UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE")
    assert f"< {round(0.1 * figures.DIRTY_BUCKETS)}" in dirty


def test_a_parallel_index_build_gets_the_memory_its_participants_need() -> None:
    idx = PhaseSpec("i", (), operation="create_index", parallel=3)
    assert figures.session_settings(idx, 65536) == {
        "max_parallel_maintenance_workers": "3",
        "maintenance_work_mem": f"{4 * 32 * 1024}kB",
    }
    # never lowered, and none for a serial build
    assert figures.session_settings(idx, 10**6) == {"max_parallel_maintenance_workers": "3"}
    serial = PhaseSpec("i", (), operation="create_index")
    assert figures.session_settings(serial, 1024) == {"max_parallel_maintenance_workers": "0"}
    assert figures.session_settings(PhaseSpec("a", (), operation="analyze"), 1024) == {}


def test_vacuum_verbose_says_the_workers_it_launched() -> None:
    said = ["vacuuming \"postgres.public.pgbench_accounts\"",
            "launched 1 parallel vacuum worker for index vacuuming (planned: 2)"]  # fmt: skip
    assert figures.vacuum_workers(said) == (2, 1)
    assert figures.vacuum_workers(["finished vacuuming"]) == (0, 0)


def test_preflight_refuses_more_workers_than_the_settings_allow() -> None:
    (pt,) = expand_points(parse({
        "server": {"settings": {"max_parallel_workers": 2}},
        "workload": {"operation": "create_index", "parallel": 4},
    }))  # fmt: skip
    catalog = {"max_worker_processes": SettingDef("max_worker_processes", "integer",
                                                  boot_val="8")}  # fmt: skip
    said = _parallel_problems(pt, catalog, "p: ")
    assert said == [
        "p: parallel = 4 is more than max_parallel_workers = 2 allows: raise "
        "max_parallel_workers in [server.settings] (or ask for fewer workers)"
    ]
    assert _parallel_problems(pt, {}, "p: ") == said  # no boot value known: only what is set


def test_the_plan_shows_an_operation_by_its_options() -> None:
    ph = PhaseSpec("vac", (), operation="vacuum", dirty=0.1, parallel=1)
    assert fmt.phase(ph) == "vac: vacuum dirty=0.1 parallel=1"
    ph = PhaseSpec("a", (), operation="analyze", measured=False, times=2)
    assert fmt.phase(ph) == "a: analyze ×2 (unmeasured)"


def test_a_progress_row_in_words_for_the_progress_line() -> None:
    assert figures.progress_text("vacuum", [1.0, "scanning heap", 410, 1000, 41.0]) == (
        "vacuum: scanning heap 41%"
    )
    row = [1.0, "building index: loading tuples in tree", 5000, 0, None]
    assert figures.progress_text("create_index", row) == (
        "create_index: building index: loading tuples in tree 5,000"
    )
    assert figures.progress_text("analyze", [1.0, "initializing", 0, 0, None]) == (
        "analyze: initializing"
    )


def test_a_variants_workload_option_reaches_only_the_phases_that_take_it() -> None:
    c = parse({
        "phases": [
            {"name": "warm", "script": "select-only", "measured": False},
            {"name": "idx", "operation": "create_index"},
        ],
        "variants": {"serial": {}, "two": {"workload": {"parallel": 2}}},
    })  # fmt: skip
    serial, two = c.variants
    assert [ph.parallel for ph in serial.phases] == [0, 0]
    assert [ph.parallel for ph in two.phases] == [0, 2]
    said = problems({
        "workload": {"script": "select-only"},
        "variants": {"a": {"workload": {"dirty": 0.1}}},
    })  # fmt: skip
    assert "[variants.a] workload: dirty: no phase runs an operation that takes it" in said
