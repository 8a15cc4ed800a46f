"""A workload kit's own tables of a phase, in words for ``pglab show RUN``: what it counted
during the pgbench run (``workloads/kits/load.COUNTERS_TABLE``: TPC-C's orders written and
Delivery's skipped districts; TPC-E's trades completed and its queues) and its consistency
conditions after it (``workloads/kits/load.CONSISTENCY_TABLE``)."""

from __future__ import annotations

from collections.abc import Mapping

from pglab.records import TableJson
from pglab.workloads.kits import load as kit_load

COUNTED = {  # a counter's name -> what its increase is, said after the number
    "orders": "orders written (the sum of D_NEXT_O_ID: NOPM's count)",
    "delivery_skips": "of Delivery's districts skipped (no undelivered order)",
    "trades": "trades completed (the sum of B_NUM_TRADES: tpsE's count)",
    "results_idle": "Trade-Results that found the market's queue empty",
    "trade_ids": "trade ids taken (Trade-Orders, rolled back ones too)",
    "submitted": "more trades waiting in the market's queue",
    "pending": "more limit orders pending",
}


def lines(tables: Mapping[str, TableJson]) -> list[str]:
    """``counted during the run: 1,541 orders written …`` and ``consistency: 15 of 15
    conditions hold`` (or the broken ones, with their counts); nothing for other phases."""
    out = []
    counters = tables.get(kit_load.COUNTERS_TABLE)
    if counters and counters["rows"]:
        said = [
            f"{int(r[2]) - int(r[1]):,} {COUNTED.get(str(r[0]), str(r[0]))}"
            for r in counters["rows"]
        ]
        out.append("counted during the run: " + ", ".join(said))
    check = tables.get(kit_load.CONSISTENCY_TABLE)
    if check and check["rows"]:
        broken = kit_load.broken(check)
        held = len(check["rows"]) - len(broken)
        out.append(
            f"consistency: {held} of {len(check['rows'])} conditions hold"
            + (f"; broken: {'; '.join(broken)}" if broken else "")
        )
    return out
