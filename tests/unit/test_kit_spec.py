"""``kit = "tpcc"`` as the campaign file says it: its scripts and mix, its options checked
before anything runs, the dataset and pgbench arguments it makes, the figures pglab computes
from pgbench's per-script counts, and how its consistency is said."""

from __future__ import annotations

import os
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helpers.campaign_text import parsed, refused

from pglab.campaign.spec import RunSpec
from pglab.errors import CampaignError
from pglab.pgbench.invoke import argv_for
from pglab.planning.plan import expand_points
from pglab.records import PgbenchReport, PhaseResult, ScriptReport
from pglab.run.metrics import run_metrics
from pglab.store.numbers import metrics_json
from pglab.tune import spec as tune_spec
from pglab.workloads import described, estimated_size, loading
from pglab.workloads.kits import load as kit_load
from pglab.workloads.kits.work.kits import KITS, TPCC, YCSB, script_stem
from pglab.workloads.sysbench.invoke import argv_for as sysbench_argv
from pglab.workloads.sysbench.load import Target

BASE = """
name = "k"
[dataset]
scale = 3
[workload]
kit = "tpcc"
"""


def test_the_mix_is_45_43_4_4_4_with_1_in_100_new_orders_rolled_back() -> None:
    (ph,) = parsed(BASE).variants[0].phases
    assert (ph.work.kit, ph.work.mode, ph.pgbench.vacuum) == ("tpcc", "procedures", False)
    weights = {script_stem(str(s.path)): s.weight for s in ph.pgbench.scripts}
    total = sum(weights.values())
    share = {k: 100 * w / total for k, w in weights.items()}
    assert share["new_order"] + share["new_order_rollback"] == 45
    assert share["new_order_rollback"] / (share["new_order"] + share["new_order_rollback"]) == 0.01
    assert [share[k] for k in ("payment", "order_status", "delivery", "stock_level")] == [
        43, 4, 4, 4
    ]  # fmt: skip
    assert all(Path(str(s.path)).parent.name == "procedures" for s in ph.pgbench.scripts)
    assert ph.script_label == "tpcc (procedures)"


def test_every_script_of_both_modes_exists_and_reads_the_warehouses() -> None:
    for mode in TPCC.modes:
        for s in TPCC.scripts(mode):
            text = Path(str(s.path)).read_text()
            assert ":warehouses" in text and s.sha256
            assert "[1::" not in text  # pgbench takes "::" for a cast, not a variable


def test_the_point_gets_the_kits_dataset_and_tells_pgbench_the_warehouses() -> None:
    points = expand_points(parsed(BASE + '[matrix]\nmode = ["procedures", "client"]\n'))
    assert [p.phases[0].work.mode for p in points] == ["procedures", "client"]
    for point in points:
        assert point.dataset.kit == "tpcc" and point.dataset.scale == 3
        assert point.phases[0].pgbench.defines == (("warehouses", "3"),)
    argv = argv_for(_binaries(), points[1].phases[0], [], Path("/tmp/w"))
    assert argv[argv.index("-D") + 1] == "warehouses=3" and "-n" in argv
    assert any(a.endswith("/client/new_order.sql@4455") for a in argv)
    # where pglab is installed is no part of the point (its scripts' contents are)
    ident = points[1].point_dict()
    assert all("path" not in s for s in ident["phases"][0]["scripts"])
    assert ident["dataset"]["kit"] == "tpcc" and points[0].point_key != points[1].point_key
    assert described(points[0].dataset) == "tpcc, 3 warehouses"
    assert estimated_size(points[0].dataset).total > 3 * 200 * 2**20


def test_a_dataset_without_a_kit_keeps_its_key() -> None:
    (point,) = expand_points(parsed('name = "k"\n[workload]\nscript = "select-only"\n'))
    assert "kit" not in point.point_dict()["dataset"] and "kit" not in point.dataset.identity()
    assert "kit" not in point.point_dict()["phases"][0]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ('[workload]\nkit = "tpc-c"\n',
         'kit = "tpc-c": use one of tpcc, ycsb, tpch, tpce — did you'),
        ('[workload]\nkit = "tpcc"\nmode = "stored"\n', "kit 'tpcc' runs in procedures or client"),
        ('[workload]\nscript = "tpcb-like"\nmode = "client"\n', "this phase runs no kit"),
        ('[workload]\nkit = "tpcc"\nscript = "tpcb-like"\n', "give kit, script(s) or operation"),
        ('[dataset]\nscale = 20000\n[workload]\nkit = "tpcc"\n', "at most 10,000"),
        ('[dataset]\nscale = 500\n[workload]\nkit = "tpce"\n',
         "customers as its scale, at least 1,000"),
        ('[dataset]\nscale = 1500\n[workload]\nkit = "tpce"\n', "a multiple of 1,000"),
        ('[workload]\nkit = "tpcc"\n[[phases]]\nname = "a"\n[[phases]]\nname = "b"\n'
         'script = "tpcb-like"\n', "every phase runs it"),
        ('[workload]\nscript = "tpcb-like"\n[matrix]\nmode = ["client"]\n',
         "no phase runs a workload kit"),
    ],
)  # fmt: skip
def test_bad_kit_input_is_one_clear_error(extra: str, said: str) -> None:
    assert said in refused('name = "k"\n' + extra)


def test_the_tune_objective_nopm_needs_a_kit(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\n[workload]\nscript = "tpcb-like"\n[tune]\nobjective = "nopm"\n')
    with pytest.raises(CampaignError, match="phases run no kit"):
        tune_spec.load(path)
    path.write_text(BASE + '[tune]\nobjective = "nopm"\n')
    assert tune_spec.load(path)[1].objective == "nopm"


def _script(stem: str, weight: int, n: int, tps: float) -> ScriptReport:
    return ScriptReport(number=1, name=f"/x/tpcc/client/{stem}.sql", weight=weight,
                        target_pct=None, transactions=n, counted=n, share_pct=None,
                        tps=tps)  # fmt: skip


def _kit_phase(check_rows: list[list[Any]]) -> PhaseResult:
    report = PgbenchReport(tps=100.0, transactions=1000, scripts=(
        _script("new_order", 4455, 445, 44.5), _script("new_order_rollback", 45, 5, 0.5),
        _script("payment", 4300, 430, 43.0), _script("order_status", 400, 40, 4.0),
        _script("delivery", 400, 40, 4.0), _script("stock_level", 400, 40, 4.0),
    ))  # fmt: skip
    table = {"columns": ["condition", "says", "violations"], "rows": check_rows}
    return PhaseResult("main", 1, True, 0.0, 10.0, (), report,
                       tables={kit_load.CONSISTENCY_TABLE: table})  # fmt: skip


def test_nopm_tpm_and_rollbacks_come_from_the_per_script_counts() -> None:
    (point,) = expand_points(parsed(BASE))
    run: RunSpec = point
    metrics = metrics_json(run_metrics(run, [_kit_phase([[1, "W_YTD = sum(D_YTD)", 0]])]))
    assert metrics["nopm"] == pytest.approx(44.5 * 60) and metrics["tpm"] == 6000
    assert metrics["rollback_pct"] == pytest.approx(100 * 5 / 450)
    assert metrics["inconsistent"] == 0 and metrics["phase.main.nopm"] == metrics["nopm"]
    broken = run_metrics(run, [_kit_phase([[1, "a", 0], [3, "b", 2], [4, "c", 1]])])
    assert broken.get("inconsistent") == 2


def test_nopm_comes_from_the_orders_written_when_the_kit_counted_them() -> None:
    """With the kit's counters (the sum of D_NEXT_O_ID before and after pgbench), NOPM is the
    orders written over pgbench's measured time (1,000 transactions at 100 TPS: 10 s), and
    pgbench's per-script figure is kept beside it; Delivery's skips are a share of its
    districts (40 Deliveries: 400 districts)."""
    (point,) = expand_points(parsed(BASE))
    phase = _kit_phase([[1, "W_YTD = sum(D_YTD)", 0]])
    counters = {"columns": ["counter", "before", "after"],
                "rows": [["orders", 60030, 60478], ["delivery_skips", 3, 5]]}  # fmt: skip
    phase = replace(phase, tables={**phase.tables, kit_load.COUNTERS_TABLE: counters})
    metrics = metrics_json(run_metrics(point, [phase]))
    assert metrics["nopm"] == pytest.approx(448 / (10 / 60))  # 2,688: 448 orders in 10 s
    assert metrics["nopm_pgbench"] == pytest.approx(44.5 * 60)  # 2,670: what pgbench counted
    assert metrics["delivery_skipped_pct"] == pytest.approx(100 * 2 / 400)
    assert metrics["phase.main.nopm"] == metrics["nopm"]


def test_a_broken_condition_is_said_with_its_count() -> None:
    rows = [[1, "W_YTD = sum(D_YTD)", 0], [2, "D_NEXT_O_ID - 1 = max(O_ID)", 3]]
    table = {"columns": ["condition", "says", "violations"], "rows": rows}
    assert kit_load.broken(table) == ["2 (D_NEXT_O_ID - 1 = max(O_ID): 3 broken)"]
    assert kit_load.broken({}) == []


def test_the_loader_tells_its_progress_with_an_eta() -> None:
    assert loading.said_load(3, 12, "warehouses", 6.0) == "3 of 12 warehouses (25%), ETA 0:18"
    assert loading.said_load(0, 12, "warehouses", 0.0) == "0 of 12 warehouses (0%)"


def test_every_kit_has_its_sql() -> None:
    for kit in KITS.values():
        for name in (*kit.setup, "keys"):
            assert kit.sql(name).strip()
    assert TPCC.has("consistency") and not YCSB.has("consistency")


def _binaries() -> Any:
    class B:
        def exe(self, name: str) -> str:
            return f"/usr/bin/{name}"

    return B()


def test_points_of_a_kit_are_judged_on_nopm() -> None:
    from pglab.analysis.compare import headline

    class Row:
        def __init__(self, metrics: dict[str, float], ok: bool = True) -> None:
            self.metrics, self.ok = metrics, ok

    kit, plain = Row({"tps": 1.0, "nopm": 2.0}), Row({"tps": 1.0})
    assert headline([kit, kit, Row({}, ok=False)]) == "nopm"  # type: ignore[list-item]
    assert headline([kit, plain]) == "tps"  # type: ignore[list-item]


def test_points_of_a_kit_in_an_interleaved_campaign_pair_by_round() -> None:
    """NOPM of two points of one interleaved campaign: judged on their within-round ratios
    (a drift shared by a round cancels), not by Welch's test on the runs apart."""
    from pglab.analysis import engine
    from pglab.analysis.compare import Target, compare_points
    from pglab.rows import RunRow

    drift = [1.0, 0.6, 1.3, 0.8, 1.1]  # what each round shares: large, so Welch cannot tell

    def runs(point: str, factor: float) -> list[RunRow]:
        return [RunRow(i, "c", f"{point}{i}", point, point, point, r, "ok", 100.0, 0.0, 1.0,
                       None, metrics={"tps": 100.0, "nopm": 1000.0 * d * factor * (1 + r / 500)})
                for i, (r, d) in enumerate(zip(range(1, 6), drift, strict=True))]  # fmt: skip

    a, b = (Target("point", p, "c", p, runs=runs(p, f)) for p, f in (("a", 1.0), ("b", 0.9)))
    rounds = engine.Pairing(engine.ROUNDS, "one interleaved campaign")
    blocked = compare_points(a, b, how=rounds)["pairs"][0]["comparison"]
    apart = compare_points(a, b)["pairs"][0]["comparison"]
    assert blocked.method == "paired" and blocked.verdict == "-", blocked
    assert apart.method == "welch" and apart.verdict != "-", apart
    assert blocked.delta_pct == pytest.approx(-10.0, abs=0.5)


SYSBENCH = """
name = "s"
[dataset]
tables = 4
table_size = 1000
[workload]
generator = "sysbench"
clients = 8
duration = 5
rate = 100
random_seed = 3
"""


def test_sysbench_runs_its_test_on_tables_of_table_size() -> None:
    (point,) = expand_points(parsed(SYSBENCH))
    (ph,) = point.phases
    assert (ph.work.kind, ph.work.test, ph.script_label) == (
        "sysbench", "oltp_read_write", "sysbench oltp_read_write"
    )  # fmt: skip
    assert point.dataset.kit == "sysbench"
    assert ph.pgbench.defines == (("tables", "4"), ("table_size", "1000"))
    ident = point.point_dict()
    assert ident["dataset"]["tables"] == 4 and ident["phases"][0]["generator"] == "sysbench"
    target = Target("/tmp/s", 5432, "u", "db", "secret")
    argv = sysbench_argv("/usr/bin/sysbench", ph, target)
    assert argv[:2] == ["/usr/bin/sysbench", "oltp_read_write"] and argv[-1] == "run"
    for arg in ("--pgsql-host=/tmp/s", "--pgsql-port=5432", "--pgsql-db=db", "--tables=4",
                "--table-size=1000", "--threads=8", "--time=5", "--rate=100",
                "--rand-seed=3", "--report-interval=1", "--percentile=95"):  # fmt: skip
        assert arg in argv
    assert not any("secret" in a for a in argv) and target.env() == {"PGPASSWORD": "secret"}
    assert described(point.dataset) == "sysbench, 4 table(s) × 1,000 rows"


def test_a_pgbench_dataset_has_no_sysbench_keys() -> None:
    (point,) = expand_points(parsed('name = "k"\n[dataset]\ntables = 3\n'))
    assert "tables" not in point.point_dict()["dataset"]
    assert "generator" not in point.point_dict()["phases"][0]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ('[workload]\ngenerator = "jmeter"\n',
         'generator = "jmeter": use one of pgbench, sysbench'),
        ('[workload]\ngenerator = "sysbench"\ntest = "oltp_read_wirte"\n',
         'test = "oltp_read_wirte": use one of'),
        ('[workload]\ntest = "oltp_read_only"\n', "but this phase runs pgbench"),
        ('[workload]\ngenerator = "sysbench"\nkit = "tpcc"\n', 'kit with generator = "sysbench"'),
        ('[workload]\ngenerator = "sysbench"\n[[phases]]\nname = "a"\n[[phases]]\nname = "b"\n'
         'generator = "pgbench"\n', "every phase runs it"),
        ('[dataset]\ntables = 0\n[workload]\ngenerator = "sysbench"\n', "tables = 0"),
        ('[workload]\ngenerator = "sysbench"\nprotocol = "prepared"\nlatency_log = "off"\n',
         'protocol, latency_log with generator = "sysbench": pgbench\'s options'),
    ],
)  # fmt: skip
def test_bad_sysbench_input_is_one_clear_error(extra: str, said: str) -> None:
    assert said in refused('name = "k"\n' + extra)


YCSB_BASE = """
name = "y"
[dataset]
scale = 250000
[workload]
kit = "ycsb"
clients = 6
"""


@pytest.mark.parametrize(
    ("mode", "mix"),
    [
        ("a", {"read": 50, "update": 50}),
        ("b", {"read": 95, "update": 5}),
        ("c", {"read": 100}),
        ("d", {"read": 95, "insert": 5}),
        ("e", {"scan": 95, "insert": 5}),
        ("f", {"read": 50, "read_modify_write": 50}),
    ],
)
def test_ycsb_workloads_are_its_core_mixes(mode: str, mix: dict[str, int]) -> None:
    (ph,) = parsed(YCSB_BASE + f'mode = "{mode}"\n').variants[0].phases
    assert {script_stem(str(s.path)): s.weight for s in ph.pgbench.scripts} == mix
    assert ph.script_label == f"ycsb ({mode})"


def test_ycsb_tells_pgbench_the_records_clients_and_distribution() -> None:
    points = expand_points(parsed(YCSB_BASE + '[matrix]\ndistribution = ["uniform", "latest"]\n'))
    assert [p.phases[0].pgbench.defines for p in points] == [
        (("records", "250000"), ("clients", "6"), ("distribution", "1"), ("inserted", "0")),
        (("records", "250000"), ("clients", "6"), ("distribution", "2"), ("inserted", "0")),
    ]
    assert described(points[0].dataset) == "ycsb, 250,000 records"
    assert YCSB.units(250_000) == 3 and estimated_size(points[0].dataset).total > 250_000 * 1000
    # the default distribution is zipfian, and left out of the point's key
    (plain,) = expand_points(parsed(YCSB_BASE))
    assert plain.phases[0].pgbench.defines[2] == ("distribution", "0")
    assert "distribution" not in plain.point_dict()["phases"][0]


def test_every_ycsb_script_reads_what_pglab_gives() -> None:
    for mode in YCSB.modes:
        for s in YCSB.scripts(mode):
            text = Path(str(s.path)).read_text()
            assert ":records" in text and ":key" in text


def test_ycsb_records_of_another_shape_have_their_own_scripts_dataset_and_key() -> None:
    """``[dataset] fields``/``field_length``: the scripts update only the fields there are,
    with values of that length; the dataset and the point's key are those of that shape; at
    YCSB's defaults (10 of 100) the scripts are byte for byte those before the shape could be
    set (their digests, hence every stored point's key, unchanged)."""
    (plain,) = expand_points(parsed(YCSB_BASE))
    digests = {script_stem(str(s.path)): s.sha256 for s in plain.phases[0].pgbench.scripts}
    assert digests["update"] == "891ca34681f84465"  # update.sql as it was before the shape
    assert "fields" not in plain.point_dict()["dataset"]
    (shaped,) = expand_points(parsed(YCSB_BASE.replace("[workload]",
                                     "fields = 3\nfield_length = 50\n[workload]")))  # fmt: skip
    update = next(
        s for s in shaped.phases[0].pgbench.scripts if str(s.path).endswith("/update.sql")
    )
    text = Path(str(update.path)).read_text()
    assert "\\set field random(0, 2)" in text and "field2 = CASE" in text
    assert "field3" not in text and "ycsb_value(50)" in text
    assert shaped.point_dict()["dataset"]["fields"] == 3 and shaped.point_key != plain.point_key
    assert described(shaped.dataset) == "ycsb, 250,000 records of 3 field(s) × 50 characters"
    assert estimated_size(shaped.dataset).total < estimated_size(plain.dataset).total / 2.5
    assert "field2 text" in YCSB.sql("schema", (3, 50)) and "field3" not in YCSB.sql(
        "schema", (3, 50)
    )


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ('[workload]\nkit = "ycsb"\nmode = "g"\n', "kit 'ycsb' runs in a or b or c or d or e or f"),
        ('[workload]\nkit = "ycsb"\ndistribution = "pareto"\n',
         'distribution = "pareto": use one of zipfian, uniform, latest'),
        ('[workload]\nkit = "tpcc"\ndistribution = "uniform"\n', "phase runs no YCSB"),
        ('[dataset]\nscale = 3000000\n[workload]\nkit = "ycsb"\n', "from 1 to 1000000"),
        ('[dataset]\nfields = 3\n[workload]\nkit = "tpcc"\n', "but no phase runs YCSB"),
        ('[dataset]\nfield_length = 0\n[workload]\nkit = "ycsb"\n', "from 1 to 10000"),
    ],
)  # fmt: skip
def test_bad_ycsb_input_is_one_clear_error(extra: str, said: str) -> None:
    assert said in refused('name = "k"\n' + extra)


def test_shared_arguments_are_written_into_each_script_pgbench_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGLAB_HOME", str(tmp_path / "lab"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (new_order, rollback, *_) = TPCC.scripts("client")
    texts = [Path(str(s.path)).read_text() for s in (new_order, rollback)]
    for text in texts:
        assert "pglab: include" not in text and "\\set s15 CASE" in text
        assert text.startswith("-- pglab's TPC-C-like kit (client mode): New-Order")
    # in the lab (issue 52: not one user's cache), named as a person names it
    assert Path(str(new_order.path)).is_relative_to(tmp_path / "lab" / "kit-scripts")
    assert Path(str(new_order.path)).name == "new_order.sql"
    assert not (tmp_path / "cache").exists()
    # a script removed or altered under pglab is written again, the same
    Path(str(new_order.path)).write_text("broken")
    again = TPCC.scripts("client")[0]
    assert again == new_order and Path(str(again.path)).read_text() == texts[0]


def test_show_says_what_the_kit_counted_and_which_conditions_hold() -> None:
    from pglab.analysis.kit_tables import lines

    counters = {"columns": ["counter", "before", "after"],
                "rows": [["orders", 60030, 61571], ["delivery_skips", 0, 0]]}  # fmt: skip
    rows = [[n, f"condition {n}", 0] for n in range(1, 16)]
    check = {"columns": ["condition", "says", "violations"], "rows": rows}
    tables = {kit_load.COUNTERS_TABLE: counters, kit_load.CONSISTENCY_TABLE: check}
    assert lines(tables) == [
        "counted during the run: 1,541 orders written (the sum of D_NEXT_O_ID: NOPM's count), "
        "0 of Delivery's districts skipped (no undelivered order)",
        "consistency: 15 of 15 conditions hold",
    ]
    rows[12][2], rows[13][2] = 81, 81  # the client mode's stock defect, as it was
    assert lines({kit_load.CONSISTENCY_TABLE: check}) == [
        "consistency: 13 of 15 conditions hold; broken: 13 (condition 13: 81 broken); "
        "14 (condition 14: 81 broken)"
    ]
    assert lines({"progress": {"columns": [], "rows": []}}) == []


def test_deliveries_that_skip_over_one_percent_are_a_warning() -> None:
    from pglab.analysis import run_warnings

    (point,) = expand_points(parsed(BASE))
    phase = _kit_phase([[1, "W_YTD = sum(D_YTD)", 0]])
    counters = {"columns": ["counter", "before", "after"],
                "rows": [["orders", 0, 448], ["delivery_skips", 0, 6]]}  # fmt: skip
    metrics = metrics_json(
        run_metrics(point, [replace(phase, tables={kit_load.COUNTERS_TABLE: counters})])
    )
    assert metrics["delivery_skipped_pct"] == pytest.approx(1.5)  # 6 of 400 districts
    said = run_warnings._inconsistent(_row(metrics), [], {})
    assert [n.kind for n in said] == ["skipped"]
    assert "Delivery skipped 1.5% of the districts it visited (more than 1%" in said[0].message
    assert run_warnings._inconsistent(_row({**metrics, "delivery_skipped_pct": 1.0}), [], {}) == []


def _row(metrics: dict[str, float]) -> Any:
    from pglab.rows import RunRow

    return RunRow(7, "c", "k/1", "k", "base", "base", 1, "ok", 100.0, 0.0, 1.0, None, metrics)


def test_show_and_compare_judge_a_kit_s_points_alike() -> None:
    """One question, one answer (issue 52): the points of a campaign of the TPC-C-like kit are
    judged on NOPM by ``pglab show`` (``points.campaign_rows``) as by ``pglab compare``, with
    the same pairing by round: the same Δ%, CI and verdict. TPS moves the other way here, so
    a view judging TPS would say the opposite."""
    from pglab.analysis import engine, points
    from pglab.analysis.compare import Target, compare_points
    from pglab.rows import CampaignRow, RunRow

    drift = [1.0, 0.7, 1.2, 0.9]
    runs = [RunRow(len(drift) * (p == "b") + r, "c", f"{p}/{r}", p, p, p, r, "ok",
                   100.0 * (1.1 if p == "b" else 1.0), 0.0, 1.0, None,
                   metrics={"nopm": 1000.0 * d * (0.8 if p == "b" else 1.0) * (1 + r / 300)})
            for r, d in enumerate(drift, 1) for p in ("a", "b")]  # fmt: skip
    camp: CampaignRow = {"id": 1, "name": "c", "created_at": 0.0, "updated_at": 0.0,
                         "source_file": None, "pglab_version": "0", "runs_ok": 8,
                         "runs_failed": 0, "last_run_at": None,
                         "spec": {"name": "c", "repeats": 4, "variants": {"a": {}, "b": {}}}}  # type: ignore[typeddict-item]  # fmt: skip
    shown = {pt.point: pt for pt in points.campaign_rows(runs, camp)}
    assert points.figure_of(runs) == "NOPM" and shown["a"].tps_median == pytest.approx(
        statistics.median(r.metrics["nopm"] for r in runs if r.point_key == "a")
    )
    said = shown["b"].comparison
    a, b = (Target("point", p, "c", p, runs=[r for r in runs if r.point_key == p]) for p in "ab")
    compared = compare_points(a, b, how=engine.pairing(camp), campaign_runs=runs, campaign=camp)
    c = compared["pairs"][0]["comparison"]
    assert said is not None and said.verdict == c.verdict == "-"
    assert (said.delta_pct, said.ci_low, said.ci_high) == (c.delta_pct, c.ci_low, c.ci_high)
    assert said.delta_pct == pytest.approx(-20.0, abs=1.0) and said.method == c.method


def test_a_kit_s_history_follows_nopm_unless_told() -> None:
    """``pglab history`` and serve's history page follow the figure the points are judged on:
    NOPM for the TPC-C-like kit's executions, TPS for pgbench's."""
    from pglab.analysis.executions import Execution, default_figure
    from pglab.rows import RunRow

    def execution(metrics: dict[str, float]) -> Execution:
        run = RunRow(1, "n@e1", "p/1", "p", "base", "base", 1, "ok", 100.0, 0.0, 1.0, None,
                     metrics)  # fmt: skip
        return Execution("n@e1", "e1", 0.0, None, (run,))

    assert default_figure([execution({"tps": 100.0, "nopm": 2500.0})] * 2) == "nopm"
    assert default_figure([execution({"tps": 100.0})]) == "tps"
    assert default_figure([execution({"nopm": 1.0}), execution({"tps": 1.0})]) == "tps"


def test_as_root_the_kit_scripts_are_in_the_machine_s_lab(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without PGLAB_HOME, root's lab is /var/lib/pglab, shared by everyone who runs pglab as
    root: so are the kits' scripts (another user's: in their own lab)."""
    from pglab.workloads.kits.work import kits

    monkeypatch.delenv("PGLAB_HOME", raising=False)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert kits.scripts_dir() == Path("/var/lib/pglab/kit-scripts")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setenv("XDG_DATA_HOME", "/home/u/.local/share")
    assert kits.scripts_dir() == Path("/home/u/.local/share/pglab/kit-scripts")


def test_a_command_s_lab_dir_holds_the_kit_scripts_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scripts are written when a campaign file is read, before the lab is opened: in the
    lab the command names (``--lab-dir``), not the default one, and only while it runs."""
    from pglab.cli import ls, main
    from pglab.workloads.kits.work import kits

    monkeypatch.setenv("PGLAB_HOME", str(tmp_path / "default"))
    written: list[Path] = []

    def reads_a_campaign(*args: object, **kwargs: object) -> int:
        written.extend(Path(str(s.path)) for s in TPCC.scripts("client"))
        return 0

    monkeypatch.setattr(ls, "run", reads_a_campaign)
    assert main(["ls", "--lab-dir", str(tmp_path / "mine")]) == 0
    assert written and all(p.is_relative_to(tmp_path / "mine" / "kit-scripts") for p in written)
    assert kits.scripts_dir() == tmp_path / "default" / "kit-scripts"  # after it: the default
