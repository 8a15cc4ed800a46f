"""Maintenance operations' pure parts: the campaign keys and their checks, the statements, the
figures (MB/s), progress rows, VACUUM VERBOSE's workers, preflight's parallel limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pglab.campaign import parse as campaign
from pglab.campaign.identity import flat
from pglab.campaign.spec import PhaseSpec, Script
from pglab.cli import fmt
from pglab.errors import CampaignError
from pglab.planning.plan import expand_points
from pglab.planning.preflight import _parallel_problems
from pglab.postgres.settings import SettingDef
from pglab.workloads.maintenance import clients, figures
from pglab.workloads.work import OperationWork, PgbenchWork

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
    assert isinstance(warm.work, PgbenchWork)
    assert vac.work.operation == "vacuum" and vac.work.dirty == 0.1
    assert vac.work.freeze and idx.work.columns == ("bid", "abalance")
    points = expand_points(c)
    assert [[flat(ph)["parallel"] for ph in pt.phases] for pt in points] == [[0, 0, 0], [0, 2, 2]]
    assert len({pt.point_key for pt in points}) == 2


def test_a_pgbench_phase_keeps_the_point_key_it_had_before_operations() -> None:
    # the operation fields are left out of a pgbench phase's identity
    (pt,) = expand_points(parse({"workload": {"script": "select-only"}}))
    assert "operation" not in pt.point_dict()["phases"][0]


@pytest.mark.parametrize(("doc", "said"), [
    ({"workload": {"operation": "vacum"}}, 'did you mean "vacuum"'),
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
    ({"phases": [{"name": "r", "operation": "restore"}, {"operation": "dump"}]},
     'phase "r": restore needs a phase with operation = "dump" before it in the run'),
    ({"workload": {"operation": "dump", "jobs": 0}}, "jobs = 0: expected pg_dump/pg_restore -j"),
    ({"workload": {"operation": "basebackup", "target": "backups"}},
     "target = 'backups': expected the absolute path of a directory"),
    ({"workload": {"operation": "restore", "compress": False}},
     'compress is not an option of operation = "restore" (its options: jobs)'),
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
    assert isinstance(a.work, PgbenchWork) and flat(a)["dirty"] == 0.0
    assert b.work.operation == "vacuum" and b.work.dirty == 0.2


def test_mb_per_s_is_bytes_over_time() -> None:
    assert figures.mb_per_s(150_000_000, 1.5) == pytest.approx(100.0)
    assert figures.mb_per_s(10, 0.0) == 0.0
    ph = PhaseSpec("i", OperationWork("create_index", parallel=1))
    figs = figures.figures(ph, 2.0, 300_000_000, None, 1, 65536)
    assert figs.mb_s == pytest.approx(150.0) and figs.workers_launched == 1
    assert figures.OperationFigures.from_table(figs.to_table()) == figs


def test_progress_rows_say_the_share_done_once_the_total_is_known() -> None:
    assert figures.progress_row(10.0, ("scanning heap", 410, 1000, "blocks"), []) == [
        10.0, "scanning heap", 410, 1000, 41.0, "blocks", None, None, None, None,
    ]  # fmt: skip
    assert figures.progress_row(11.0, ("initializing", None, 0, "blocks"), []) == [
        11.0, "initializing", 0, 0, None, "blocks", None, None, None, None,
    ]  # fmt: skip


def test_a_progress_rows_rate_and_eta_are_over_its_phase_so_far() -> None:
    rows: list[list[Any]] = []
    for t, row in [
        (10.0, ("initializing", 0, 0, "blocks")),
        (11.0, ("scanning heap", 100, 1000, "blocks")),
        (12.0, ("scanning heap", 300, 1000, "blocks")),
        (13.0, ("scanning heap", 400, 1000, "blocks")),
        (14.0, ("vacuuming indexes", 0, 0, "blocks")),
        (15.0, ("building index: loading tuples in tree", 5000, 20000, "tuples")),
        (16.0, ("building index: loading tuples in tree", 15000, 20000, "tuples")),
    ]:
        rows.append(figures.progress_row(t, row, rows))
    # the phase's first row has no rate; then (done - first done) / (t - first t)
    assert [r[6:9] for r in rows[1:4]] == [
        [None, None, None], [200.0, 3.5, "rate"], [150.0, 4.0, "rate"]
    ]  # fmt: skip
    assert rows[4][6:9] == [None, None, None]  # a new phase starts over
    assert rows[6][6:9] == [10000.0, 0.5, "rate"]
    assert {r[9] for r in rows} == {None}  # nothing to tell the later phases by
    # no ETA without a total, and none while nothing moved
    still = figures.progress_row(17.0, ("COPY TO", 5_000_000, 0, "bytes"), [
        [16.0, "COPY TO", 1_000_000, 0, None, "bytes", None, None]
    ])  # fmt: skip
    assert still[6:9] == [4_000_000.0, None, None]
    same = figures.progress_row(17.0, ("sorting", 10, 10, "tuples"), [
        [16.0, "sorting", 10, 10, 100.0, "tuples", None, None]
    ])  # fmt: skip
    assert same[6:9] == [None, None, None]


def test_the_eta_goes_by_an_earlier_run_of_the_same_point_where_it_has_one() -> None:
    # the earlier run scanned its first half in 6 s and its second half in 2 s (the end of the
    # table was in shared_buffers), then spent 3 s on a phase this run has not reached
    prior = figures.Prior([
        [100.0, "scanning heap", 0, 1000, 0.0, "blocks", None, None, None],
        [103.0, "scanning heap", 250, 1000, 25.0, "blocks", None, None, None],
        [106.0, "scanning heap", 500, 1000, 50.0, "blocks", None, None, None],
        [108.0, "vacuuming heap", 10, 100, 10.0, "blocks", None, None, None],
    ], ended=111.0)  # fmt: skip
    rows: list[list[Any]] = []
    for t, row in [(200.0, ("scanning heap", 0, 1000, "blocks")),
                   (206.0, ("scanning heap", 250, 1000, "blocks")),  # half as fast as before
                   (212.0, ("scanning heap", 500, 1000, "blocks")),
                   (213.0, ("scanning heap", 600, 1000, "blocks")),  # past what it saw
                   (215.0, ("vacuuming heap", 0, 100, "blocks"))]:  # fmt: skip
        rows.append(figures.progress_row(t, row, rows, prior))
    # the earlier run's scan had 500 blocks left at 106, more than its last rate (83/s) covers
    # by its next row at 108: it ended there. At 25%: 5 s were left of the phase after 3 s;
    # this run took 6 s to get here: 10 s left; and of the whole operation: 8 s were left of
    # it (to 111), at half the pace: 16 s
    assert rows[1][7:] == [10.0, "history", 16.0]
    assert rows[2][7:] == [4.0, "history", 10.0]  # 2 s left after 6, here after 12: 4 s
    # the earlier run never got to 60%: at this phase's rate, and nothing of the operation
    assert rows[3][7:] == [round(400 / (600 / 13), 1), "rate", None]
    assert figures.progress_text("vacuum", rows[1]) == (
        "vacuum: scanning heap 25%, 0.3 MB/s, ETA 0:10 (all 0:16)"
    )


def test_the_earlier_run_is_read_between_its_rows_and_from_this_runs_first_share() -> None:
    # the earlier run's rows came at 0%, 40% and 80% (read about once a second)
    prior = figures.Prior([
        [100.0, "scanning heap", 0, 1000, 0.0, "blocks", None, None, None],
        [101.0, "scanning heap", 400, 1000, 40.0, "blocks", None, None, None],
        [101.8, "scanning heap", 800, 1000, 80.0, "blocks", None, None, None],
    ], ended=102.5)  # fmt: skip
    # this run's first row came at 10%, its next at 25%, both at the earlier run's pace
    first = figures.progress_row(200.25, ("scanning heap", 100, 1000, "blocks"), [], prior)
    row = figures.progress_row(200.625, ("scanning heap", 250, 1000, "blocks"), [first], prior)
    # the earlier run reached 10% at 100.25 and 25% at 100.625 (not at its 40% row, 101.0):
    # the same 0.375 s as this run, so what it had left from 100.625 (1.875 s) is left here
    assert row[7:] == [1.9, "history", 1.9]
    # had a row of another phase come at 103, the scan would have ended at 102.2 (not at the
    # midpoint, 102.4): the 200 blocks left after 80% at its last rate, 500 a second
    rows = [*prior.rows, [103.0, "vacuuming indexes", 0, 0, None, "blocks", None, None, None]]
    row = figures.progress_row(
        200.625, ("scanning heap", 250, 1000, "blocks"), [first], figures.Prior(rows, 103.5)
    )
    assert row[7:] == [1.6, "history", 2.9]  # 102.2 - 100.625 s of the scan, 103.5 - 100.625


def test_what_an_operation_read_is_asked_of_pg_stat_io_from_16_on() -> None:
    assert figures.io_read_sql(150014) is None  # no pg_stat_io
    assert "reads * op_bytes" in figures.io_read_sql(160009)  # type: ignore[operator]
    assert "reads * op_bytes" in figures.io_read_sql(170005)  # type: ignore[operator]
    sql = figures.io_read_sql(180001)
    assert sql is not None and "sum(read_bytes)" in sql and "op_bytes" not in sql  # gone in 18
    assert "'client backend', 'background worker'" in sql  # the operation and its workers


def test_what_the_progress_line_says() -> None:
    row = [1.0, "scanning heap", 4300, 10000, 43.0, "blocks", 25879.0, 12.0]
    assert figures.progress_text("vacuum", row) == "vacuum: scanning heap 43%, 212 MB/s, ETA 0:12"
    row = [1.0, "COPY TO", 52_000_000, 0, None, "bytes", 26e6, None]
    assert figures.progress_text("dump", row) == "dump: COPY TO 52 MB, 26 MB/s"
    row = [1.0, "writing new heap", 5000, 20000, 25.0, "tuples", 1000.0, 3725.0]
    assert figures.progress_text("cluster", row) == (
        "cluster: writing new heap 25%, 1,000 tuples/s, ETA 1:02:05"
    )
    assert figures.clock(59.6) == "1:00" and figures.clock(3600) == "1:00:00"


def test_the_client_programs_and_their_progress(tmp_path: Path) -> None:
    client = clients.Client("/b/pg_dump", "/b/pg_restore", "/b/pg_basebackup",
                            conninfo=lambda db: f"dbname={db}", workdir=tmp_path)  # fmt: skip
    dump = PhaseSpec("d", OperationWork("dump", jobs=2, compress=False))
    into = tmp_path / "dump"
    assert clients.argv(dump, client, "pglab_bench", into) == [
        "/b/pg_dump", "-F", "d", "-j", "2", "-f", str(into), "-Z", "0", "-d", "dbname=pglab_bench"
    ]  # fmt: skip
    restore = PhaseSpec("r", OperationWork("restore"))
    assert clients.argv(restore, client, "x", into) == [
        "/b/pg_restore", "-j", "1", "-d", "dbname=pglab_restore", str(into)
    ]  # fmt: skip
    backup = PhaseSpec("b", OperationWork("basebackup", target="/mnt/b"))
    assert clients.backup_dir(backup, tmp_path) == Path("/mnt/b/pglab-basebackup")
    assert clients.argv(backup, client, "x", Path("/mnt/b/pglab-basebackup"))[1:3] == [
        "-D", "/mnt/b/pglab-basebackup"
    ]  # fmt: skip
    # an uncompressed dump's data is what a restore copies in; a compressed one's is unknown
    into.mkdir()
    (into / "toc.dat").write_bytes(b"x" * 7)
    (into / "3301.dat").write_bytes(b"x" * 100)
    assert clients.dump_data_bytes(into) == 107
    (into / "3302.dat.gz").write_bytes(b"x")
    assert clients.dump_data_bytes(into) == 0
    # a finished table's COPY leaves the view: the bytes it had are kept
    copies = clients.CopyProgress("COPY FROM", 1000)
    assert copies.row([]) is None
    assert copies.row([(7, 1, 100), (8, 2, 50)]) == ("COPY FROM", 150, 1000, "bytes")
    assert copies.row([(8, 2, 400)]) == ("COPY FROM", 500, 1000, "bytes")


def test_the_statements_of_each_operation() -> None:
    vac = PhaseSpec("v", OperationWork("vacuum", parallel=2, freeze=True))
    assert figures.statement(vac) == "VACUUM (VERBOSE, PARALLEL 2, FREEZE) pgbench_accounts"
    assert figures.statement(PhaseSpec("a", OperationWork("analyze"))) == "ANALYZE pgbench_accounts"
    idx = PhaseSpec("i", OperationWork("create_index", columns=("bid", "abalance")))
    assert figures.statement(idx) == (
        "CREATE INDEX pglab_operation_idx ON pgbench_accounts USING btree (bid, abalance)"
    )
    assert figures.statement(PhaseSpec("f", OperationWork("vacuum_full"))) == (
        "VACUUM (FULL, VERBOSE) pgbench_accounts"
    )
    assert figures.statement(PhaseSpec("c", OperationWork("cluster"))) == (
        "CLUSTER pgbench_accounts USING pgbench_accounts_pkey"
    )
    assert figures.statement(PhaseSpec("r", OperationWork("reindex"))) == (
        "REINDEX INDEX pgbench_accounts_pkey"
    )
    with pytest.raises(ValueError):
        figures.statement(PhaseSpec("p", PgbenchWork(scripts=(Script(builtin="tpcb-like"),))))
    dirty = figures.dirty_statement(0.1)
    assert dirty.startswith("UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE")
    assert f"< {round(0.1 * figures.DIRTY_BUCKETS)}" in dirty


def test_a_parallel_index_build_gets_the_memory_its_participants_need() -> None:
    idx = PhaseSpec("i", OperationWork("create_index", parallel=3))
    assert figures.session_settings(idx, 65536) == {
        "max_parallel_maintenance_workers": "3",
        "maintenance_work_mem": f"{4 * 32 * 1024}kB",
    }
    # never lowered, and none for a serial build
    assert figures.session_settings(idx, 10**6) == {"max_parallel_maintenance_workers": "3"}
    serial = PhaseSpec("i", OperationWork("create_index"))
    assert figures.session_settings(serial, 1024) == {"max_parallel_maintenance_workers": "0"}
    assert figures.session_settings(PhaseSpec("a", OperationWork("analyze")), 1024) == {}


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
    ph = PhaseSpec("vac", OperationWork("vacuum", dirty=0.1, parallel=1))
    assert fmt.phase(ph) == "vac: vacuum dirty=0.1 parallel=1"
    ph = PhaseSpec("a", OperationWork("analyze"), measured=False, times=2)
    assert fmt.phase(ph) == "a: analyze ×2 (unmeasured)"


def test_a_progress_row_in_words_for_the_progress_line() -> None:
    assert figures.progress_text("vacuum", [1.0, "scanning heap", 410, 1000, 41.0, "blocks",
                                            None, None]) == "vacuum: scanning heap 41%"  # fmt: skip
    row = [1.0, "building index: loading tuples in tree", 5000, 0, None, "tuples", None, None]
    assert figures.progress_text("create_index", row) == (
        "create_index: building index: loading tuples in tree 5,000"
    )
    assert figures.progress_text("analyze", [1.0, "initializing", 0, 0, None, "blocks",
                                             None, None]) == "analyze: initializing"  # fmt: skip


def test_a_variants_workload_option_reaches_only_the_phases_that_take_it() -> None:
    c = parse({
        "phases": [
            {"name": "warm", "script": "select-only", "measured": False},
            {"name": "idx", "operation": "create_index"},
        ],
        "variants": {"serial": {}, "two": {"workload": {"parallel": 2}}},
    })  # fmt: skip
    serial, two = c.variants
    assert [flat(ph)["parallel"] for ph in serial.phases] == [0, 0]
    assert [flat(ph)["parallel"] for ph in two.phases] == [0, 2]
    said = problems({
        "workload": {"script": "select-only"},
        "variants": {"a": {"workload": {"dirty": 0.1}}},
    })  # fmt: skip
    assert "[variants.a] workload: dirty: no phase runs an operation that takes it" in said


def test_the_plan_shows_a_client_programs_options() -> None:
    ph = PhaseSpec("d", OperationWork("dump", jobs=2, compress=False))
    assert fmt.phase(ph) == "d: dump jobs=2 compress=off"
    assert fmt.phase(PhaseSpec("b", OperationWork("basebackup"))) == "b: basebackup"
    ph = PhaseSpec("b", OperationWork("basebackup", target="/mnt/b"))
    assert fmt.phase(ph) == "b: basebackup target=/mnt/b"


def test_an_index_build_a_version_cannot_make_as_asked_is_refused() -> None:
    from pglab.planning.preflight import index_problems

    def point(**phase: Any):
        (pt,) = expand_points(parse({"workload": {"operation": "create_index", **phase}}))
        return pt

    where = "p: "
    assert index_problems(point(method="brin", parallel=1), 16, "16.4", where) == [
        "p: phase main: parallel brin index builds came in PostgreSQL 17; 16.4 builds them "
        "with one process (give parallel = 0, or PostgreSQL 17 or later)"
    ]
    assert index_problems(point(method="brin", parallel=1), 17, "17.2", where) == []
    assert index_problems(point(method="btree", parallel=1), 15, "15.8", where) == []
    (said,) = index_problems(point(method="hash", parallel=1), 18, "18.6", where)
    assert "hash indexes are built by one process in every PostgreSQL version" in said
    (said,) = index_problems(point(method="hash", columns=["bid", "abalance"]), 18, "18", where)
    assert said == "p: phase main: a hash index takes one column, not 2 (bid, abalance)"
    assert figures.statement(PhaseSpec("i", OperationWork("create_index", method="brin"))) == (
        "CREATE INDEX pglab_operation_idx ON pgbench_accounts USING brin (abalance)"
    )
