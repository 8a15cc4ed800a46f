"""A run's figures, computed as it is stored: per-phase TPS and latency (mean over a phase's
iterations), the run's TPS over its measured phases, the steady-state TPS and the trend of each
long enough phase (``stats/steady``: MSER-5 and the linear drift), and ``[[derived]]`` phase
ratios; each kind's own figures by its plug-in (``workloads.metrics_functions``: MB/s, NOPM,
QphH...). Pure functions on plain numbers."""

from __future__ import annotations

import statistics

from pglab.campaign.spec import RunSpec
from pglab.metric_units import MetricKey
from pglab.records import PhaseResult, RunMetrics
from pglab.stats.steady import drift, steady_start
from pglab.workloads import metrics_functions


def run_metrics(run: RunSpec, phases: list[PhaseResult]) -> RunMetrics:
    """TPS and latency per phase (mean over its iterations), the run's TPS (of the phases whose
    figure is one: an operation's MB/s, a TPC-H-like QphH are their kind's metrics, ``mb_s``,
    ``power``), derived metrics (ratios of the phases' figures, whatever they are): in that
    order, the order they are stored in."""
    metrics: dict[MetricKey, float] = {}
    by_name: dict[str, list[PhaseResult]] = {}
    for ph in phases:
        by_name.setdefault(ph.name, []).append(ph)
    steady: dict[int, float] = {}  # id(phase result) -> its steady-state TPS
    for ph in phases:
        series = [s.tps for s in ph.progress]
        if len(series) >= 20:  # MSER needs a few batches of 5 s to tell warm-up from noise
            start = steady_start(series)
            steady[id(ph)] = statistics.fmean(series[start:])
    headline: dict[str, float] = {}  # each phase's figure (TPS, MB/s, QphH...): [[derived]]'s
    for name, items in by_name.items():
        headline[name] = statistics.fmean(p.report.tps for p in items)
        if all(p.report.figure == "tps" for p in items):  # another figure: its kind's metrics
            metrics[MetricKey("tps", name)] = headline[name]
        with_steady = [steady[id(p)] for p in items if id(p) in steady]
        if with_steady:
            # per-second TPS after the warm-up MSER-5 detects, and the trend over the phase
            metrics[MetricKey("tps_steady", name)] = statistics.fmean(with_steady)
            trend = drift([s.tps for s in items[-1].progress])
            if trend is not None:
                metrics[MetricKey("drift_pct", name)] = trend.change_pct
        lats = [p.report.latency_avg_ms for p in items if p.report.latency_avg_ms is not None]
        if lats:
            metrics[MetricKey("latency_avg_ms", name)] = statistics.fmean(lats)
    metrics.update(_measured(phases, steady))
    for kind_metrics in metrics_functions():  # each kind's own, in the registry's order
        metrics.update(kind_metrics(run, phases))
    for d in run.derived:
        a, b = headline.get(d.a), headline.get(d.b)
        if a and b is not None:
            metrics[MetricKey(d.name)] = (a - b) / a if d.kind == "decrease" else b / a
    return RunMetrics(metrics)


def _measured(phases: list[PhaseResult], steady: dict[int, float]) -> dict[MetricKey, float]:
    """The run's own figures over its measured phases: TPS (of the phases whose figure is one),
    latency, failures, the steady-state TPS."""
    metrics: dict[MetricKey, float] = {}
    measured = [p for p in phases if p.measured]
    if measured:
        rates = [p.report.tps for p in measured if p.report.figure == "tps"]
        if rates:  # MB/s, QphH...: not a TPS, in their kind's metrics under their own names
            metrics[MetricKey("tps")] = statistics.fmean(rates)
        lats = [p.report.latency_avg_ms for p in measured if p.report.latency_avg_ms is not None]
        if lats:
            metrics[MetricKey("latency_avg_ms")] = statistics.fmean(lats)
        metrics[MetricKey("failed")] = float(sum(p.report.failed or 0 for p in measured))
        if all(id(p) in steady for p in measured):
            metrics[MetricKey("tps_steady")] = statistics.fmean(steady[id(p)] for p in measured)
    return metrics
