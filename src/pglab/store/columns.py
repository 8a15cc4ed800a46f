"""What each of the store's queries returns, a row as a ``TypedDict`` of its columns.

The driver's rows (sqlite3's or psycopg's tuples with the cursor's column names) become these
in one place, ``Store._rows(sql, params, shape)``: the query names the shape it selects, and
mypy checks every column its reader asks for. JSON columns (``*_json``) stay text here; the
store parses them into their own types (``stored_spec.read``, ``Fingerprint``, ``TableJson``).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from pglab.records import RunStatus, StorageTool


class IdRow(TypedDict):
    id: int


class CountRow(TypedDict):
    n: int


class VersionRow(TypedDict):
    v: int | None  # MAX(version): None without any


class RunKeyRow(TypedDict):
    run_key: str


class RunStatusRow(TypedDict):
    id: int
    status: RunStatus


class SpecJsonRow(TypedDict):
    spec_json: str


class PointSpecRow(TypedDict):
    """A stored point's campaign, key and the spec of its first run."""

    campaign: str
    point_key: str
    spec_json: str


class FingerprintJsonRow(TypedDict):
    fingerprint_json: str


class FileRow(TypedDict):
    data: bytes | memoryview  # a BLOB (sqlite3) or bytea (psycopg)


class CampaignFactsRow(TypedDict):
    """``pglab_runs``' server version and host of a campaign's runs (JSON values: any)."""

    campaign: str
    server_version: object
    host: object


class RunColumns(TypedDict):
    """A run's row as written (``encoding.encode_run``), without its campaign_id."""

    run_key: str
    point_key: str
    repeat: int
    variant: str
    label: str
    status: RunStatus
    error: str | None
    started_at: float
    finished_at: float
    stored_at: float
    tps: float | None
    spec_json: str
    axes_json: str
    fingerprint_json: str
    metrics_json: str
    timings_json: str
    server_log: str
    pglab_version: str


class RunListRow(TypedDict):
    """``Store.list_runs``' row: a RunRow with its metrics and axes as stored JSON."""

    id: int
    campaign: str
    run_key: str
    point_key: str
    variant: str
    label: str
    repeat: int
    status: RunStatus
    tps: float | None
    started_at: float
    finished_at: float
    error: str | None
    metrics: str | None
    axes: str | None


class RunFullRow(TypedDict):
    """``Store.get_run``'s row of the run (its phases and series are read apart)."""

    id: int
    campaign: str
    campaign_id: int
    run_key: str
    point_key: str
    repeat: int
    variant: str
    label: str
    status: RunStatus
    error: str | None
    started_at: float
    finished_at: float
    stored_at: float
    tps: float | None
    pglab_version: str
    spec_json: str
    fingerprint_json: str
    metrics_json: str
    timings_json: str
    server_log: str


class PhaseColumns(TypedDict):
    """A row of ``phases`` (``SELECT *``): pgbench's final report as JSON, ``measured`` 0/1."""

    run_id: int
    idx: int
    name: str
    iteration: int
    measured: int
    started_at: float
    elapsed_s: float
    argv_json: str
    tps: float | None
    transactions: int | None
    failed: int | None
    latency_avg_ms: float | None
    latency_stddev_ms: float | None
    initial_connection_ms: float | None
    report_json: str
    output: str


class PointLabelRow(TypedDict):
    """``Store.point_labels``' row: a point of a campaign."""

    campaign: str
    label: str


class SeriesRow(TypedDict):
    phase_idx: int
    kind: str
    data_json: str | bytes


class StorageColumns(TypedDict):
    """A row of ``storage_results``: ``output`` only where asked for."""

    id: int
    measured_at: float
    elapsed_s: float
    target_path: str
    mountpoint: str | None
    fstype: str | None
    mount_options: str | None
    device: str | None
    tool: StorageTool
    tool_version: str
    results_json: str
    facts_json: str
    output: NotRequired[str]
