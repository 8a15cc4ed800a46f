"""What a run produced, as plain frozen data: parsed pgbench output, phases, runs.

Made by ``pgbench_output`` (parsing) and ``executor`` (assembling); consumed by ``store``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class PgbenchReport:
    """pgbench's final report, exactly as it printed it (PostgreSQL 15 to 18 formats).

    Latencies are in milliseconds. ``failed`` is None where pgbench does not print the line.
    ``tps`` is the ``tps = ...`` figure (``without initial connection time`` in 15+).
    """

    tps: float
    transactions: int
    failed: int | None = None
    latency_avg_ms: float | None = None
    latency_stddev_ms: float | None = None
    initial_connection_ms: float | None = None
    transaction_type: str | None = None
    scaling_factor: int | None = None
    query_mode: str | None = None
    clients: int | None = None
    threads: int | None = None
    duration_s: float | None = None
    max_tries: int | None = None
    retried: int | None = None
    skipped: int | None = None
    rate_lag_avg_ms: float | None = None
    pgbench_version: str | None = None


@dataclass(frozen=True, slots=True)
class ProgressSample:
    """One ``progress:`` line of ``pgbench -P 1``: ``t`` is seconds since the phase began."""

    t: float
    tps: float
    latency_avg_ms: float | None = None
    latency_stddev_ms: float | None = None
    failed: int | None = None
    lag_ms: float | None = None
    skipped: int | None = None


@dataclass(frozen=True, slots=True)
class LatencySecond:
    """One wall-clock second of pgbench's per-transaction log (``-l``).

    ``histogram`` holds (bucket, count) pairs on the log scale of ``latency_hist``, so the
    percentiles of any window can be recomputed by merging seconds, not only read off. From an
    aggregated log (``--aggregate-interval``) there are no percentiles (None) and no histogram.
    """

    epoch: int
    count: int
    failed: int
    mean_ms: float
    max_ms: float
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    histogram: tuple[tuple[int, int], ...] = ()
    p90_ms: float | None = None
    p999_ms: float | None = None


@dataclass(frozen=True, slots=True)
class PhaseResult:
    """One pgbench invocation: the phase's name, which of its ``times`` iterations, its output."""

    name: str
    iteration: int
    measured: bool
    started_at: float
    elapsed_s: float
    argv: tuple[str, ...]
    report: PgbenchReport
    progress: tuple[ProgressSample, ...] = ()
    latency: tuple[LatencySecond, ...] = ()
    output: str = ""
    # telemetry of the phase: kind (e.g. "pg.database", "waits", "os.cpu", "checkpoints") ->
    # {"columns": [...], "rows": [[...], ...]}, as the samplers of pglab.telemetry made it
    tables: dict[str, dict[str, Any]] = field(default_factory=dict, compare=True, hash=False)


@dataclass(frozen=True, slots=True)
class RunResult:
    """A run as stored: spec, outcome, environment, phases, metrics, the server log of the run."""

    campaign: str
    run_key: str
    point_key: str
    repeat: int
    variant: str
    label: str
    spec: dict[str, Any]
    status: str  # "ok" or "failed"
    started_at: float
    finished_at: float
    error: str | None = None
    fingerprint: dict[str, Any] = field(default_factory=dict)
    phases: tuple[PhaseResult, ...] = ()
    metrics: dict[str, float] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    server_log: str = ""


@dataclass(frozen=True, slots=True)
class StorageResult:
    """One storage micro-benchmark (``pg_test_fsync`` or ``fio``) on one directory.

    ``mount`` is what ``fingerprint.mount_of`` says of the directory (fstype, mount_options,
    device, mountpoint, scheduler); ``results`` is the tool's parsed output (see
    ``storage_output``); ``output`` its raw text.
    """

    target_path: str
    tool: str  # "pg_test_fsync" or "fio"
    tool_version: str
    measured_at: float
    elapsed_s: float
    mount: dict[str, Any]
    results: dict[str, Any]
    output: str = ""
    host: dict[str, Any] = field(default_factory=dict)


# the per-second series a phase keeps as records (every other series is a telemetry table)
SERIES_KINDS: dict[str, type] = {"progress": ProgressSample, "latency": LatencySecond}
