"""The figures of terminals that think (kit = "tpcc" with ``pacing``), over a run's measured
phases: each transaction type's 90th percentile response time (``rt90_TYPE_ms``, the mean
over the phases' iterations), how many types passed clause 5.2.5.3's limit in any of them
(``rt_over_limit``), and the most New-Orders per minute the terminals could commit
(``nopm_bound``: ``kits/pacing.nopm_bound`` at the run's warehouses and think time), beside
which the run's ``nopm`` is read. Pure functions on the run's tables."""

from __future__ import annotations

import statistics

from pglab.campaign.spec import RunSpec
from pglab.metric_units import MetricKey
from pglab.pgbench import responses
from pglab.records import PhaseResult
from pglab.workloads.kits.work import KitWork, pacing


def pacing_metrics(run: RunSpec, phases: list[PhaseResult]) -> dict[MetricKey, float]:
    paced = next(
        (ph.work for ph in run.phases if isinstance(ph.work, KitWork) and ph.work.pacing), None
    )
    if paced is None:
        return {}
    tables = [t for ph in phases if ph.measured and (t := ph.tables.get(responses.TABLE))]
    out: dict[MetricKey, float] = {}
    bound = pacing.nopm_bound(float(run.dataset.scale), paced.think_time)
    if bound is not None:
        out[MetricKey("nopm_bound")] = bound
    if not tables:
        return out
    p90s: dict[str, list[float]] = {}
    for table in tables:
        for row in table["rows"]:
            got = dict(zip(table["columns"], row, strict=True))
            if got["p90_ms"] is not None:
                p90s.setdefault(str(got["type"]), []).append(float(got["p90_ms"]))
    for kind, values in p90s.items():
        out[MetricKey(f"rt90_{kind}_ms")] = statistics.fmean(values)
    out[MetricKey("rt_over_limit")] = float(max(len(responses.over_limit(t)) for t in tables))
    return out
