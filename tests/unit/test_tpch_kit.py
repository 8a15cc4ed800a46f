"""The TPC-H-like kit's pure parts: the seeded queries, the scale factor's range, the parts
each table is loaded in, the progress as told."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.workloads.tpch import load as tpch_load
from pglab.workloads.tpch import plans, power
from pglab.workloads.tpch.work import queries as q


def test_a_seed_gives_the_same_statements_and_another_seed_others() -> None:
    one = [q.query(n, 1, 1.0) for n in q.QUERIES]
    assert one == [q.query(n, 1, 1.0) for n in q.QUERIES]
    assert one != [q.query(n, 2, 1.0) for n in q.QUERIES]
    assert len(set(one)) == 22


def test_q11_fraction_follows_the_scale_factor() -> None:
    assert "0.0100000000" in q.query(11, 1, 0.01)
    assert "0.0001000000" in q.query(11, 1, 1)


@pytest.mark.parametrize("bad", [0, 23, -1, True, "1"])
def test_unknown_query_numbers_are_named(bad) -> None:
    assert q.unknown([1, bad, 22]) == [bad]
    with pytest.raises(ValueError, match="queries are 1 to 22"):
        q.query(bad, 1, 1.0)


@pytest.mark.parametrize("scale", [0.001, 0, 1001, True, "1"])
def test_scale_factor_out_of_range(scale) -> None:
    said = tpch_load.scale_problem(scale)
    assert said is not None and "from 0.01 to 1000" in said


def test_scale_factors_taken() -> None:
    assert tpch_load.scale_problem(0.01) is None and tpch_load.scale_problem(100) is None


def test_large_tables_are_cut_one_part_per_connection() -> None:
    parts = tpch_load.parts_of(1.0, 4)
    split = [p for p in parts if isinstance(p, tpch_load.Part)]
    assert [p.part for p in split if p.table == "lineitem"] == [1, 2, 3, 4]
    assert split[0].table == "lineitem" and parts[0] == split[0]
    assert sum(p.rows for p in parts) == pytest.approx(8_661_245)
    assert split[0].argv("tpchgen-cli", 1.0)[-4:] == ["--parts", "4", "--part", "1"]
    # the small tables (up to 100,000 rows) in one call: each call costs a second to start
    (batch,) = [p for p in parts if isinstance(p, tpch_load.Batch)]
    assert batch.tables == ("region", "nation", "supplier") and batch.rows == 10_030
    argv = batch.argv("tpchgen-cli", 1.0, Path("/tmp/x"))
    assert argv[argv.index("-T") + 1] == "region,nation,supplier"


def test_a_small_scale_factor_is_generated_in_one_call() -> None:
    (batch,) = tpch_load.parts_of(0.01, 2)
    assert isinstance(batch, tpch_load.Batch) and batch.tables == tuple(tpch_load.ROWS_PER_SF)
    assert batch.rows == pytest.approx(86_642.15)


def test_progress_as_told() -> None:
    assert tpch_load.said_progress(0, 8.66e6, 0) == "loading tpch: 0% of 8.7 M rows"
    assert tpch_load.said_progress(4.33e6, 8.66e6, 30) == (
        "loading tpch: 50% of 8.7 M rows, ETA 0:30"
    )


def test_geomean_and_power_figure() -> None:
    times = [power.QueryTime(1, 1.0, 4), power.QueryTime(2, 4.0, 1)]
    assert power.geomean(times) == pytest.approx(2.0)
    figs = power.figures(times, 1.0)
    assert figs["geomean_s"] == pytest.approx(2.0) and figs["power"] == pytest.approx(1800)
    assert figs["q01_s"] == 1.0 and figs["timeouts"] == 0


def _plan(*types: str) -> dict:
    node: dict = {"Node Type": types[-1]}
    for t in reversed(types[:-1]):
        node = {"Node Type": t, "Plans": [node]}
    return {"Plan": node}


def test_plan_shape_changes_are_named() -> None:
    hashed = _plan("Aggregate", "Hash Join", "Seq Scan")
    merged = _plan("Aggregate", "Merge Join", "Seq Scan")
    hashed_plan, merged_plan = plans.parse(hashed), plans.parse(merged)
    assert plans.shape(merged_plan) == ("Aggregate", "Merge Join", "Seq Scan")
    assert plans.shape_change(hashed_plan, hashed_plan) is None
    assert plans.shape_change(hashed_plan, merged_plan) == "hash join → merge join"


def test_work_mem_spills_are_named_with_or_without_a_shape_change() -> None:
    # EXPLAIN (ANALYZE, FORMAT JSON) node keys as PostgreSQL 18 wrote them for Q6 and Q9 at SF 1
    lossy = {"Plan": {"Node Type": "Aggregate", "Plans": [
        {"Node Type": "Bitmap Heap Scan", "Exact Heap Blocks": 40981, "Lossy Heap Blocks": 66153,
         "Plans": [{"Node Type": "Bitmap Index Scan"}]}]}}  # fmt: skip
    exact = {"Plan": {"Node Type": "Aggregate", "Plans": [
        {"Node Type": "Bitmap Heap Scan", "Exact Heap Blocks": 107134, "Lossy Heap Blocks": 0,
         "Plans": [{"Node Type": "Bitmap Index Scan"}]}]}}  # fmt: skip
    assert plans.spills(plans.parse(exact)) == {}
    assert plans.spills(plans.parse(lossy)) == {"bitmap": 66153}
    assert plans.change(lossy, exact) == "same nodes; bitmap lossy on 66,153 blocks → in memory"
    assert plans.change(exact, exact) is None
    batched = {"Node Type": "Hash", "Hash Batches": 8}
    hashed = {"Node Type": "Hash Join", "Plans": [{"Node Type": "Seq Scan"}, batched]}
    sorted_on_disk = {"Plan": {"Node Type": "Sort", "Sort Space Type": "Disk",
                               "Sort Space Used": 21504, "Plans": [hashed]}}  # fmt: skip
    in_memory = {"Plan": {"Node Type": "Sort", "Sort Space Type": "Memory", "Plans": [
        {"Node Type": "Merge Join", "Plans": [{"Node Type": "Seq Scan"}]}]}}  # fmt: skip
    assert plans.change(sorted_on_disk, in_memory) == (
        "hash, hash join → merge join; sort on disk (21.0 MB), hash in 8 batches → in memory"
    )
    aggregated = {"Plan": {"Node Type": "Aggregate", "Disk Usage": 2048, "HashAgg Batches": 5}}
    assert (
        plans.spill_text(plans.spills(plans.parse(aggregated))) == "hash aggregate on disk (2.0 MB)"
    )
