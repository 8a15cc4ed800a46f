"""``kit = "tpch"`` as the campaign file says it: a fractional scale factor as the dataset's
scale, ``queries`` and ``query_timeout`` checked before anything runs (each problem named),
the dataset's size and the plan's ETA, the run's figures from the power run's table, and
tpchgen-cli missing said by preflight before anything is made."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from helpers.campaign_text import parsed, refused

from pglab.analysis import points
from pglab.analysis import queries as analysis
from pglab.errors import CampaignError, LabError
from pglab.lab import Lab
from pglab.planning import preflight
from pglab.planning.plan import expand_points, make_plan
from pglab.records import PgbenchReport, PhaseResult
from pglab.rows import RunRow
from pglab.run.metrics import run_metrics
from pglab.store.numbers import metrics_json
from pglab.tune import confirm
from pglab.tune import spec as tune_spec
from pglab.workloads import described, estimated_size
from pglab.workloads.tpch import load as tpch_load
from pglab.workloads.tpch import power, throughput
from pglab.workloads.tpch.work.queries import QUERIES

BASE = """
name = "h"
[dataset]
scale = 0.01
[workload]
kit = "tpch"
"""


def test_a_fractional_scale_factor_is_the_datasets_scale() -> None:
    camp = parsed(BASE + "queries = [9, 1]\nquery_timeout = 30\n")
    (point,) = expand_points(camp)
    (ph,) = point.phases
    w = ph.work
    assert (w.kit, w.mode, ph.pgbench.scripts, w.queries, w.query_timeout) == (
        "tpch", "power", (), (9, 1), 30.0)  # fmt: skip
    assert (point.dataset.kit, point.dataset.scale) == ("tpch", 0.01)
    assert dict(ph.pgbench.defines) == {"scale factor": "0.01"}
    assert described(point.dataset) == "tpch, scale factor 0.01"
    size = estimated_size(point.dataset)
    assert 16 * 2**20 < size.total < 200 * 2**20 and not size.measured


def test_a_whole_scale_factor_reads_the_same_as_its_integer() -> None:
    one = expand_points(parsed(BASE.replace("0.01", "1.0")))[0]
    assert one.dataset.scale == 1 and isinstance(one.dataset.scale, int)
    assert one.point_key == expand_points(parsed(BASE.replace("0.01", "1")))[0].point_key


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ("queries = [1, 23]", "queries = [1, 23]: expected distinct TPC-H query numbers, 1 to 22"),
        ("queries = [0]", "queries = [0]: expected distinct TPC-H"),
        ("queries = [3, 3]", "expected distinct TPC-H query numbers, 1 to 22"),
        ("queries = []", "expected distinct TPC-H query numbers"),
        ('queries = "all"', "queries = 'all'"),
        ("query_timeout = 0", "query_timeout = 0: expected seconds > 0"),
    ],
)
def test_bad_tpch_options_are_named(extra: str, said: str) -> None:
    assert said in refused(BASE + extra + "\n")


def test_scale_factor_out_of_range_and_fractions_elsewhere() -> None:
    assert "kit 'tpch' has scale factor as its scale, at most 1,000" in refused(
        BASE.replace("0.01", "2000"))  # fmt: skip
    said = 'scale = 0.001: expected a whole number from 1 to 1000000 (or kit = "tpch"\'s'
    assert said + " scale factor, 0.01 to 1000)" in refused(BASE.replace("0.01", "0.001"))
    pgbench = 'name = "p"\n[dataset]\nscale = 0.5\n'
    assert 'a fraction is a scale factor of kit = "tpch"' in refused(pgbench)
    tpcc = BASE.replace('"tpch"', '"tpcc"')
    assert "kit 'tpcc' has warehouses as its scale, at least 1" in refused(tpcc)


def test_tpch_options_on_another_workload_are_refused() -> None:
    said = refused('name = "p"\n[workload]\nbuiltin = "select-only"\nqueries = [1]\n'
                   .replace('builtin = "select-only"', 'script = "select-only"'))  # fmt: skip
    assert 'queries: options of kit = "tpch", but this phase runs no TPC-H' in said


def test_the_plan_eta_counts_the_load_and_the_queries() -> None:
    plan = make_plan(parsed(BASE.replace("0.01", "1") + "query_timeout = 2\n"))
    (run,) = plan.runs
    # 22 queries at most 2 s each, twice (the plans' run too)
    assert run.estimated_seconds() == pytest.approx(2 * 22 * 2 + 2)
    assert plan.estimated_seconds() > 120  # the load of SF 1


def test_tpchgen_cli_missing_is_said_before_anything_runs(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(tpch_load.sys, "executable", str(tmp_path / "python"))
    with pytest.raises(LabError) as err:
        preflight.preflight(parsed(BASE), cast(Lab, None))  # nothing of the lab is used first
    assert "needs tpchgen-cli" in str(err.value) and "pglab[tpch]" in (err.value.hint or "")


def _phase(times: list[tuple[int, float, bool]]) -> PhaseResult:
    rows = [[n, s, None if out else 1, out, 1] for n, s, out in times]
    table = {"columns": ["query", "seconds", "rows", "timed_out", "seed"], "rows": rows}
    return PhaseResult("run", 1, True, 0.0, 1.0, ("tpch",), PgbenchReport(tps=1.0,
                       transactions=len(rows)), tables={power.TABLE: table})  # fmt: skip


def test_the_runs_figures_come_from_the_power_runs_table() -> None:
    (point,) = expand_points(parsed(BASE))
    m = metrics_json(
        run_metrics(point, [_phase([(1, 0.5, False), (2, 2.0, False), (3, 4.0, True)])])
    )
    assert (m["q01_s"], m["q02_s"], m["q03_s"]) == (0.5, 2.0, 4.0)
    assert m["geomean_s"] == pytest.approx(1.5874, rel=1e-4)  # (0.5 × 2 × 4)^(1/3)
    assert m["power"] == pytest.approx(3600 * 0.01 / m["geomean_s"]) and m["timeouts"] == 1


def _run(label: str, variant: str, repeat: int, secs: float) -> RunRow:
    metrics = {"q01_s": secs, "q02_s": 1.0, "geomean_s": secs, "power": 1 / secs}
    return RunRow(repeat, "h", f"{label}{repeat}", label, variant, label, repeat, "ok",
                  1 / secs, 0.0, 1.0, None, metrics)  # fmt: skip


def test_each_query_is_compared_on_its_rate() -> None:
    runs = [_run(lb, lb, i, s * (1 + i / 100)) for i in (1, 2, 3) for lb, s in
            (("a", 1.0), ("b", 2.0))]  # fmt: skip
    camp = {"spec": {"variants": {"a": {}, "b": {}}, "repeats": 3}}
    assert points.figure_of(runs) == "QphH"
    assert points.derived_names(runs) == ["geomean_s"]
    q1, q2 = analysis.query_points(runs, camp)
    assert (q1.number, q2.number) == (1, 2)
    assert q1.seconds["b"] == pytest.approx(2.04)
    b = next(r for r in q1.rows if r.point == "b")
    assert b.comparison is not None and b.comparison.delta_pct == pytest.approx(-50, abs=0.5)


def test_the_tune_objective_geomean_needs_tpch_and_is_minimised(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\n[workload]\nscript = "tpcb-like"\n[tune]\nobjective = "geomean"\n')
    with pytest.raises(CampaignError, match='phases run no kit = "tpch"'):
        tune_spec.load(path)
    path.write_text(BASE + '[tune]\nobjective = "geomean"\n')
    spec = tune_spec.load(path)[1]
    assert (spec.objective, spec.direction) == ("geomean", "minimize")
    assert tune_spec.objective_value("geomean", 900.0, {"geomean_s": 0.4}) == 0.4
    # lower is better: the faster candidate wins
    base = [1.00, 1.01, 0.99, 1.00, 1.02, 0.98]
    won = confirm.decide("geomean", {"default": base, "fast": [v * 0.8 for v in base]})
    assert won.winner == "fast" and "geometric mean -20.0%" in won.text


def test_streams_run_their_own_orders_and_their_times_average_per_query() -> None:
    assert throughput.order_of([1, 2, 3], 7, 0) == [1, 2, 3]
    one, two = throughput.order_of(list(QUERIES), 7, 1), throughput.order_of(list(QUERIES), 7, 2)
    assert sorted(one) == sorted(two) == list(QUERIES) and one != two
    assert one == throughput.order_of(list(QUERIES), 7, 1)  # the same seed: the same order
    rows = [[0, 1, 1.0, 4, False, 7], [0, 6, 3.0, 1, False, 7],
            [1, 6, 5.0, None, True, 8], [1, 1, 2.0, 4, False, 8]]  # fmt: skip
    got = throughput.per_query(rows)
    assert [(t.number, t.seconds, t.timed_out) for t in got] == [(1, 1.5, False), (6, 4.0, True)]
    assert throughput.throughput_figure(2, 22, 3600.0, 0.1) == pytest.approx(4.4)


def test_a_throughput_phase_counts_its_streams_in_the_plan() -> None:
    camp = parsed(BASE.replace("0.01", "1") + 'mode = "throughput"\nclients = 4\n'
                  "query_timeout = 2\n")  # fmt: skip
    (run,) = make_plan(camp).runs
    (ph,) = run.phases
    assert (ph.work.mode, ph.clients) == ("throughput", 4)
    # the plans' run (22 × 2 s), then 4 streams sharing 2 CPUs: twice as long
    assert run.estimated_seconds() == pytest.approx(22 * 2 + 22 * 2 * 2 + 2)


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        ("duration = 60", "duration"),
        ("rate = 100", "rate"),
        ('protocol = "prepared"', "protocol"),
        ("transactions = 10\nthreads = 1", "transactions, threads"),
        ("progress = false", "progress"),
    ],
)
def test_pgbench_only_keys_are_refused_beside_tpch(extra: str, named: str) -> None:
    said = refused(BASE + extra + "\n")
    assert (
        f'{named} with kit = "tpch": pgbench\'s options, which a TPC-H-like phase has no use for'
        in said
        and "leave them out" in said
    )


def test_pgbench_only_keys_of_a_matrix_are_refused_beside_tpch() -> None:
    said = refused(BASE + "[matrix]\nduration = [10, 20]\n")
    assert 'duration with kit = "tpch"' in said


def test_clients_of_a_power_run_are_refused_unless_a_throughput_run_takes_them() -> None:
    said = refused(BASE + "clients = 4\n")
    assert 'clients = 4 with kit = "tpch"\'s power run: one session runs its queries' in said
    assert "clients = 2 with kit" in refused(BASE + "[matrix]\nclients = [1, 2]\n")
    parsed(BASE + 'mode = "throughput"\nclients = 4\n')  # its streams
    parsed(BASE + 'clients = 2\n[matrix]\nmode = ["power", "throughput"]\n')
    parsed(BASE + '[variants.power]\n[variants.streams.workload]\nmode = "throughput"\n'
           "clients = 2\n")  # fmt: skip
    said = refused(BASE + "[variants.one]\n[variants.two.workload]\nclients = 2\n")
    assert '[variants.two]: clients = 2 with kit = "tpch"' in said
