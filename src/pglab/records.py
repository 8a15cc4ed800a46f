"""What a run produced, as plain frozen data: parsed pgbench output, phases, runs; and a failed
run's reason in one line (``reason_of``), which every summary of failed runs shows.

Made by ``pgbench_output`` (parsing) and ``executor`` (assembling); consumed by ``store``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, NotRequired, TypedDict

from pglab.fingerprints import Fingerprint, Mount
from pglab.jsonish import JsonObject
from pglab.metric_units import MetricKey
from pglab.stored_spec import RunSpecJson

# how a run ended: stored whole ("ok"), or "failed" with its reason and the server log
RunStatus = Literal["ok", "failed"]
# the storage micro-benchmarks (``pglab storage``, ``[storage_bench]``): targets/fsbench
StorageTool = Literal["pg_test_fsync", "fio"]


@dataclass(frozen=True, slots=True)
class StatementReport:
    """One line of pgbench's ``statement latencies`` (``-r``): the statement's number in its
    script (from 1), its average latency, the failures and retries it caused where pgbench
    prints those columns (failures from 15 on; retries when ``--max-tries`` is not 1), and the
    command as pgbench printed it (a meta-command such as ``\\set`` too)."""

    number: int
    latency_ms: float
    command: str
    failures: int | None = None
    retries: int | None = None


@dataclass(frozen=True, slots=True)
class ScriptReport:
    """One ``SQL script N:`` section of pgbench's report (a phase with several scripts).

    ``transactions`` is the script's processed transactions (those its ``tps`` counts);
    ``counted`` and ``share_pct`` are the ``N transactions (P% of total)`` line as printed: the
    processed ones up to pgbench 17, processed plus failed and skipped ones from 18 on (so that
    the share is of what was scheduled, comparable with the weight's ``target_pct``).
    """

    number: int
    name: str  # "<builtin: select only>" or the script file's path
    weight: int
    target_pct: float | None
    transactions: int
    counted: int
    share_pct: float | None
    tps: float | None
    failed: int | None = None
    serialization_failures: int | None = None
    deadlock_failures: int | None = None
    retried: int | None = None
    retries: int | None = None
    skipped: int | None = None
    latency_avg_ms: float | None = None
    latency_stddev_ms: float | None = None
    statements: tuple[StatementReport, ...] = ()


@dataclass(frozen=True, slots=True)
class PgbenchReport:
    """pgbench's final report, exactly as it printed it (PostgreSQL 15 to 18 formats).

    Latencies are in milliseconds. ``failed`` is None where pgbench does not print the line.
    ``tps`` is the ``tps = ...`` figure (``without initial connection time`` in 15+).
    ``scripts``: the per-script sections (a phase with several scripts); ``statements``: the
    top-level per-statement latencies (``-r`` with one script; with several they are in
    their script's section). The failures by kind are printed with ``--failures-detailed``,
    ``retries`` when ``--max-tries`` is not 1, ``over_latency_limit`` with ``-L``.

    A phase of another kind reports in the same shape: its ``figure`` says what ``tps`` then
    holds, as its runner declared it ("MB/s" of a maintenance operation, "QphH" of a TPC-H-like
    power run...; "tps": transactions per second). The store keeps only a "tps" one as the
    phase's ``tps`` column (``store/encoding``).
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
    serialization_failures: int | None = None
    deadlock_failures: int | None = None
    retries: int | None = None
    latency_limit_ms: float | None = None
    over_latency_limit: int | None = None
    scripts: tuple[ScriptReport, ...] = ()
    statements: tuple[StatementReport, ...] = ()
    figure: str = "tps"  # what ``tps`` holds (``workloads``' declared figure of the kind)

    @classmethod
    def from_dict(cls, data: JsonObject) -> PgbenchReport:
        """A report from its stored form (``dataclasses.asdict``); keys it does not know (a
        newer pglab's) are ignored, those it lacks (an older one's) take their defaults."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["scripts"] = tuple(
            ScriptReport(
                **{
                    **{k: v for k, v in s.items() if k in _SCRIPT_FIELDS},
                    "statements": _statements(s.get("statements") or ()),
                }
            )
            for s in data.get("scripts") or ()
        )
        values["statements"] = _statements(data.get("statements") or ())
        return cls(**values)


_SCRIPT_FIELDS = frozenset(f.name for f in fields(ScriptReport)) - {"statements"}
_STATEMENT_FIELDS = frozenset(f.name for f in fields(StatementReport))


def _statements(items: Any) -> tuple[StatementReport, ...]:
    return tuple(
        StatementReport(**{k: v for k, v in s.items() if k in _STATEMENT_FIELDS}) for s in items
    )


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
    retried: int | None = None  # transactions retried in that second (--max-tries not 1)
    retries: int | None = None  # and their retries


@dataclass(frozen=True, slots=True)
class LatencySecond:
    """One wall-clock second of pgbench's per-transaction log (``-l``).

    ``histogram`` holds (bucket, count) pairs on the log scale of ``latency_hist``, so the
    percentiles of any window can be recomputed by merging seconds, not only read off. From an
    aggregated log (``--aggregate-interval``) there are no percentiles (None) and no histogram.

    Of the ``failed`` transactions, ``serialization`` and ``deadlock`` are those of each kind
    (None where the log does not say: a full log without ``--failures-detailed`` marks them
    ``failed`` only); ``retried`` the transactions retried at least once and ``retries`` their
    retries (None where the log has no retries column: ``--max-tries`` 1).
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
    serialization: int | None = None
    deadlock: int | None = None
    retried: int | None = None
    retries: int | None = None


@dataclass(frozen=True, slots=True)
class ScriptSecond:
    """One wall-clock second of one script of a phase with several (``-l``'s script_no
    column): ``script`` is its number as pgbench's report counts them ("1", "2": text, so that
    the long-form export takes it as the row's label), ``count`` its completed transactions,
    ``failed`` its failed ones, latencies exact (nearest rank) in ms, zero without any;
    ``histogram`` as ``LatencySecond``'s, so that a script's percentiles over a whole phase
    are those of its transactions, never percentiles averaged (empty in runs stored before
    pglab kept it)."""

    epoch: int
    script: str
    count: int
    failed: int
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    histogram: tuple[tuple[int, int], ...] = ()


class TableJson(TypedDict):
    """A columnar table as a phase keeps and the store writes it (one ``series`` row):
    ``{"columns": [...], "rows": [[...], ...]}``; the telemetry's tables (``telemetry.base.Table``
    in memory) and every other per-phase table (a kit's, a profile's, an operation's). A cell is
    whatever JSON value its column holds (a number, text, null, a list), hence ``Any``."""

    columns: list[str]
    rows: list[list[Any]]


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
    tables: dict[str, TableJson] = field(default_factory=dict, compare=True, hash=False)
    script_latency: tuple[ScriptSecond, ...] = ()  # per script, when the phase has several


@dataclass(frozen=True, slots=True)
class RunMetrics:
    """A run's figures, each under its key (``MetricKey``: the run's own, over its measured
    phases, or a phase's), in the order they were made, which is the order they are stored in.
    Made by ``run/metrics.run_metrics`` and the kinds' metrics functions (``workloads``); their
    units by name in ``metric_units``; what the run's ``tps`` holds, ``workloads.figure_of``.
    Stored as a JSON object of dotted keys (``store/numbers``), which the views read back as
    stored (``RunRow.metrics``)."""

    values: Mapping[MetricKey, float] = field(default_factory=dict)

    def get(self, name: str, phase: str | None = None) -> float | None:
        """The run's metric ``name`` (of ``phase``: that phase's), None where it has none."""
        return self.values.get(MetricKey(name, phase))

    def value(self, name: str, phase: str | None = None) -> float:
        """The run's metric ``name`` (of ``phase``: that phase's); a KeyError where it has none."""
        return self.values[MetricKey(name, phase)]

    def of_run(self) -> dict[str, float]:
        """The run's own figures by name (not its phases'): where its figure is found."""
        return {k.name: v for k, v in self.values.items() if k.phase is None}

    def by_phase(self, name: str) -> dict[str, float]:
        """Each phase's metric ``name``: phase name -> value."""
        return {
            k.phase: v for k, v in self.values.items() if k.phase is not None and k.name == name
        }

    def with_value(self, name: str, value: float) -> RunMetrics:
        """These, with the run's metric ``name`` (added last, or replaced where it was)."""
        return RunMetrics({**self.values, MetricKey(name): value})

    def __bool__(self) -> bool:
        return bool(self.values)


@dataclass(slots=True)
class Timings:
    """What a run's steps took, in seconds (None: the step was not taken in this run), and what
    the run's server went through (yes/no; None: not said). Filled in as the run goes, by its
    lease (``postgres/lease``) and the executor; stored as a JSON object of name -> number
    (``store/numbers``: a flag as 1.0 or 0.0, the dataset's steps as ``dataset_init.STEP_s``),
    which the views read back as stored (``StoredRun.timings``)."""

    reset_waited_s: float | None = None  # the copy begun as the last run ended, waited for
    dataset_init_s: float | None = None  # the dataset's making (maybe by an earlier run)
    dataset_made_now: bool | None = None  # made for this run
    # each step of the dataset's making, as its maker names them (pgbench -i's "primary keys")
    dataset_init_steps: dict[str, float] = field(default_factory=dict)
    stop_s: float | None = None  # the last run's server stopped (or this one's, as it ends)
    reset_s: float | None = None  # the dataset reset: copied, or made again
    reset_ahead: bool | None = None  # its copy begun as the last run ended
    keep_s: float | None = None  # a server on a host: the dataset's files kept for resets
    settings_s: float | None = None  # the run's settings applied (a restart, a reload)
    reloaded: bool | None = None  # they were applied by a reload
    restarted: bool | None = None  # they needed a restart
    fingerprint_s: float | None = None
    telemetry_s: float | None = None  # samplers started, closing snapshots
    profile_s: float | None = None  # perf stopped, its recordings folded
    profile_fold_s: float | None = None  # of which folding, after the run
    # what a store holds under names this pglab does not make (another version's), as read
    other: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunResult:
    """A run as stored: spec, outcome, environment, phases, metrics, the server log of the run."""

    campaign: str
    run_key: str
    point_key: str
    repeat: int
    variant: str
    label: str
    spec: RunSpecJson  # RunSpec.to_dict(): what is stored of the spec
    status: RunStatus
    started_at: float
    finished_at: float
    error: str | None = None
    fingerprint: Fingerprint = field(default_factory=lambda: Fingerprint())
    phases: tuple[PhaseResult, ...] = ()
    metrics: RunMetrics = field(default_factory=RunMetrics)  # empty for a failed run
    timings: Timings = field(default_factory=Timings)
    server_log: str = ""


class FsyncRow(TypedDict):
    """One method of a pg_test_fsync section (``ops_per_s`` None: not tested, ``note`` why)."""

    method: str
    ops_per_s: float | None
    usecs_per_op: float | None
    note: str


class FsyncSection(TypedDict):
    key: str  # stable (SECTIONS), whatever the version printed
    title: str  # as printed
    rows: list[FsyncRow]


class FioJob(TypedDict):
    """One fio job: the direction it did gives its IOPS, MB/s (10^6 bytes) and mean completion
    latency (µs); ``sync_lat_mean_us`` the mean fsync time of a job that synced."""

    name: str
    rw: str
    bs: str | None
    direct: bool
    fsync: int
    iops: float
    mb_per_s: float
    lat_mean_us: float | None
    sync_lat_mean_us: float | None
    error: int


class StorageResults(TypedDict, total=False):
    """A storage tool's parsed output (``StorageResult.results``, stored as JSON): pg_test_fsync's
    (``seconds_per_test``, ``direct_io``, ``sections``) or fio's (``version``, ``jobs``)."""

    seconds_per_test: int | None
    direct_io: bool
    sections: list[FsyncSection]
    version: str | None
    jobs: list[FioJob]


class StorageFacts(TypedDict):
    mount: Mount
    host: Fingerprint


class StorageRow(TypedDict):
    """A storage result as the store gives it back (``Store.list_storage_results``; made from a
    fresh ``StorageResult`` by ``targets.results.as_row``): where it was measured, by which
    tool, the tool's parsed output (``results``, JSON) and, from ``get_storage_result``, the
    tool's own ``output``."""

    id: int | None
    measured_at: float
    elapsed_s: float
    target_path: str
    mountpoint: str | None
    fstype: str | None
    mount_options: str | None
    device: str | None
    tool: StorageTool
    tool_version: str
    results: StorageResults
    facts: StorageFacts
    output: NotRequired[str]


@dataclass(frozen=True, slots=True)
class StorageResult:
    """One storage micro-benchmark (``pg_test_fsync`` or ``fio``) on one directory.

    ``mount`` is what ``fingerprint.mount_of`` says of the directory (fstype, mount_options,
    device, mountpoint, scheduler); ``results`` is the tool's parsed output (see
    ``storage_output``); ``output`` its raw text.
    """

    target_path: str
    tool: StorageTool
    tool_version: str
    measured_at: float
    elapsed_s: float
    mount: Mount
    results: StorageResults
    output: str = ""
    host: Fingerprint = field(default_factory=lambda: Fingerprint())


# the per-second series a phase keeps as records (every other series is a telemetry table)
SERIES_KINDS: dict[str, type] = {
    "progress": ProgressSample,
    "latency": LatencySecond,
    "script_latency": ScriptSecond,
}


# -- a failed run's reason -------------------------------------------------------------------

# what every backend says when the postmaster dies: echoes of a crash, never its cause
CRASH_ECHOES = (
    "terminating connection due to unexpected postmaster exit",
    "the database system is starting up",
    "the database system is shutting down",
    "terminating connection because of crash of another server process",
)
# what the server logs when its client went away: the client's own error says why
CLIENT_ECHOES = ("connection to client lost", "unexpected EOF on client connection")
_LEVEL = re.compile(r"\b(PANIC|FATAL|ERROR):\s+(.*)")
_PREFIX = re.compile(r"^pgbench failed in phase (?:'[^']*'|\"[^\"]*\"): ")
# what pglab itself saw happen to pgbench: the cause, whatever the server then logged
_PROCESS = re.compile(r"(pgbench was killed by signal .*|did not finish within [0-9]+ s)")
# pgbench's lines that follow another error rather than say one
_GENERIC = (
    "could not create connection for client",
    "could not create connection for setup",
    "Run was aborted; the above results are incomplete",
)
# pglab's own headings of a server that would not start, above what the server said about it
_SERVER_HEADING = re.compile(
    r"^PostgreSQL .* (did not start \(exit -?[0-9]+\)|did not become "
    r"ready within [0-9]+ s)$"
)
# progress and context, never a reason: vacuum notices, progress, the server's LOG lines, ...
_NOTICE = re.compile(
    r"^(starting vacuum|progress: |pgbench \(|transaction type:|--- server log|the server log "
    r"says:|LINE [0-9]+:|\^|pgbench: (hint|detail):|(HINT|DETAIL|CONTEXT|STATEMENT):|dropping |"
    r"creating |generating |vacuuming|done in )|\b(LOG|WARNING|NOTICE|INFO|DEBUG[0-9]?|HINT|"
    r"DETAIL|CONTEXT|STATEMENT):\s"
)
_LEVEL_RANK = {"PANIC": 0, "FATAL": 2, "ERROR": 3}


def reason_of(error: str | None) -> str:
    """A failed run's reason, in one line: the most specific line of its error text (pgbench's
    output, pglab's words, the server's log lines), not the first. In order: a PANIC; pgbench
    killed by a signal or stopped for taking too long; a FATAL; an ERROR (each from its level
    on: ``FATAL: sorry, too many clients already``); the server found not running; pgbench's own
    error; any other line (``postgres: "superuser_reserved_connections" (20) plus ...``); the
    headings that follow or frame another error (pgbench's ``could not create connection for
    client 3``, pglab's ``PostgreSQL 18.6 did not start (exit 1)``); the echoes of a crash or
    of a client gone (``connection to client lost`` after pg_basebackup's own error); and
    last progress notices such as ``starting vacuum...end.``. The first line of the best rank
    wins; the whole text stays in ``pglab show RUN``."""
    best: tuple[int, str] | None = None
    for raw in (error or "").splitlines():
        line = " ".join(_PREFIX.sub("", raw.strip()).split())
        if not line:
            continue
        found = _rank(line)
        if best is None or found[0] < best[0]:
            best = found
    return best[1] if best else "no error recorded"


def _rank(line: str) -> tuple[int, str]:
    if m := _PROCESS.search(line):
        return 1, m.group(1)
    if m := _LEVEL.search(line):
        if any(echo in line for echo in CRASH_ECHOES + CLIENT_ECHOES):
            return 8, f"{m.group(1)}: {m.group(2)}"
        return _LEVEL_RANK[m.group(1)], f"{m.group(1)}: {m.group(2)}"
    if "the server was not running" in line:
        return 4, line.strip("()")
    if _NOTICE.search(line):
        return 9, line
    if _SERVER_HEADING.match(line):
        return 7, line
    if line.startswith("pgbench: error: "):
        said = line.removeprefix("pgbench: error: ")
        return (7 if said.startswith(_GENERIC) else 5), said
    return 6, line
