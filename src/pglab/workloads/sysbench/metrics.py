"""sysbench's figures of a run beside its TPS (computed as it is stored)."""

from __future__ import annotations

import statistics

from pglab.campaign.spec import RunSpec
from pglab.metric_units import MetricKey
from pglab.records import PhaseResult
from pglab.workloads.sysbench.invoke import REPORT_TABLE as SYSBENCH_REPORT


def sysbench_metrics(run: RunSpec, phases: list[PhaseResult]) -> dict[MetricKey, float]:
    """sysbench's own figures beside its TPS, over the measured phases that ran it: queries per
    second, and the errors it ignored (and retried) and reconnects, per second."""
    del run  # its figures are in its phases' tables
    rows = [
        dict(zip(table["columns"], table["rows"][0], strict=True))
        for ph in phases
        if ph.measured and (table := ph.tables.get(SYSBENCH_REPORT)) and table["rows"]
    ]
    if not rows:
        return {}
    return {
        MetricKey("qps"): statistics.fmean(r["qps"] for r in rows),
        MetricKey("errors_s"): statistics.fmean(r["errors_s"] for r in rows),
        MetricKey("reconnects_s"): statistics.fmean(r["reconnects_s"] for r in rows),
    }
