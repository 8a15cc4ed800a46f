"""A maintenance operation's figures of a run (computed as it is stored)."""

from __future__ import annotations

import statistics

from pglab.campaign.spec import RunSpec
from pglab.metric_units import MetricKey
from pglab.records import PhaseResult
from pglab.workloads.maintenance.figures import OPERATION_KIND, OperationFigures, mb_per_s


def operation_metrics(run: RunSpec, phases: list[PhaseResult]) -> dict[MetricKey, float]:
    """A maintenance operation's figures per phase (mean over its iterations): MB/s, elapsed
    seconds, bytes, and where they apply workers launched, WAL bytes, tuples/s, the MB/s read
    that shared_buffers did not hold, the CPU of the leader and of its workers (% of a core);
    and the run's
    MB/s over its measured operations (the ``tps`` of these phases is the same MB/s: the run's
    headline figure)."""
    del run  # its figures are in its phases' tables
    by_name: dict[str, list[OperationFigures]] = {}
    measured: list[OperationFigures] = []
    for ph in phases:
        if OPERATION_KIND in ph.tables:
            figs = OperationFigures.from_table(ph.tables[OPERATION_KIND])
            by_name.setdefault(ph.name, []).append(figs)
            if ph.measured:
                measured.append(figs)
    out: dict[MetricKey, float] = {}
    for name, items in by_name.items():
        out[MetricKey("mb_s", name)] = statistics.fmean(f.mb_s for f in items)
        out[MetricKey("elapsed_s", name)] = statistics.fmean(f.elapsed_s for f in items)
        out[MetricKey("bytes", name)] = statistics.fmean(f.bytes for f in items)
        for key in ("workers_launched", "wal_bytes", "tuples_s"):  # where they apply
            vals = [v for f in items if (v := getattr(f, key)) is not None]
            if vals:
                out[MetricKey(key, name)] = statistics.fmean(vals)
        reads = [
            mb_per_s(f.io_read_bytes, f.elapsed_s) for f in items if f.io_read_bytes is not None
        ]
        if reads:  # what it read that shared_buffers did not hold (pg_stat_io, 16+)
            out[MetricKey("io_read_mb_s", name)] = statistics.fmean(reads)
        for who in ("leader", "workers"):  # % of a core over the operation's time
            used = [(getattr(f, f"{who}_cpu_s"), f.elapsed_s) for f in items]
            pcts = [100 * v / t for v, t in used if v is not None and t > 0]
            if pcts:
                out[MetricKey(f"{who}_cpu_pct", name)] = statistics.fmean(pcts)
    if measured:
        out[MetricKey("mb_s")] = statistics.fmean(f.mb_s for f in measured)
    return out
