"""What ``pglab show`` prints of a TPC-H-like campaign's queries (golden text at 100 columns,
rewritten with PGLAB_UPDATE_GOLDEN=1): each point's median seconds, the Δ% of each query's
rate with its verdict, Holm-corrected over every query's comparisons together (as ``pglab
compare`` is), the legend saying so, and the plan change named."""

from __future__ import annotations

import io
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rich.console import Console

from pglab.analysis import points
from pglab.analysis import queries as tpch
from pglab.cli import show
from pglab.rows import RunRow
from pglab.workloads.tpch import plans

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden" / "show_tpch_queries_100.txt"
# seconds of each query, per variant and round (three interleaved rounds)
SECS = {
    1: {"default": (1.00, 1.02, 0.99), "nohash": (1.30, 1.31, 1.29)},  # 23% slower
    2: {"default": (0.50, 0.51, 0.50), "nohash": (0.50, 0.50, 0.51)},  # the same
    3: {"default": (2.00, 2.06, 1.98), "nohash": (1.90, 1.93, 1.90)},  # 4% faster: p = 0.017
    4: {"default": (0.20, 0.21, 0.20), "nohash": (0.21, 0.20, 0.20)},
}
CAMPAIGN = {"spec": {"variants": {"default": {}, "nohash": {}}, "repeats": 3,
                     "order": "interleaved"}}  # fmt: skip
PLANS = {
    "default": {"Plan": {"Node Type": "Hash Join", "Plans": [{"Node Type": "Seq Scan"},
                                                            {"Node Type": "Hash"}]}},
    "nohash": {"Plan": {"Node Type": "Merge Join", "Plans": [{"Node Type": "Sort"},
                                                            {"Node Type": "Sort"}]}},
}  # fmt: skip


def runs() -> list[RunRow]:
    out = []
    for r in (1, 2, 3):
        for v in ("default", "nohash"):
            m = {f"q{n:02d}_s": SECS[n][v][r - 1] for n in SECS}
            m |= {"geomean_s": 1.0, "power": 36.0}
            out.append(RunRow(len(out) + 1, "tpch", f"{v}{r}", v, v, v, r, "ok", 36.0, 0.0, 1.0,
                              None, m))  # fmt: skip
    return out


class Stored:
    """What ``plan_changes`` reads of the store: a run's stored plans (Q1's, by variant)."""

    def __init__(self, runs: list[RunRow]) -> None:
        self.variant = {r.id: r.variant for r in runs}

    def get_run(self, run_id: int) -> Any:
        table = {"rows": [[1, PLANS[self.variant[run_id]]]]}
        return SimpleNamespace(series={"0": {plans.TABLE: table}})


def test_show_corrects_over_all_the_queries_and_says_so(monkeypatch) -> None:
    found = runs()
    together = {q.number: q.rows[1].comparison for q in tpch.query_points(found, CAMPAIGN)}
    assert all(c is not None and c.comparisons == 4 for c in together.values())
    alone = points.campaign_rows(tpch.as_rates(found, 3), CAMPAIGN)[1].comparison
    assert alone is not None and alone.verdict == "+" and alone.comparisons == 1
    assert together[3] is not None and together[3].verdict == "~"  # not once Holm counts 4
    assert together[1] is not None and together[1].verdict == "-"
    console = Console(width=100, file=io.StringIO(), record=True, highlight=False,
                      color_system=None)  # fmt: skip
    monkeypatch.setattr(show, "console", console)
    labels = {"default": "default", "nohash": "nohash"}
    show.print_queries(Stored(found), found, CAMPAIGN, labels, wide=False)  # type: ignore[arg-type]
    text = console.export_text()
    assert "verdicts Holm-corrected over all 4 comparisons of the 4 queries together" in text
    assert "nohash: hash, hash join, seq scan →" in text and "-22.8% [-24.3, -21.3] -" in text
    if os.environ.get("PGLAB_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), f"differs from {GOLDEN}: PGLAB_UPDATE_GOLDEN=1 rewrites it"
