"""A replay's statement classes compared and named (``analysis.named_items``): each class's
mean time per call a run metric of its own (``replay.class.KEY.ms``, the key the same for
``pg_stat_statements``' ``$1`` and the log's constants), compared point by point as the
headline is (paired by round, Holm over every class), the total execution time compared
beside them, the significant classes ranked and named; what ``pglab show`` prints of it
(golden text at 100 columns, rewritten with PGLAB_UPDATE_GOLDEN=1) and what ``pglab compare``
gives of two points of other campaigns (Welch)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rich.console import Console

from pglab.analysis import named_items, points
from pglab.cli import show
from pglab.metric_units import MetricKey
from pglab.records import PgbenchReport, PhaseResult
from pglab.rows import RunRow
from pglab.workloads.replay import metrics
from pglab.workloads.replay.classes import class_of, key_of
from pglab.workloads.replay.phase import CLASSES_COLUMNS, CLASSES_TABLE

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden" / "show_replay_classes_100.txt"
UPDATE = "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"
SELECT = "SELECT abalance FROM pgbench_accounts WHERE aid = $1"
INSERT = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, $5)"
TELLERS = "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2"
# each class's mean ms per call by variant and round (three interleaved rounds): the
# accounts' statements seq scans without their index, the tellers' a little faster
MS = {
    UPDATE: {"index": (0.050, 0.052, 0.049), "noindex": (5.10, 5.30, 5.00)},
    SELECT: {"index": (0.030, 0.031, 0.030), "noindex": (4.00, 4.20, 3.90)},
    INSERT: {"index": (0.020, 0.021, 0.020), "noindex": (0.021, 0.020, 0.020)},
    TELLERS: {"index": (0.100, 0.102, 0.101), "noindex": (0.080, 0.081, 0.080)},
    "BEGIN": {"index": (0.0020, 0.0021, 0.0020), "noindex": (0.0020, 0.0020, 0.0021)},
}
CALLS = 270
CAMPAIGN = {"spec": {"variants": {"index": {}, "noindex": {}}, "repeats": 3,
                     "order": "interleaved"}}  # fmt: skip


def runs(
    campaign: str = "replay", variants: tuple[str, ...] = ("index", "noindex")
) -> list[RunRow]:
    out = []
    for r in (1, 2, 3):
        for v in variants:
            m = {metrics.CLASS_METRIC.format(key_of(q)): MS[q][v][r - 1] for q in MS}
            m["replay.exec_ms"] = CALLS * sum(MS[q][v][r - 1] for q in MS)
            out.append(RunRow(len(out) + 1, campaign, f"{v}{r}", v, v, v, r, "ok", 500.0, 0.0,
                              1.0, None, m))  # fmt: skip
    return out


class Stored:
    """What ``named_items.texts`` reads of the store: a run's classes table."""

    def get_run(self, run_id: int, skip_kinds: Any = ()) -> Any:
        rows = [[key_of(q), q, CALLS, 0.0, 0.0] for q in MS]
        table = {"columns": CLASSES_COLUMNS, "rows": rows}
        return SimpleNamespace(series={"0": {CLASSES_TABLE: table}})


def test_a_class_is_the_same_key_from_the_log_and_from_pg_stat_statements() -> None:
    logged = "UPDATE pgbench_accounts SET abalance = abalance + -4211 WHERE aid = 8157;"
    assert class_of(logged) == class_of(UPDATE)
    assert key_of(logged) == key_of(UPDATE) != key_of(SELECT)
    assert len(key_of(UPDATE)) == 12


def test_each_class_is_a_run_metric_over_the_measured_phases() -> None:
    def phase(measured: bool, rows: list[list[Any]]) -> PhaseResult:
        table = {"columns": CLASSES_COLUMNS, "rows": rows}
        return PhaseResult("main", 0, measured, 0.0, 1.0, (), PgbenchReport(1.0, 1),
                           tables={CLASSES_TABLE: table})  # fmt: skip

    k = key_of(UPDATE)
    found = metrics.class_latencies(
        [
            phase(True, [[k, UPDATE, 100, 10.0, 0.1]]),
            phase(True, [[k, UPDATE, 300, 60.0, 0.2]]),  # over both: 70 ms / 400 calls
            phase(False, [[k, UPDATE, 100, 900.0, 9.0]]),  # a warm-up: left out
        ]
    )
    assert found == {MetricKey(f"replay.class.{k}.ms"): 70.0 / 400}
    # the views' derived columns leave them out: their own table
    assert points.derived_names(runs()) == ["replay.exec_ms"]


def test_the_significant_classes_are_ranked_and_named() -> None:
    found = named_items.campaign_items(Stored(), runs(), CAMPAIGN)  # type: ignore[arg-type]
    assert found is not None and [p.point for p in found.points] == ["noindex"]
    p = found.points[0]
    assert p.compared == len(MS) and all(c.comparisons == len(MS) for c in p.every)
    assert [m["item"] for m in p.slower] == [SELECT, UPDATE]  # +13,000% before +10,000%
    assert [m["item"] for m in p.faster] == [TELLERS]
    assert p.total is not None and p.total.verdict == "+" and p.total.delta_pct > 1000
    said = named_items.said(p, found.named, "noindex", "index")
    assert said.startswith("on noindex (against index) your workload's statements take +")
    assert said.endswith("in total; 2 statement classes of 5 got slower, 1 faster")


def test_show_prints_the_sentence_and_the_classes(monkeypatch) -> None:
    console = Console(width=100, file=io.StringIO(), record=True, highlight=False,
                      color_system=None)  # fmt: skip
    monkeypatch.setattr(show, "console", console)
    monkeypatch.setattr("pglab.cli.items_view.console", console)
    labels = {"index": "index", "noindex": "noindex"}
    show.print_named(Stored(), runs(), CAMPAIGN, labels)  # type: ignore[arg-type]
    text = console.export_text()
    assert "  slower +" in text and "  faster -" in text
    assert "Holm-corrected over all 5 comparisons of the 5 statement classes together" in text
    if os.environ.get("PGLAB_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), f"differs from {GOLDEN}: PGLAB_UPDATE_GOLDEN=1 rewrites it"


def test_compare_of_two_campaigns_points_asks_the_engine_apart() -> None:
    a, b = runs("one", ("index",)), runs("two", ("noindex",))
    found = named_items.compare_items(Stored(), a, b, 10.0)  # type: ignore[arg-type]
    assert found is not None and found["compared"] == len(MS)
    assert [m["item"] for m in found["slower"]] == [SELECT, UPDATE]
    assert found["total"] is not None and found["total"].method == "welch"
    assert found["slower"][1]["a"] == 0.050 and found["slower"][1]["b"] == 5.10
    assert "Welch" in found["legend"]
