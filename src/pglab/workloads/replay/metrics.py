"""A captured workload's replay: its figures of a run (computed as it is stored)."""

from __future__ import annotations

import statistics

from pglab.campaign.spec import RunSpec
from pglab.metric_units import MetricKey
from pglab.records import PhaseResult

# the phase table of a replay's figures (written by ``phase``; named here, so that the
# registry reads a replay's figures without importing what runs one)
SUMMARY_TABLE = "replay.summary"
REPLAY_SUMMARY = SUMMARY_TABLE
CLASSES_TABLE = "replay.classes"  # the statement classes by total time (``phase``)

# a replay's figures (SUMMARY_TABLE), per phase and over the measured phases
REPLAY_FIGURES = (
    "replay_s",
    "lag_s",
    "statements_s",
    "errors",
    "exec_ms",
    "active_ms",
    "divergence_pct",
    "marked",
)
# the run's own (pglab show's columns): the total execution time, the active time a
# commit's flush shows in, the lag, the divergence, the replay's own statements/s
REPLAY_HEADLINE = ("exec_ms", "active_ms", "lag_s", "divergence_pct", "statements_s")
# each statement class's mean time per call over the measured phases (ms), by its key
# (classes.key_of): the items of the replay's figure, compared as it is
CLASS_METRIC = "replay.class.{}.ms"
# the run's figure: statements per second of the sessions' active time (each phase report's)
FIGURE = "replay.statements_active_s"


def replay_metrics(run: RunSpec, phases: list[PhaseResult]) -> dict[MetricKey, float]:
    """A captured workload's replay: per phase (mean over its iterations) and over the
    measured phases, ``replay.*``: its time, its lag behind the captured window, statements
    per second, errors, the total execution time of its statements (pg_stat_statements) and
    the sessions' active time (pg_stat_database), the divergence (% of the statements) and
    whether it passed the threshold (1: the replay's timing is not comparable); the run's
    figure, statements per second of active time (``FIGURE``, its phases' reports' figure); and
    each statement class's mean time per call (``class_latencies``)."""
    del run  # its figures are in its phases' tables
    by_name: dict[str, list[dict[str, float]]] = {}
    measured: list[dict[str, float]] = []
    rates: list[float] = []  # the measured phases' statements per active second
    for ph in phases:
        table = ph.tables.get(REPLAY_SUMMARY)
        if not table or not table["rows"]:
            continue
        row = dict(zip(table["columns"], table["rows"][0], strict=True))
        figs = {k: float(row[k]) for k in REPLAY_FIGURES}
        by_name.setdefault(ph.name, []).append(figs)
        if ph.measured:
            measured.append(figs)
            rates.append(ph.report.tps)
    out: dict[MetricKey, float] = {}
    for name, items in by_name.items():
        for key in REPLAY_FIGURES:
            out[MetricKey(f"replay.{key}", name)] = statistics.fmean(f[key] for f in items)
    for key in REPLAY_HEADLINE if measured else ():
        out[MetricKey(f"replay.{key}")] = statistics.fmean(f[key] for f in measured)
    if rates:
        out[MetricKey(FIGURE)] = statistics.fmean(rates)
    out.update(class_latencies(phases))
    return out


def class_latencies(phases: list[PhaseResult]) -> dict[MetricKey, float]:
    """Each statement class's mean time per call over the measured phases (their total time
    over their calls), ``replay.class.KEY.ms``."""
    spent: dict[str, list[float]] = {}
    for ph in phases:
        table = ph.tables.get(CLASSES_TABLE)
        if not ph.measured or not table or "class" not in table["columns"]:
            continue
        for row in table["rows"]:
            r = dict(zip(table["columns"], row, strict=True))
            seen = spent.setdefault(str(r["class"]), [0.0, 0.0])
            seen[0] += float(r["total_ms"])
            seen[1] += float(r["calls"])
    return {
        MetricKey(CLASS_METRIC.format(k)): ms / calls
        for k, (ms, calls) in spent.items()
        if calls > 0
    }
