"""The TPC-H-like kit's figures of a run (computed as it is stored)."""

from __future__ import annotations

import statistics

from pglab.campaign.spec import RunSpec
from pglab.metric_units import MetricKey
from pglab.records import PhaseResult
from pglab.workloads.tpch import power, throughput


def tpch_metrics(run: RunSpec, phases: list[PhaseResult]) -> dict[MetricKey, float]:
    """The TPC-H-like power run's figures over the measured phases that ran it (mean over
    them): each query's seconds (``q01_s``...; a throughput run's: the mean over its streams),
    their geometric mean (``geomean_s``), the QphH-like power (3600 × SF / geometric mean: the
    run's ``tps``) or a throughput run's QthH-like ``throughput`` (its ``tps``), and the queries
    that timed out (``timeouts``, at their limit in the figures)."""
    runs = [
        [power.QueryTime(int(r[0]), float(r[1]), r[2], bool(r[3])) for r in table["rows"]]
        for ph in phases
        if ph.measured and (table := ph.tables.get(power.TABLE)) and table["rows"]
    ]
    streamed = [ph for ph in phases if ph.measured and ph.tables.get(throughput.TABLE)]
    runs += [throughput.per_query(ph.tables[throughput.TABLE]["rows"]) for ph in streamed]
    if not runs:
        return {}
    scale = float(run.dataset.scale)
    figs = [power.figures(times, scale) for times in runs]
    out = {MetricKey(k): statistics.fmean(f[k] for f in figs if k in f) for k in figs[0]}
    out[MetricKey("timeouts")] = max(f["timeouts"] for f in figs)
    if streamed:  # the throughput run's figure (QthH-like) in place of the power figure
        out[MetricKey("throughput")] = statistics.fmean(ph.report.tps for ph in streamed)
        del out[MetricKey("power")]
    return out
