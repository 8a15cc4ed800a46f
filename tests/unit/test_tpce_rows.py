"""The TPC-E-like kit's generator (``workloads/tpce/rows.py``) as pure functions: the same rows
for the same unit and scale, the specification's ratios per load unit, what the SQL of the
transactions computes the same way (symbols, industries, business days), and its initial
trades already consistent (holdings their trades, balances their cash settlements)."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from helpers.campaign_text import parsed

from pglab.errors import CampaignError
from pglab.planning.plan import expand_points
from pglab.records import PgbenchReport, PhaseResult, ScriptReport
from pglab.run.metrics import run_metrics
from pglab.store.numbers import metrics_json
from pglab.tune import spec as tune_spec
from pglab.workloads.kits import load as kit_load
from pglab.workloads.kits.work.kits import TPCE, defines
from pglab.workloads.tpce import fixed as tpce_fixed
from pglab.workloads.tpce import rows as tpce_rows
from pglab.workloads.tpce.rows import Unit


def test_the_mix_is_the_specifications_per_10000() -> None:
    mix = dict(TPCE.mix) if isinstance(TPCE.mix, tuple) else {}
    assert sum(mix.values()) == 10_000
    # clause 6.2.2's percentages; Trade-Order's 10.1% of which 1% rolls back
    assert mix["trade_order"] + mix["trade_order_rollback"] == 1010
    assert (mix["trade_result"], mix["trade_status"], mix["market_watch"]) == (1000, 1900, 1800)
    assert defines("tpce", 2000) == (("customers", "2000"),)


def test_the_sql_functions_say_what_the_generator_does() -> None:
    """procedures.sql's tpce_day, tpce_symbol and tpce_industry, read from the file, agree
    with the generator's business days, symbols and industries."""
    sql = TPCE.sql("procedures")
    day = re.search(r"SELECT DATE '(\d+-\d+-\d+)' \+ k \+ 2 \* \(\(k \+ (\d)\) / 5\)", sql)
    assert day is not None
    days = tpce_rows.weekdays(tpce_rows.END.date(), tpce_rows.DM_DAYS)
    assert str(days[0]) == day.group(1) and days[0].weekday() == int(day.group(2))
    start, offset = days[0], int(day.group(2))
    for k, expected in enumerate(days):
        assert (start.toordinal() + k + 2 * ((k + offset) // 5)) == expected.toordinal()
    assert "'SYMB' || lpad(n::text, 6, '0')" in sql and tpce_rows.symbol(42) == "SYMB000042"
    assert "chr(65 + n / 26) || chr(65 + n % 26)" in sql and tpce_rows.industry_id(27) == "BB"


def test_a_unit_has_the_specifications_ratios_and_is_deterministic() -> None:
    unit = Unit(2, 3000)
    rows = {name: list(table) for name, table in unit.tables()}
    assert len(rows["customer"]) == 1000 and rows["customer"][0][0] == 1001
    assert len(rows["customer_account"]) == 5000 and len(rows["broker"]) == 10
    assert len(rows["company"]) == 500 and len(rows["security"]) == 685
    assert rows["security"][0][0] == "SYMB000686"
    assert len(rows["daily_market"]) == 685 * tpce_rows.DM_DAYS
    assert 50 <= len(rows["watch_item"]) / 1000 <= 150
    assert rows == {name: list(table) for name, table in Unit(2, 3000).tables()}
    fixed = tpce_fixed.fixed_tables()
    assert len(fixed["commission_rate"]) == 240 and len(fixed["charge"]) == 15
    assert len(fixed["industry"]) == 102 and len(fixed["sector"]) == 12


def test_the_initial_trades_are_consistent() -> None:
    unit = Unit(1, 1000)
    rows = {name: list(table) for name, table in unit.tables()}
    done = [t for t in unit.trades() if t.status == "CMPT"]
    assert len(done) == 5000 * tpce_rows.TRADES_PER_ACCOUNT
    held: dict[tuple[object, object], int] = {}
    for h in rows["holding"]:
        held[h[1], h[2]] = held.get((h[1], h[2]), 0) + int(h[5])  # type: ignore[call-overload]
    assert held == {(r[0], r[1]): r[2] for r in rows["holding_summary"]}
    cash: dict[int, Decimal] = {}
    for t in done:
        if t.cash:
            cash[t.ca_id] = cash.get(t.ca_id, Decimal(0)) + t.amount
    assert all(r[5] == cash.get(r[0], Decimal(0)) for r in rows["customer_account"])  # type: ignore[call-overload]
    assert sum(r[3] for r in rows["broker"]) == len(done)  # type: ignore[misc]
    open_orders = {r[0] for r in rows["trade_request"]} | {r[0] for r in rows["tpce_submitted"]}
    assert len(open_orders) == 500 and not open_orders & {t.t_id for t in done}


def test_tpse_is_the_trades_completed_over_pgbenchs_measured_time() -> None:
    """With the kit's counters, tpsE-like is the brokers' count of trades completed over
    pgbench's measured time (2,000 transactions at 200 TPS: 10 s); pgbench's Trade-Result TPS
    is kept beside it, and the empty-queue Trade-Results are a share of Trade-Result's."""
    (point,) = expand_points(parsed('name = "k"\n[dataset]\nscale = 1000\n[workload]\n'
                                    'kit = "tpce"\n'))  # fmt: skip
    scripts = tuple(
        ScriptReport(number=i, name=f"/x/tpce/procedures/{stem}.sql", weight=w, target_pct=None,
                     transactions=w // 5, counted=w // 5, share_pct=None, tps=w / 50)
        for i, (stem, w) in enumerate(TPCE.mix if isinstance(TPCE.mix, tuple) else ())
    )  # fmt: skip
    report = PgbenchReport(tps=200.0, transactions=2000, scripts=scripts)
    counters = {"columns": ["counter", "before", "after"],
                "rows": [["trades", 100_000, 100_195], ["results_idle", 0, 5]]}  # fmt: skip
    check = {"columns": ["condition", "says", "violations"], "rows": [[1, "a", 0], [2, "b", 0]]}
    phase = PhaseResult("main", 1, True, 0.0, 10.0, (), report,
                        tables={kit_load.COUNTERS_TABLE: counters,
                                kit_load.CONSISTENCY_TABLE: check})  # fmt: skip
    metrics = metrics_json(run_metrics(point, [phase]))
    assert metrics["tpse"] == pytest.approx(19.5) and metrics["tpse_pgbench"] == 20.0
    assert metrics["results_idle_pct"] == pytest.approx(100 * 5 / 200)
    assert metrics["rollback_pct"] == pytest.approx(100 * 2 / 202)
    assert metrics["inconsistent"] == 0 and "nopm" not in metrics


def test_the_tune_objective_tpse_needs_the_kit(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\n[workload]\nscript = "tpcb-like"\n[tune]\nobjective = "tpse"\n')
    with pytest.raises(CampaignError, match='phases run no kit = "tpce"'):
        tune_spec.load(path)
    path.write_text('name = "t"\n[dataset]\nscale = 1000\n[workload]\nkit = "tpce"\n'
                    '[tune]\nobjective = "tpse"\n')  # fmt: skip
    spec = tune_spec.load(path)[1]
    assert spec.objective == "tpse" and spec.direction == "maximize"
    assert tune_spec.objective_value("tpse", 900.0, {"tpse": 91.5}) == 91.5
