"""The run spec as stored: ``RunSpec.to_dict()`` written with every run as JSON, read back as
``StoredRun.spec`` (and the identities hashed into its keys), typed.

The types are ``TypedDict``s, so a stored spec is the same JSON it always was while mypy checks
every key a reader asks for. Every key may be missing (``total=False``): a spec keeps the keys
added to a point after points were stored only when they are not at the value they had before
(``campaign/identity.py``: so old points keep their keys), and a store made by an older pglab
lacks what was added since. Lists are ``Sequence``: tuples as made, lists as read from JSON.

- :class:`RunSpecJson`: the whole stored spec; :class:`PointJson`: the part that defines the
  point (``RunSpec.point_dict()``, hashed into ``point_key``).
- :class:`ServerJson`, :class:`BuildJson`, :class:`DatasetJson`, :class:`PhaseJson`,
  :class:`ScriptJson`, :class:`DerivedJson`, :class:`TargetJson`, :class:`StorageJson`,
  :class:`OsJson`, :class:`TelemetryJson`, :class:`ProfileJson`: its parts.
- :class:`CampaignDocument`: the campaign file as stored with its campaign
  (``CampaignRow["spec"]``): the TOML document, its dsn passwords masked.

Versions: ``spec_version`` is written by every run since version 2; a spec without it is
version 1 (every spec stored before the key; the same shape). :func:`read` is the one reader of a
stored spec's JSON: it takes any version and gives the current shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict, cast

from pglab.jsonish import JsonObject, TomlTable

SPEC_VERSION = 2  # written by this pglab into every run's spec (outside its point's identity)


AxisValue = str | int | float | bool  # a matrix axis's value (a TOML scalar)


class BuildJson(TypedDict, total=False):
    """``[server] build``: a tree, tarball or clone built by pglab (a clone's ref and commit
    only for a git build)."""

    source: str
    options: Sequence[str]
    patches: Sequence[str]
    git_ref: str | None
    commit: str | None


class ServerJson(TypedDict, total=False):
    """The server: its binaries' source and its settings, sorted (name, value) pairs; the dsn
    (its password masked), manage and database only for an existing server (database also for
    one on a host); build, version, pgbench and host only when set."""

    source: str
    bindir: str | None
    build: BuildJson
    version: str
    pgbench: str
    settings: Sequence[Sequence[str]]
    dsn: str
    manage: str
    database: str
    host: str


class DatasetJson(TypedDict, total=False):
    """The dataset (``reset`` only as part of a point; a kit's keys only with a kit)."""

    scale: int
    init_steps: str | None
    partitions: int
    partition_method: str | None
    fillfactor: int
    unlogged_tables: bool
    reset: str
    kit: str
    tables: int
    table_size: int
    fields: int
    field_length: int
    dump: str | None
    roles: Sequence[str]
    databases: Sequence[str]


class ScriptJson(TypedDict, total=False):
    """A pgbench script: a builtin or a file with its weight and content's hash; a kit's
    scripts by ``label`` (where pglab installed them is no part of the point)."""

    builtin: str | None
    path: str | None
    weight: int
    sha256: str | None
    label: str


class PhaseJson(TypedDict, total=False):
    """A phase as part of its point (``campaign.identity.phase_identity``): the keys at the
    value they had before they existed are left out. Typed here: the keys every phase has and
    pgbench's options, which every kind composes; a kind's own keys (a kit's, an operation's,
    sysbench's, TPC-H's, a captured workload's: ``workloads/KIND/work``'s ``KEYS``) are stored
    beside them as the kind declares them and read back by it (``workloads.work.stored_kind``,
    ``of_flat``), so that this core module names no kind."""

    name: str
    scripts: Sequence[ScriptJson]
    clients: int
    threads: int | None
    duration: int | None
    transactions: int | None
    times: int
    measured: bool
    rate: float | None
    protocol: str
    connect: bool
    vacuum: bool
    latency_log: str
    progress: bool
    generators: Sequence[str]
    max_tries: int
    latency_limit: float | None
    failures_detailed: bool
    report_per_command: bool
    random_seed: int | str | None
    sampling_rate: float | None


class DerivedJson(TypedDict):
    """``[[derived]]``: a metric from the TPS of two phases."""

    name: str
    kind: str
    a: str
    b: str


class TargetJson(TypedDict, total=False):
    """A storage target (its ``name`` only in a point's storage: a label, not its identity)."""

    name: str
    kind: str
    path: str | None
    size: int | None
    fstype: str | None
    mkfs_options: Sequence[str]
    mount_options: Sequence[str]
    dir: str | None
    direct_io: bool


class StorageJson(TypedDict, total=False):
    """Where PGDATA and pg_wal live (None: the lab home, inside PGDATA): both keys, always."""

    data: TargetJson | None
    wal: TargetJson | None


class OsJson(TypedDict, total=False):
    """``[os]``: what the run asks of the kernel; only what it asks."""

    sysctl: dict[str, str]
    io_scheduler: str
    read_ahead_kb: int
    nr_requests: int
    transparent_hugepages: str
    drop_caches: bool
    huge_pages: bool
    limits: dict[str, int]
    cpus: int
    client_cpus: int
    memory: int  # bytes


class TelemetryJson(TypedDict):
    """How measured phases were watched (seconds; samples per second for waits)."""

    enabled: bool
    stats_interval: float
    waits_hz: float
    buffers_interval: float


class ProfileJson(TypedDict):
    """``[profile]`` of a profiled run: perf's samples per second per CPU."""

    enabled: bool
    frequency: int


class PointJson(TypedDict, total=False):
    """What defines a point (``RunSpec.point_dict()``), hashed into ``point_key``: storage and
    os only when not the default. ``axes``: the matrix coordinates, [name, value] pairs."""

    variant: str
    axes: Sequence[Sequence[AxisValue]]  # [name, value] pairs (JSON arrays)
    server: ServerJson
    dataset: DatasetJson
    phases: Sequence[PhaseJson]
    derived: Sequence[DerivedJson]
    storage: StorageJson
    os: OsJson


class RunSpecJson(PointJson, total=False):
    """A run's stored spec (``RunSpec.to_dict()``): its point, and what is the run's own or
    follows from the point: lab_settings (what pglab added, name -> value) and profile only
    when there are some; ``spec_version`` from version 2 on."""

    spec_version: int
    campaign: str
    repeat: int
    point_key: str
    telemetry: TelemetryJson
    lab_settings: dict[str, str]
    profile: ProfileJson


class DatasetKeyJson(TypedDict, total=False):
    """What ``dataset_key`` hashes: the server's label, the dataset, and its storage when not
    the default."""

    source: str
    dataset: DatasetJson
    storage: StorageJson


class CampaignDocument(TypedDict, total=False):
    """The campaign file stored with its campaign (``CampaignRow["spec"]``): the TOML document
    as parsed, dsn passwords masked, never re-validated (the runs' specs are what ran). The keys
    its readers ask for; its tables stay TOML tables (``TomlTable``)."""

    name: str
    description: str
    repeats: int | str  # a number, or "auto"
    order: str
    variants: dict[str, TomlTable]
    matrix: TomlTable
    analysis: TomlTable
    sequential: TomlTable
    tune: TomlTable  # a tune study's (pglab tune)


def read(raw: JsonObject) -> RunSpecJson:
    """A stored run's spec (``json.loads`` of ``spec_json``) in the current shape: version 1
    (no ``spec_version``: every spec stored before the key) has the shape of version 2 and keeps
    it; a newer pglab's spec keeps the keys this one does not know. Refuses anything but an
    object (a store written by something else)."""
    if not isinstance(raw, dict):
        raise ValueError(f"a stored run spec is a JSON object, not {type(raw).__name__}")
    return cast(RunSpecJson, raw)  # the edge: JSON as stored, its keys declared above


def read_document(raw: JsonObject) -> CampaignDocument:
    """A stored campaign's document (``json.loads`` of its ``spec_json``): the TOML document
    as it was parsed, unchanged (every pglab stored it whole)."""
    if not isinstance(raw, dict):
        raise ValueError(f"a stored campaign document is a JSON object, not {type(raw).__name__}")
    return cast(CampaignDocument, raw)
