"""A run's figures, computed as it is stored: per-phase TPS and latency (mean over a phase's
iterations), the run's TPS over its measured phases, the steady-state TPS and the trend of each
long enough phase (``stats/steady``: MSER-5 and the linear drift), and ``[[derived]]`` phase
ratios. Pure functions on plain numbers."""

from __future__ import annotations

import statistics

from pglab.campaign.kits import KITS, script_stem
from pglab.campaign.spec import RunSpec
from pglab.maintenance.figures import OPERATION_KIND, OperationFigures, mb_per_s
from pglab.postgres.kit_load import CONSISTENCY_TABLE, COUNTERS_TABLE
from pglab.records import PhaseResult
from pglab.replay.phase import SUMMARY_TABLE as REPLAY_SUMMARY
from pglab.run.pacing_metrics import pacing_metrics
from pglab.stats.steady import drift, steady_start
from pglab.sysbench.invoke import REPORT_TABLE as SYSBENCH_REPORT
from pglab.tpch import power, throughput


def run_metrics(run: RunSpec, phases: list[PhaseResult]) -> dict[str, float]:
    """TPS and latency per phase (mean over its iterations), the run's TPS, derived metrics."""
    metrics: dict[str, float] = {}
    by_name: dict[str, list[PhaseResult]] = {}
    for ph in phases:
        by_name.setdefault(ph.name, []).append(ph)
    steady: dict[int, float] = {}  # id(phase result) -> its steady-state TPS
    for ph in phases:
        series = [s.tps for s in ph.progress]
        if len(series) >= 20:  # MSER needs a few batches of 5 s to tell warm-up from noise
            start = steady_start(series)
            steady[id(ph)] = statistics.fmean(series[start:])
    for name, items in by_name.items():
        metrics[f"phase.{name}.tps"] = statistics.fmean(p.report.tps for p in items)
        with_steady = [steady[id(p)] for p in items if id(p) in steady]
        if with_steady:
            # per-second TPS after the warm-up MSER-5 detects, and the trend over the phase
            metrics[f"phase.{name}.tps_steady"] = statistics.fmean(with_steady)
            trend = drift([s.tps for s in items[-1].progress])
            if trend is not None:
                metrics[f"phase.{name}.drift_pct"] = trend.change_pct
        lats = [p.report.latency_avg_ms for p in items if p.report.latency_avg_ms is not None]
        if lats:
            metrics[f"phase.{name}.latency_avg_ms"] = statistics.fmean(lats)
    measured = [p for p in phases if p.measured]
    if measured:
        metrics["tps"] = statistics.fmean(p.report.tps for p in measured)
        lats = [p.report.latency_avg_ms for p in measured if p.report.latency_avg_ms is not None]
        if lats:
            metrics["latency_avg_ms"] = statistics.fmean(lats)
        metrics["failed"] = float(sum(p.report.failed or 0 for p in measured))
        if all(id(p) in steady for p in measured):
            metrics["tps_steady"] = statistics.fmean(steady[id(p)] for p in measured)
    metrics.update(operation_metrics(phases))
    metrics.update(kit_metrics(run, phases))
    metrics.update(pacing_metrics(run, phases))  # terminals that think (run/pacing_metrics)
    metrics.update(sysbench_metrics(phases))
    metrics.update(replay_metrics(phases))
    metrics.update(tpch_metrics(phases, run))
    for d in run.derived:
        a, b = metrics.get(f"phase.{d.a}.tps"), metrics.get(f"phase.{d.b}.tps")
        if a and b is not None:
            metrics[d.name] = (a - b) / a if d.kind == "decrease" else b / a
    return metrics


def operation_metrics(phases: list[PhaseResult]) -> dict[str, float]:
    """A maintenance operation's figures per phase (mean over its iterations): MB/s, elapsed
    seconds, bytes, and where they apply workers launched, WAL bytes, tuples/s, the MB/s read
    that shared_buffers did not hold, the CPU of the leader and of its workers (% of a core);
    and the run's
    MB/s over its measured operations (the ``tps`` of these phases is the same MB/s: the run's
    headline figure)."""
    by_name: dict[str, list[OperationFigures]] = {}
    measured: list[OperationFigures] = []
    for ph in phases:
        if OPERATION_KIND in ph.tables:
            figs = OperationFigures.from_table(ph.tables[OPERATION_KIND])
            by_name.setdefault(ph.name, []).append(figs)
            if ph.measured:
                measured.append(figs)
    out: dict[str, float] = {}
    for name, items in by_name.items():
        out[f"phase.{name}.mb_s"] = statistics.fmean(f.mb_s for f in items)
        out[f"phase.{name}.elapsed_s"] = statistics.fmean(f.elapsed_s for f in items)
        out[f"phase.{name}.bytes"] = statistics.fmean(f.bytes for f in items)
        for key in ("workers_launched", "wal_bytes", "tuples_s"):  # where they apply
            vals = [v for f in items if (v := getattr(f, key)) is not None]
            if vals:
                out[f"phase.{name}.{key}"] = statistics.fmean(vals)
        reads = [
            mb_per_s(f.io_read_bytes, f.elapsed_s) for f in items if f.io_read_bytes is not None
        ]
        if reads:  # what it read that shared_buffers did not hold (pg_stat_io, 16+)
            out[f"phase.{name}.io_read_mb_s"] = statistics.fmean(reads)
        for who in ("leader", "workers"):  # % of a core over the operation's time
            used = [(getattr(f, f"{who}_cpu_s"), f.elapsed_s) for f in items]
            pcts = [100 * v / t for v, t in used if v is not None and t > 0]
            if pcts:
                out[f"phase.{name}.{who}_cpu_pct"] = statistics.fmean(pcts)
    if measured:
        out["mb_s"] = statistics.fmean(f.mb_s for f in measured)
    return out


def kit_metrics(run: RunSpec, phases: list[PhaseResult]) -> dict[str, float]:
    """A workload kit's figures per phase (mean over its iterations) and over the measured
    phases: the headline's committed transactions per minute (TPC-C's NOPM: the orders written
    during the pgbench run, from the kit's counters, over pgbench's measured time; from
    pgbench's per-script count where a phase has no counters, as before they existed), the same
    from pgbench's per-script count (``nopm_pgbench``: it may lose a few to pgbench's counter
    race between threads), all transactions per minute (TPM), the share of the headline's
    transactions that rolled back by design (%), the share of Delivery's districts skipped
    (``delivery_skipped_pct``), and the consistency conditions broken after the phase
    (``kit_load.CONSISTENCY_TABLE``)."""
    kit_of = {ph.name: ph.kit for ph in run.phases if ph.kit}
    by_name: dict[str, list[dict[str, float]]] = {}
    measured: list[dict[str, float]] = []
    for ph in phases:
        kit = kit_of.get(ph.name)
        if kit is None:
            continue
        figs = _tpce_figures(ph) if kit == "tpce" else _kit_figures(KITS[kit].headline, ph)
        by_name.setdefault(ph.name, []).append(figs)
        if ph.measured:
            measured.append(figs)
    out: dict[str, float] = {}
    for name, items in by_name.items():
        for key in items[0]:
            out[f"phase.{name}.{key}"] = statistics.fmean(f[key] for f in items)
    for key in measured[0] if measured else ():
        mean = statistics.fmean(f[key] for f in measured)
        out[key] = max(f[key] for f in measured) if key == "inconsistent" else mean
    return out


def _kit_figures(headline: str | None, ph: PhaseResult) -> dict[str, float]:
    by_stem = {script_stem(s.name): s for s in ph.report.scripts}
    head = by_stem.get(headline) if headline else None
    rolled = by_stem.get(f"{headline}_rollback")
    figs = {"tpm": ph.report.tps * 60} if headline else {}
    if head is not None:
        figs["nopm"] = figs["nopm_pgbench"] = (head.tps or 0.0) * 60
        tried = head.transactions + (rolled.transactions if rolled else 0)
        if tried:
            figs["rollback_pct"] = 100 * (rolled.transactions if rolled else 0) / tried
    counted = _counted(ph)
    minutes = ph.report.transactions / ph.report.tps / 60 if ph.report.tps > 0 else 0.0
    if "orders" in counted and minutes > 0:  # NOPM from the orders written
        figs["nopm"] = counted["orders"] / minutes
    delivery = by_stem.get("delivery")
    if "delivery_skips" in counted and delivery is not None and delivery.transactions:
        districts = 10 * delivery.transactions  # each Delivery delivers or skips ten
        figs["delivery_skipped_pct"] = 100 * counted["delivery_skips"] / districts
    check = ph.tables.get(CONSISTENCY_TABLE)
    if check is not None:
        figs["inconsistent"] = float(sum(1 for row in check["rows"] if row[2]))
    return figs


def _tpce_figures(ph: PhaseResult) -> dict[str, float]:
    """The TPC-E-like kit's figures of a phase: ``tpse`` (tpsE-like: the trades completed during
    pgbench's run, from the brokers' B_NUM_TRADES read just before and after it, over pgbench's
    measured time; from pgbench's count of Trade-Results that found a trade where a phase has no
    counters), ``tpse_pgbench`` (pgbench's per-script TPS of Trade-Result, those that found the
    market's queue empty included), the share of Trade-Orders rolled back by design (%, about
    1), the share of Trade-Results that found the queue empty (``results_idle_pct``), and the
    consistency conditions broken after the phase."""
    by_stem = {script_stem(s.name): s for s in ph.report.scripts}
    figs: dict[str, float] = {}
    result = by_stem.get("trade_result")
    ordered, rolled = by_stem.get("trade_order"), by_stem.get("trade_order_rollback")
    seconds = ph.report.transactions / ph.report.tps if ph.report.tps > 0 else 0.0
    counted = _counted(ph)
    if result is not None:
        figs["tpse"] = figs["tpse_pgbench"] = result.tps or 0.0
        if "results_idle" in counted and result.transactions:
            figs["results_idle_pct"] = 100 * counted["results_idle"] / result.transactions
    if "trades" in counted and seconds > 0:
        figs["tpse"] = counted["trades"] / seconds
    tried = (ordered.transactions if ordered else 0) + (rolled.transactions if rolled else 0)
    if tried:
        figs["rollback_pct"] = 100 * (rolled.transactions if rolled else 0) / tried
    check = ph.tables.get(CONSISTENCY_TABLE)
    if check is not None:
        figs["inconsistent"] = float(sum(1 for row in check["rows"] if row[2]))
    return figs


def _counted(ph: PhaseResult) -> dict[str, int]:
    """What a kit counted during the phase's pgbench run (``kit_load.COUNTERS_TABLE``): each
    counter's increase."""
    table = ph.tables.get(COUNTERS_TABLE)
    return {str(r[0]): int(r[2]) - int(r[1]) for r in table["rows"]} if table else {}


def sysbench_metrics(phases: list[PhaseResult]) -> dict[str, float]:
    """sysbench's own figures beside its TPS, over the measured phases that ran it: queries per
    second, and the errors it ignored (and retried) and reconnects, per second."""
    rows = [
        dict(zip(table["columns"], table["rows"][0], strict=True))
        for ph in phases
        if ph.measured and (table := ph.tables.get(SYSBENCH_REPORT)) and table["rows"]
    ]
    if not rows:
        return {}
    return {
        "qps": statistics.fmean(r["qps"] for r in rows),
        "errors_s": statistics.fmean(r["errors_s"] for r in rows),
        "reconnects_s": statistics.fmean(r["reconnects_s"] for r in rows),
    }


def tpch_metrics(phases: list[PhaseResult], run: RunSpec) -> dict[str, float]:
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
    out = {k: statistics.fmean(f[k] for f in figs if k in f) for k in figs[0]}
    out["timeouts"] = max(f["timeouts"] for f in figs)
    if streamed:  # the throughput run's figure (QthH-like) in place of the power figure
        out["throughput"] = statistics.fmean(ph.report.tps for ph in streamed)
        del out["power"]
    return out


# a replay's figures (replay/phase.SUMMARY_TABLE), per phase and over the measured phases
REPLAY_FIGURES = ("replay_s", "lag_s", "statements_s", "errors", "exec_ms", "active_ms",
                  "divergence_pct", "marked")  # fmt: skip
# the run's own (pglab show's columns): the total execution time, the active time a
# commit's flush shows in, the lag, the divergence, the replay's own statements/s
REPLAY_HEADLINE = ("exec_ms", "active_ms", "lag_s", "divergence_pct", "statements_s")


def replay_metrics(phases: list[PhaseResult]) -> dict[str, float]:
    """A captured workload's replay: per phase (mean over its iterations) and over the
    measured phases, ``replay.*``: its time, its lag behind the captured window, statements
    per second, errors, the total execution time of its statements (pg_stat_statements) and
    the sessions' active time (pg_stat_database), the divergence (% of the statements) and
    whether it passed the threshold (1: the replay's timing is not comparable)."""
    by_name: dict[str, list[dict[str, float]]] = {}
    measured: list[dict[str, float]] = []
    for ph in phases:
        table = ph.tables.get(REPLAY_SUMMARY)
        if not table or not table["rows"]:
            continue
        row = dict(zip(table["columns"], table["rows"][0], strict=True))
        figs = {k: float(row[k]) for k in REPLAY_FIGURES}
        by_name.setdefault(ph.name, []).append(figs)
        if ph.measured:
            measured.append(figs)
    out: dict[str, float] = {}
    for name, items in by_name.items():
        for key in REPLAY_FIGURES:
            out[f"phase.{name}.replay.{key}"] = statistics.fmean(f[key] for f in items)
    for key in REPLAY_HEADLINE if measured else ():
        out[f"replay.{key}"] = statistics.fmean(f[key] for f in measured)
    return out
