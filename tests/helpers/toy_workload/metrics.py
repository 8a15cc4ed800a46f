"""The toy kind's run metric: the counts its measured phases made."""

from __future__ import annotations

from helpers.toy_workload.runner import TABLE
from pglab.campaign.spec import RunSpec
from pglab.metric_units import MetricKey
from pglab.records import PhaseResult


def toy_metrics(run: RunSpec, phases: list[PhaseResult]) -> dict[MetricKey, float]:
    del run
    tables = [t for ph in phases if ph.measured and (t := ph.tables.get(TABLE))]
    counts = float(sum(t["rows"][0][0] for t in tables))
    return {MetricKey("toy_counts"): counts} if tables else {}
