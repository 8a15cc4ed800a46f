"""The evidence's figures from CPU profiles, TPC-H-like plans, temporary files and the server's
CPU per transaction (analysis/evidence_measures.py), ranked by the one table of rules
(analysis/evidence_rules.py), on stored runs with known answers."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from pglab.analysis import evidence, evidence_measures, evidence_rules, profiles
from pglab.analysis.evidence_measures import run_measures
from pglab.profile import folded
from pglab.records import PgbenchReport
from pglab.rows import PhaseRow, StoredRun
from pglab.telemetry import waits
from pglab.workloads.tpch import plans as tpch_plans


def _run(run_id: int, tables: dict[str, Any], transactions: int = 100) -> StoredRun:
    phase = PhaseRow(0, "main", 1, True, 0.0, 1.0, ["pgbench"], None, transactions, None, None,
                     None, None, PgbenchReport(tps=0.0, transactions=transactions), "")  # fmt: skip
    return StoredRun(id=run_id, campaign="c", run_key=f"k/{run_id}", point_key="k",
                     repeat=run_id, variant="v", label="v", status="ok", started_at=0.0,
                     finished_at=1.0, tps=1.0, error=None, phases=(phase,),
                     series={"0": tables})  # fmt: skip


def _profiled(run_id: int, stacks: dict[str, Counter[str]]) -> StoredRun:
    return _run(run_id, {folded.TABLE: folded.table(folded.Folded(stacks=stacks))})


def _sides(a: list[StoredRun], b: list[StoredRun]):
    return ({r.id: run_measures(r) for r in a}, {r.id: run_measures(r) for r in b})


def test_a_planner_that_vanishes_from_the_backend_ranks_first_in_words() -> None:
    # custom plans: the planner takes a third of the backend's samples; generic: none
    def custom(i: int) -> dict[str, Counter[str]]:
        return {"backend": Counter({"main;exec;ExecScan": 600 + i, "main;bind;planner": 300 - i,
                                    "main;bind;GetCachedPlan": 10}),
                "checkpointer": Counter({"main;CheckpointWriteDelay": 5 + i})}  # fmt: skip

    def generic(i: int) -> dict[str, Counter[str]]:
        return {"backend": Counter({"main;exec;ExecScan": 900 + i, "main;bind;GetCachedPlan": 20}),
                "checkpointer": Counter({"main;pg_usleep": 5 + i})}  # fmt: skip

    a, b = _sides([_profiled(i, custom(i)) for i in (1, 2, 3)],
                  [_profiled(i, generic(i)) for i in (4, 5, 6)])  # fmt: skip
    assert a[1]["cpu_samples:backend"] == 910.0
    found = evidence.items(a, b, paired=False)
    first = found[0]
    assert first.key == "cpu:backend:planner", [i.key for i in found]
    assert first.b == 0.0 and first.delta == pytest.approx(-300 / 9.1, abs=0.5)
    assert first.text.startswith("CPU in planner (backend) −32.")
    assert first.text.endswith("the planner runs less: plans reused (a generic plan?)")
    keys = {i.key for i in found}
    assert "cpu:backend:ExecScan" in keys  # what follows, by its own Δ: 66% → 98% of samples
    # the checkpointer's 5-8 samples a run are under the kind's floor: nothing of it compared
    assert not any(k.startswith("cpu:checkpointer:") for k in keys)
    assert not any(k.startswith("cpu_samples:") for k in keys)  # a count, never an item


def test_a_function_with_few_samples_is_not_compared_however_its_share_moved() -> None:
    # 3 samples of 200 (1.5%, beyond the 1-point floor) a run on one side, none on the other:
    # 9 samples in all, under MIN_FUNCTION_SAMPLES
    a = [_profiled(i, {"backend": Counter({"m;x": 197 + i, "m;rare": 3})}) for i in (1, 2, 3)]
    b = [_profiled(i, {"backend": Counter({"m;x": 200 + i})}) for i in (4, 5, 6)]
    assert profiles.MIN_FUNCTION_SAMPLES > 9
    ten = [_profiled(4, {"backend": Counter({"m;x": 196, "m;rare": 4})})]  # 10 on that side
    assert "cpu:backend:rare" in {i.key for i in evidence.items(*_sides(a[:2] + ten, b), False)}
    found = evidence.items(*_sides(a, b), paired=False)
    assert "cpu:backend:rare" not in {i.key for i in found}


def _plan(sort_disk_kb: int | None, join: str = "Hash Join") -> dict[str, Any]:
    sort: dict[str, Any] = {"Node Type": "Sort", "Plans": [{"Node Type": "Seq Scan"}]}
    if sort_disk_kb is not None:
        sort |= {"Sort Space Type": "Disk", "Sort Space Used": sort_disk_kb}
    else:
        sort |= {"Sort Space Type": "Memory", "Sort Space Used": 900}
    return {"Plan": {"Node Type": join, "Plans": [sort, {"Node Type": "Seq Scan"}]}}


def _planned(run_id: int, plans: dict[int, dict[str, Any]]) -> StoredRun:
    return _run(run_id, {tpch_plans.TABLE: tpch_plans.as_table(plans)}, transactions=22)


def test_a_query_s_sort_that_no_longer_spills_and_a_plan_that_changed_shape() -> None:
    a = [_planned(i, {18: _plan(20480 + i), 3: _plan(None)}) for i in (1, 2, 3)]
    b = [_planned(i, {18: _plan(None), 3: _plan(None, "Merge Join")}) for i in (1, 2, 3)]
    ma, mb = _sides(a, b)
    assert ma[1]["plan:q18:sort"] == pytest.approx(20481 / 1024)
    assert ma[1]["plan:q03:node:Hash Join"] == 1.0 and "plan:q18:sort" not in mb[1]
    found = evidence.items(ma, mb, paired=True)
    by = {i.key: i for i in found}
    spill = by["plan:q18:sort"]
    assert spill.b == 0.0 and spill.delta == pytest.approx(-20482 / 1024)
    assert spill.text.startswith("q18: sort on disk −20.0 MB")
    assert spill.text.endswith("a sort fits in work_mem")
    # q03's plan nodes by type, merged as one item: what left the plan and what came
    shape = by["plan:q03:shape"]
    assert shape.text == "q03's plan changed shape: hash join → merge join", shape
    assert set(shape.alike) == {"plan:q03:node:Hash Join", "plan:q03:node:Merge Join"}
    assert len(found) == 2  # q18's shape did not change, nothing else moved
    assert evidence_rules.rule_of("plan:q03:node:Merge Join").name == (
        "q03: merge join nodes in its plan"
    )


def _snapshots(temp_bytes: float) -> dict[str, Any]:
    row = {"xact_commit": 0, "blks_read": 0, "blks_hit": 0, "temp_files": 0, "temp_bytes": 0}
    after = row | {"temp_bytes": temp_bytes}
    rows = [[0.0, "before", "pg.database", json.dumps([row])],
            [1.0, "after", "pg.database", json.dumps([after])]]  # fmt: skip
    return {"columns": ["t", "phase", "view", "rows"], "rows": rows}


def _procs(pct: float, seconds: int = 4) -> dict[str, Any]:
    return {"columns": ["t", "pgbench_cpu_pct", "postgres_cpu_pct", "others_cpu_pct"],
            "rows": [[100.0 + s, 10.0, pct, 0.0] for s in range(seconds)]}  # fmt: skip


def test_temporary_files_and_the_server_s_cpu_are_per_transaction() -> None:
    tables = {"pg.snapshots": _snapshots(1024 * 1000), "os.procs": _procs(50.0)}
    m = run_measures(_run(1, tables, transactions=200))
    assert m["temp_kb_xact"] == pytest.approx(5.0)  # 1,000 kB over 200 transactions
    assert m["postgres_cpu_us_xact"] == pytest.approx(0.5 * 4 * 1e6 / 200)  # 2 s of CPU


def test_spills_that_vanish_rank_first_among_what_work_mem_moved() -> None:
    tiny = [_run(i, {"pg.snapshots": _snapshots(4096 * (1000 + i)), "os.procs": _procs(90 + i)},
                 transactions=100) for i in (1, 2, 3)]  # fmt: skip
    large = [_run(i, {"pg.snapshots": _snapshots(0), "os.procs": _procs(80 + i)},
                  transactions=150) for i in (1, 2, 3)]  # fmt: skip
    found = evidence.items(*_sides(tiny, large), paired=True)
    assert found[0].key == "temp_kb_xact" and found[0].b == 0.0
    assert "fewer sorts or hashes spill to disk" in found[0].text


def test_every_family_has_a_rule_and_a_scope() -> None:
    for key in ("cpu:backend:pglz_compress", "plan:q01:hash", "plan:q01:node:Sort",
                "wait:IO:WALSync"):  # fmt: skip
        rule = evidence_rules.rule_of(key)
        assert rule.name and rule.floor > 0 and evidence_rules.scope_of(key)
    assert evidence_rules.scope_of("cpu:backend:f") == "cpu_samples:backend"
    assert evidence_rules.scope_of("temp_kb_xact") is None
    assert "pglz" in evidence_rules.rule_of("cpu:backend:pglz_compress").up
    assert set(evidence_rules.SPILL_RULES) == set(tpch_plans.SPILL_TEXT)


def test_a_chain_of_calls_with_the_same_samples_is_one_item() -> None:
    # XLogInsert calls pglz_compress through one caller: the three have the same shares
    a = [_profiled(i, {"backend": Counter({"m;exec": 300 + i})}) for i in (1, 2, 3)]
    compress = "m;XLogInsert;XLogCompress;pglz_compress"
    b = [_profiled(i, {"backend": Counter({"m;exec": 200 + i, compress: 100})}) for i in (4, 5, 6)]
    found = evidence.items(*_sides(a, b), paired=False)
    chain = [i for i in found if i.b > i.a]
    assert len(chain) == 1, found
    (item,) = chain
    assert item.name == "CPU in XLogCompress = XLogInsert = pglz_compress (backend)"
    assert set(item.alike) == {"cpu:backend:XLogInsert", "cpu:backend:pglz_compress"}
    assert item.key == "cpu:backend:XLogCompress"  # the first of them by key, as ranked
    assert item.says == "WAL records compressed (wal_compression = pglz)"  # pglz_compress's


def _waited(run_id: int, sync: int, statements: list[list[Any]], running: int = 10) -> StoredRun:
    rows = [[100.0 + s, 10, "IO", "WalSync", sync] for s in range(3)]
    rows += [[100.0 + s, 10, "CPU", "running", running + run_id % 2] for s in range(3)]
    return _run(run_id, {
        "waits": {"columns": ["t", "samples", "wait_event_type", "wait_event", "count"],
                  "rows": rows},
        waits.STATEMENTS: {"columns": waits.STATEMENT_COLUMNS, "rows": statements},
    })  # fmt: skip


def test_a_wait_names_the_statement_class_most_of_it_was_in() -> None:
    # the commit's WalSync waits: END with literal-free text, in each run under one query id;
    # the UPDATE's text differs by run (its constants), its query id does not
    a = [_waited(i, 7 + i % 2, [["IO", "WalSync", 11, 20, "END;"],
                               ["IO", "WalSync", 12, 2, f"UPDATE t SET v = {i};"],
                               ["CPU", "running", 12, 30, f"UPDATE t SET v = {i};"]])
         for i in (1, 2, 3)]  # fmt: skip
    b = [_waited(i, 0, [["CPU", "running", 12, 30, "UPDATE t SET v = 9;"]], running=20)
         for i in (4, 5, 6)]  # fmt: skip
    found = evidence.of_stored(a, b, paired=False)
    first = found[0]
    assert first.key == "wait:IO:WalSync" and first.delta < 0  # a's waits: a's statements
    assert first.statement == "END;" and first.statement_pct == pytest.approx(100 * 60 / 66)
    assert first.text.endswith("commits wait less for the WAL flush (91% of it in `END;`)")
    ids: dict[int, str] = {}
    assert evidence_measures.wait_statements(a[0], ids)["wait:IO:WalSync"] == {11: 20, 12: 2}
    assert ids == {11: "END;", 12: "UPDATE t SET v = 1;"}  # one text of each class
    running = next(i for i in found if i.key == "wait:CPU:running")  # 1 → 2 sessions: b's
    # b's class, query id 12, said by the first of its texts read (a's)
    assert running.delta > 0 and running.statement == "UPDATE t SET v = 1;"
    assert running.statement_pct == 100.0
    plain = evidence.of_stored([_waited(i, 8, []) for i in (1, 2, 3)], b, paired=False)
    assert plain[0].key == "wait:IO:WalSync" and plain[0].statement == ""  # no query ids
    assert "% of it in" not in plain[0].text
