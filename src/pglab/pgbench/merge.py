"""Several generators' pgbench reports merged into one, as one pgbench would have reported them."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pglab.records import (
    PgbenchReport,
    ProgressSample,
    ScriptReport,
    StatementReport,
)


def _sum(second: int, samples: Any) -> ProgressSample:
    samples = list(samples)
    tps = sum(s.tps for s in samples)
    weights = [s.tps for s in samples] if tps > 0 else [1.0] * len(samples)
    latency = sum(w * (s.latency_avg_ms or 0) for w, s in zip(weights, samples, strict=True))
    failed = [s.failed for s in samples if s.failed is not None]
    return ProgressSample(
        t=float(second),
        tps=tps,
        latency_avg_ms=latency / sum(weights) if sum(weights) else None,
        latency_stddev_ms=None,  # not the mean of the hosts' own: left out rather than wrong
        failed=sum(failed) if failed else None,
    )


def merge_reports(reports: Sequence[PgbenchReport]) -> PgbenchReport:
    """One report for the hosts' pgbench together: counts and TPS summed, the mean latency
    weighted by transactions, the slowest connection time; the standard deviation from the
    hosts' own means and deviations (the pooled variance of the transactions). The per-script
    sections and per-statement latencies are merged the same way (``_merged_scripts``)."""
    n = sum(r.transactions for r in reports)
    first = reports[0]
    mean, stddev = _pooled(
        [(r.transactions, r.latency_avg_ms, r.latency_stddev_ms) for r in reports]
    )
    connections = [r.initial_connection_ms for r in reports if r.initial_connection_ms is not None]
    durations = [r.duration_s for r in reports if r.duration_s is not None]
    return replace(
        first,
        tps=sum(r.tps for r in reports),
        transactions=n,
        failed=_total([r.failed for r in reports]),
        latency_avg_ms=mean,
        latency_stddev_ms=stddev,
        initial_connection_ms=max(connections) if connections else None,
        clients=_total([r.clients for r in reports]),
        threads=_total([r.threads for r in reports]),
        duration_s=max(durations) if durations else None,
        retried=_total([r.retried for r in reports]),
        skipped=_total([r.skipped for r in reports]),
        serialization_failures=_total([r.serialization_failures for r in reports]),
        deadlock_failures=_total([r.deadlock_failures for r in reports]),
        retries=_total([r.retries for r in reports]),
        over_latency_limit=_total([r.over_latency_limit for r in reports]),
        scripts=_merged_scripts([r.scripts for r in reports]),
        statements=_merged_statements(
            [r.statements for r in reports], [r.transactions for r in reports]
        ),
        rate_lag_avg_ms=statistics.fmean(
            [r.rate_lag_avg_ms for r in reports if r.rate_lag_avg_ms is not None]
        )
        if any(r.rate_lag_avg_ms is not None for r in reports)
        else None,
    )


def _total(values: Sequence[Any]) -> Any:
    """The sum of the values known, None when none is."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _pooled(
    parts: Sequence[tuple[int, float | None, float | None]],
) -> tuple[float | None, float | None]:
    """The mean and standard deviation of all the parts' transactions together, from each
    part's (count, mean, deviation): the mean weighted by counts, the pooled variance; None
    where a part lacks them."""
    n = sum(c for c, _, _ in parts)
    means = [m for _, m, _ in parts]
    if not n or any(m is None for m in means):
        return None, None
    mean = sum(c * (m or 0.0) for c, m, _ in parts) / n
    if any(sd is None for _, _, sd in parts):
        return mean, None
    second = sum(c * ((sd or 0.0) ** 2 + (m or 0.0) ** 2) for c, m, sd in parts) / n
    return mean, max(0.0, second - mean**2) ** 0.5


def _merged_scripts(sections: Sequence[tuple[ScriptReport, ...]]) -> tuple[ScriptReport, ...]:
    """Each script's sections of the hosts as one (every host runs the same scripts, by
    number): transactions, failures, retries and TPS summed, the latency pooled as the phase's
    is, the share that of what all the scripts counted; none when the hosts' sections differ."""
    names = [[s.name for s in section] for section in sections]
    if not names[0] or any(n != names[0] for n in names):
        return ()
    merged = []
    for same in zip(*sections, strict=True):
        mean, stddev = _pooled(
            [(s.transactions, s.latency_avg_ms, s.latency_stddev_ms) for s in same]
        )
        tps = [s.tps for s in same]
        merged.append(
            replace(
                same[0],
                transactions=sum(s.transactions for s in same),
                counted=sum(s.counted for s in same),
                tps=None if any(t is None for t in tps) else sum(t or 0.0 for t in tps),
                **{k: _total([getattr(s, k) for s in same]) for k in _SCRIPT_COUNTS},
                latency_avg_ms=mean,
                latency_stddev_ms=stddev,
                statements=_merged_statements(
                    [s.statements for s in same], [s.transactions for s in same]
                ),
            )
        )
    counted = sum(s.counted for s in merged)
    return tuple(
        replace(s, share_pct=round(100 * s.counted / counted, 1)) if counted else s for s in merged
    )


_SCRIPT_COUNTS = (
    "failed",
    "serialization_failures",
    "deadlock_failures",
    "retried",
    "retries",
    "skipped",
)


def _merged_statements(
    sections: Sequence[tuple[StatementReport, ...]], weights: Sequence[int]
) -> tuple[StatementReport, ...]:
    """Each statement's latency of the hosts weighted by their transactions (pgbench prints no
    count of a statement's executions), its failures and retries summed; none when the hosts'
    statements differ."""
    commands = [[st.command for st in section] for section in sections]
    if not commands[0] or any(c != commands[0] for c in commands):
        return ()
    n = sum(weights)
    return tuple(
        replace(
            same[0],
            latency_ms=sum(w * st.latency_ms for w, st in zip(weights, same, strict=True)) / n
            if n
            else same[0].latency_ms,
            failures=_total([st.failures for st in same]),
            retries=_total([st.retries for st in same]),
        )
        for same in zip(*sections, strict=True)
    )
