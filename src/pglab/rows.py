"""What the store gives back: typed, immutable rows instead of dictionaries (beside `records`,
what a run produces, so that every stage may read them).

- :class:`RunRow`: one stored run as a listing has it (``Store.list_runs``): ids, point, status,
  the run's TPS, its metrics and its matrix coordinates; no spec, phases or series.
- :class:`StoredRun`: everything stored about one run (``Store.get_run``): a RunRow with its
  spec (``stored_spec.RunSpecJson``), fingerprint, timings, server log, phases and per-second
  series. A StoredRun is a RunRow, so every function that reads runs takes either.
- :class:`PhaseRow`: one pgbench invocation of a run, with pgbench's final report.

Series stay in the columnar form they are stored in (``records.TableJson``: ``{"columns": [...],
"rows": [[...]]}``, by phase index and kind): ``telemetry.summary`` and the report read them
as tables.
``plain`` turns any of them into plain data for ``--json`` and exports.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import PurePath
from typing import Any, NotRequired, TypedDict

from pglab.fingerprints import Fingerprint
from pglab.records import PgbenchReport, RunStatus, TableJson
from pglab.stored_spec import AxisValue, CampaignDocument, RunSpecJson

Series = dict[str, dict[str, TableJson]]  # phase index (as text) -> kind -> columnar JSON


class CampaignRow(TypedDict):
    """A stored campaign as ``Store.list_campaigns`` lists it; ``Store.get_campaign`` adds its
    ``spec``: the campaign document as parsed (``stored_spec.CampaignDocument``)."""

    id: int
    name: str
    created_at: float
    updated_at: float
    source_file: str | None
    pglab_version: str
    runs_ok: int
    runs_failed: int
    last_run_at: float | None  # the latest finished_at, None without runs
    spec: NotRequired[CampaignDocument]


def spec_of(campaign: CampaignRow | None) -> CampaignDocument:
    """A stored campaign's document ({} without a campaign, or from ``list_campaigns``)."""
    return (campaign.get("spec") if campaign is not None else None) or {}


@dataclass(frozen=True, slots=True)
class RunRow:
    id: int
    campaign: str
    run_key: str
    point_key: str
    variant: str
    label: str
    repeat: int
    status: RunStatus
    # mean TPS of the measured phases; None for a failed run, and where the figure is not a TPS
    # (MB/s, QphH...: in ``metrics`` under its own name, ``workloads.figures_not_tps``)
    tps: float | None
    started_at: float
    finished_at: float
    error: str | None
    # as stored: the dotted name of each (``phase.NAME.KEY`` a phase's: metric_units.MetricKey,
    # by_phase) -> number, units by name (metric_units); the views match an open set of names
    # (the kinds' figures, [[derived]]'s, queries', statement classes') and ``show --json`` and
    # ``export --full`` print it verbatim; in memory before it is stored, a records.RunMetrics
    metrics: dict[str, float] = field(default_factory=dict)
    axes: dict[str, AxisValue] = field(default_factory=dict)  # matrix coordinates, in axis order

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True, slots=True)
class PhaseRow:
    idx: int
    name: str
    iteration: int
    measured: bool
    started_at: float
    elapsed_s: float
    argv: list[str]
    tps: float | None
    transactions: int | None
    failed: int | None
    latency_avg_ms: float | None
    latency_stddev_ms: float | None
    initial_connection_ms: float | None
    report: PgbenchReport  # pgbench's final report as parsed and stored
    output: str  # what pgbench printed

    @property
    def figure(self) -> str:
        """What ``value`` is: "tps" (then also the ``tps`` column), or the figure the phase's
        kind declared ("MB/s", "QphH", "QthH", "statements/active s"; ``tps`` None)."""
        return self.report.figure

    @property
    def value(self) -> float:
        """The phase's figure (``figure``), as its report holds it."""
        return self.report.tps

    @property
    def client(self) -> str:
        """The load generator's program as its command names it (``pgbench``, ``sysbench``):
        the name telemetry gives the client's CPU."""
        return PurePath(self.argv[0]).name if self.argv else "pgbench"


@dataclass(frozen=True, slots=True)
class StoredRun(RunRow):
    spec: RunSpecJson = field(default_factory=lambda: RunSpecJson())
    fingerprint: Fingerprint = field(default_factory=lambda: Fingerprint())
    # as stored (name -> number: seconds, metric_units' flags as 1.0/0.0, names of any pglab
    # version), what ``pglab show`` prints whole (and ``--json``, ``export --full`` verbatim);
    # ``store/numbers.timings_of`` reads it as a records.Timings (``Store.load_run``)
    timings: dict[str, float] = field(default_factory=dict)
    server_log: str = ""
    stored_at: float | None = None
    pglab_version: str = ""
    phases: tuple[PhaseRow, ...] = ()
    series: Series = field(default_factory=dict)

    @classmethod
    def of(cls, row: RunRow, **more: Any) -> StoredRun:
        """A listing's row with some of what ``get_run`` would add (e.g. only its fingerprint,
        read alone by ``Store.run_fingerprint``)."""
        return cls(**{f.name: getattr(row, f.name) for f in fields(RunRow)}, **more)


def plain(obj: Any) -> Any:
    """Plain data (dicts, lists, numbers, text) for json.dumps: rows become dicts."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    if isinstance(obj, list | tuple):
        return [plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    return obj
