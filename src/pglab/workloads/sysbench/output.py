"""What sysbench 1.0 prints, parsed: each ``--report-interval=1`` line as a second of the
phase, and the final statistics exactly as printed (a run's totals are stored equal to them).

A second (``[ 3s ] thds: 4 tps: 331.97 qps: 6648.39 (r/w/o: 4660.55/1315.92/671.92) lat
(ms,95%): 20.74 err/s: 1.99 reconn/s: 0.00``) gives threads, TPS, QPS and its reads, writes
and others per second, the latency percentile asked for (``--percentile``), errors and
reconnects per second. The final report gives the queries by kind, transactions, ignored
errors, reconnects (each with its rate), the total time, events, and the latency's min, avg,
max, percentile and sum.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUM = r"(\d+(?:\.\d+)?)"
_SECOND = re.compile(
    rf"^\[\s*{_NUM}s\s*\]\s+thds:\s*(\d+)\s+tps:\s*{_NUM}\s+qps:\s*{_NUM}\s+"
    rf"\(r/w/o:\s*{_NUM}/{_NUM}/{_NUM}\)\s+lat\s+\(ms,(\d+)%\):\s*{_NUM}\s+"
    rf"err/s:\s*{_NUM}\s+reconn/s:\s*{_NUM}\s*$"
)


@dataclass(frozen=True, slots=True)
class SysbenchSecond:
    """One ``--report-interval`` line: the interval's end (seconds since the start) and its
    rates; ``latency_ms`` is the ``percentile``-th percentile of its events' latency."""

    t: float
    threads: int
    tps: float
    qps: float
    reads_s: float
    writes_s: float
    other_s: float
    percentile: int
    latency_ms: float
    errors_s: float
    reconnects_s: float


@dataclass(frozen=True, slots=True)
class SysbenchReport:
    """The final statistics sysbench printed."""

    reads: int
    writes: int
    other: int
    queries: int
    transactions: int
    tps: float
    qps: float
    errors: int
    errors_s: float
    reconnects: int
    reconnects_s: float
    total_time_s: float
    events: int
    latency_min_ms: float
    latency_avg_ms: float
    latency_max_ms: float
    percentile: int | None
    latency_pct_ms: float | None
    latency_sum_ms: float


def parse_second(line: str) -> SysbenchSecond | None:
    """A ``--report-interval`` line, or None for any other line."""
    m = _SECOND.match(line.strip())
    if m is None:
        return None
    g = m.groups()
    return SysbenchSecond(
        t=float(g[0]),
        threads=int(g[1]),
        tps=float(g[2]),
        qps=float(g[3]),
        reads_s=float(g[4]),
        writes_s=float(g[5]),
        other_s=float(g[6]),
        percentile=int(g[7]),
        latency_ms=float(g[8]),
        errors_s=float(g[9]),
        reconnects_s=float(g[10]),
    )


def _find(text: str, pattern: str) -> re.Match[str]:
    m = re.search(pattern, text, re.M)
    if m is None:
        raise ValueError(f"sysbench's report has no line matching {pattern!r}")
    return m


def parse_report(text: str) -> SysbenchReport:
    """The final statistics of sysbench's standard output (ValueError if a line is missing:
    sysbench did not finish its run)."""

    def count(label: str) -> int:
        return int(_find(text, rf"^\s+{label}:\s+(\d+)\s*$").group(1))

    def rated(label: str) -> tuple[int, float]:
        m = _find(text, rf"^\s+{label}:\s+(\d+)\s+\({_NUM} per sec\.\)")
        return int(m.group(1)), float(m.group(2))

    def latency(label: str) -> float:
        return float(_find(text, rf"^\s+{label}:\s+{_NUM}\s*$").group(1))

    transactions, tps = rated("transactions")
    queries, qps = rated("queries")
    errors, errors_s = rated("ignored errors")
    reconnects, reconnects_s = rated("reconnects")
    pct = re.search(rf"^\s+(\d+)th percentile:\s+{_NUM}\s*$", text, re.M)
    return SysbenchReport(
        reads=count("read"),
        writes=count("write"),
        other=count("other"),
        queries=queries,
        transactions=transactions,
        tps=tps,
        qps=qps,
        errors=errors,
        errors_s=errors_s,
        reconnects=reconnects,
        reconnects_s=reconnects_s,
        total_time_s=float(_find(text, rf"^\s+total time:\s+{_NUM}s\s*$").group(1)),
        events=count("total number of events"),
        latency_min_ms=latency("min"),
        latency_avg_ms=latency("avg"),
        latency_max_ms=latency("max"),
        percentile=int(pct.group(1)) if pct else None,
        latency_pct_ms=float(pct.group(2)) if pct else None,
        latency_sum_ms=latency("sum"),
    )
