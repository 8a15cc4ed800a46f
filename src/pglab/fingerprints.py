"""A run's fingerprint, typed: what the numbers depend on besides the campaign's own choices,
as ``postgres/fingerprint`` reads it and the executor adds to it, stored as JSON with the run
and read back by ``show``, ``compare``, the report and the warnings.

The types are ``TypedDict``s, so a fingerprint is the same dict it always was (stored and read
back byte for byte, by this version and the ones before it) while mypy checks every key a
reader asks for. Every key may be missing (``total=False``): a fingerprint of an older
version lacks the keys added since, one of an existing server lacks what pglab cannot read of
its machine, and a failed run's stops where it failed. Keys that older versions wrote and this
one no longer does are declared too, each saying so, for the readers that still meet them.

Its parts have their own types, here (a top-level module: every stage that writes a part
imports them): ``Mount`` and ``Setting``; ``MachineFacts`` (pglab's machine beside a server on
a host); ``HostFacts`` (a generator host, ``hosts``); ``BuildFacts`` with ``Patch`` and
``GitSource`` (a build, ``postgres.build.facts_of``); ``StorageTargets`` of ``TargetFacts``
(``targets``) or ``HostTarget`` (``postgres.on_host``); ``OsFacts`` (``[os]``, ``run.os_state``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, TypedDict

from pglab.stored_spec import OsJson


class Setting(TypedDict, total=False):
    """A non-default setting as ``pg_settings`` reported it as the run started."""

    setting: str | None
    unit: str | None
    source: str  # "configuration file", "session", ...
    shown: str  # current_setting(): with its unit ("128MB")


class LoopBacking(TypedDict, total=False):
    """The mount of the file behind a loop device."""

    mountpoint: str | None
    fstype: str | None
    device: str | None
    scheduler: str | None


class Mount(TypedDict, total=False):
    """The mount holding a directory (``/proc/self/mountinfo``) and its block device."""

    mountpoint: str
    fstype: str
    device: str
    mount_options: str  # the per-mount options (older versions kept only these)
    super_options: str  # the per-superblock ones (ext4's data=)
    options: str  # both, deduplicated: what ``show`` prints
    major_minor: str
    scheduler: str | None
    block_device: str | None
    loop_backing_file: str
    loop_direct_io: bool
    loop_backing: LoopBacking


def mount_options(m: Mapping[str, object]) -> str | None:
    """A mount's options (a ``Mount``) as pglab shows and matches them: both kinds
    (``options``), or the per-mount ones alone in a fingerprint stored before pglab read the
    superblock's."""
    found = m.get("options") or m.get("mount_options")
    return str(found) if found else None


class MachineFacts(TypedDict, total=False):
    """pglab's own machine, when the server runs on a host (``pglab_machine``)."""

    hostname: str | None
    kernel: str | None
    cpus: int | None
    ram_bytes: int | None
    cpu_model: str | None


class HostFacts(TypedDict):
    """A host as a run's fingerprint records it (``generators``, by name; what pglab reads of a
    host: ``hosts.ssh.Remote.facts``, ``hosts.local.LocalHost.facts``; ``hosts.facts``)."""

    host: str  # its name in the campaign ("local": this machine)
    address: str
    hostname: str  # uname -n
    kernel: str  # uname -sr
    cpus: int | None
    ram_bytes: int | None
    pgbench: str | None  # what its pgbench --version said (None: none answered)
    # the OS facts every run records of it, asked for or not (hosts/facts.OS_FILES: THP, the
    # dirty-page and swap sysctls, huge pages, the governor); absent in runs stored before
    os_state: NotRequired[dict[str, str]]


class Patch(TypedDict):
    """A patch applied to a build, in order: its file and content's hash."""

    name: str
    path: str
    sha256: str


class GitSource(TypedDict):
    """A build of a commit of a git clone (``BuildSpec.git_ref``/``commit``)."""

    clone: str
    ref: str | None
    commit: str
    subject: str | None


class BuildFacts(TypedDict, total=False):
    """What a run's fingerprint keeps of a build (``postgres.build.facts_of`` its build.json):
    ``git`` only for a build of a commit; the others None where a build.json lacks them."""

    version: str | None
    source: str | None
    source_sha256: str | None
    options: list[str] | None
    effective_options: list[str] | None
    patches: list[Patch] | None
    compiler: str | None
    system: str | None
    key: str | None
    build_seconds: float | None
    git: GitSource
    spread_pct: float  # the spread of identical builds on the machine (postgres.build_spread)


class HostTarget(TypedDict):
    """A storage target of a server on a host (``postgres.on_host``), as its run's fingerprint
    describes it."""

    name: str
    kind: str
    root: str  # the server's own directory under the target's path, on the host
    host: str


class TargetFacts(TypedDict):
    """A storage target of the run, as made here (``targets.Made.describe``)."""

    name: str
    kind: str
    fstype: str | None
    size: int | None
    mkfs: list[str]  # the mkfs command run
    mount_options: list[str]
    direct_io: bool
    root: str
    root_owner_uid: int
    device: str | None
    backing_file: str | None


class StorageTargets(TypedDict):
    """The storage targets of data and wal (None: the lab home, inside PGDATA); a server on a
    host's as its roots there."""

    data: TargetFacts | HostTarget | None
    wal: TargetFacts | HostTarget | None


class OsFacts(TypedDict):
    """``[os]`` of a run: what it asked, of which block devices, and what the kernel's files
    read back then (path -> text)."""

    asked: OsJson
    devices: list[str]
    read: dict[str, str]  # the server's machine's (a server on a host: that host's)
    # [os] on hosts (sudo = true): each host's files as they read back, by host (the server's
    # host and the generator hosts); absent for a run on this machine
    hosts: NotRequired[dict[str, dict[str, str]]]


class CpuFacts(TypedDict):
    """``[os] cpus``/``client_cpus`` of a run: the CPUs its postmaster's affinity reads once
    confined, those pgbench and sysbench were started on, and whether they overlap."""

    server: list[int]
    client: list[int]
    shared: bool


class HugePagesFacts(TypedDict):
    """``[os] huge_pages`` of a run: the huge pages reserved for its server, what the kernel
    could reserve, and where the number came from ("shared_memory_size_in_huge_pages": the
    server's own, PostgreSQL 15 on; "estimate": shared_buffers, a tenth more and 64 MB)."""

    pages: int
    reserved: int
    source: str


class MemoryFacts(TypedDict, total=False):
    """``[os] memory`` of a run: the limit asked and as the kernel reads it back, the cgroup
    (its path and version), how many of the server's processes were in it once moved, how
    many files of its data directory were dropped from the page cache; after the run, what
    the group used at most."""

    bytes: int
    read: int
    cgroup: str
    cgroup_version: int
    server_processes: int
    evicted_files: int
    peak_bytes: int


class LeaseFacts(TypedDict, total=False):
    """A run's server as its lease describes itself (``postgres/lease.py``), what the views
    render: the environment's "server" line (absent: a server pglab made here), what the
    machine pgbench ran on is called, whether where the load generator ran is said, whether
    this machine's governor and THP are said, and whether ``ram_bytes`` is the server's RAM."""

    server: str
    machine: str
    client_said: bool
    os_here: bool
    ram_known: bool


def made_here() -> LeaseFacts:
    """A server pglab made on this machine: no "server" line, this machine's facts."""
    return LeaseFacts(machine="machine", client_said=False, os_here=True, ram_known=True)


def existing(fp: Fingerprint) -> LeaseFacts:
    """An existing server (its fingerprint's dsn, role and database): pgbench's machine's
    facts, its RAM not the server's."""
    server = f"existing {fp.get('server', '?')}, role {fp.get('role', '?')}"
    return LeaseFacts(
        server=f"{server}, database {fp.get('database', '?')}; pglab did not start it",
        machine="pgbench's machine",
        client_said=True,
        os_here=True,
        ram_known=False,
    )


def on_host(fp: Fingerprint) -> LeaseFacts:
    """A server pglab made on a host: the host's facts (its governor and THP not read)."""
    where = f"{fp.get('server_host', '?')} ({fp.get('hostname', '?')})"
    return LeaseFacts(
        server=f"made by pglab on {where}, database {fp.get('database', '?')}",
        machine="the server's machine",
        client_said=True,
        os_here=False,
        ram_known=True,
    )


def lease_of(fp: Fingerprint) -> LeaseFacts:
    """The run's server as its lease described it; for a run stored before leases did, the
    same description (the same functions) made from what was stored then (``server_kind``):
    the store's edge, the one place that reads the kind."""
    if "lease" in fp:
        return fp["lease"]
    kind = fp.get("server_kind")
    return existing(fp) if kind == "existing" else on_host(fp) if kind == "host" else made_here()


class Fingerprint(TypedDict, total=False):
    """Everything stored of a run's environment (``RunResult.fingerprint``)."""

    # the machine pgbench runs on (for a server on a host: that host's, pglab's in
    # ``pglab_machine``)
    pglab_version: str
    hostname: str | None
    kernel: str | None
    machine: str
    cpu_model: str | None
    cpus: int | None
    ram_bytes: int | None
    governor: str | None
    thp: str | None
    python: str
    pglab_machine: MachineFacts  # a server on a host: pglab's own machine's facts
    # the programs
    pgbench_version: str
    pgbench_from: str
    source: str
    bindir: str
    pgbench: str
    build: BuildFacts  # a build pglab made: build.json's facts
    build_commit: str  # a kind's load generator adds its own (workloads/KIND)
    # the server
    server_kind: str  # absent: a server pglab made here; "existing"; "host" (lease_of reads it)
    lease: LeaseFacts  # the server as its lease describes itself (what the views render)
    server: str
    server_host: str
    server_addr: str | None
    server_port: int | None
    database: str
    role: str
    privileges: dict[str, bool]  # of an existing server's role: superuser, createdb, ...
    server_version: str
    server_version_full: str
    server_version_num: int
    settings: dict[str, Setting]
    database_bytes: int
    server_build: dict[str, str]  # data_checksums, block_size, wal_segment_size, assertions
    # where the data lies
    pgdata: str
    pgdata_mount: Mount
    pg_wal: str | None
    pg_wal_mount: Mount
    storage: StorageTargets  # the storage targets of data and wal, as described
    # pgbench's place relative to the server
    client: str
    client_local: bool
    rtt_ms: float
    generators: dict[str, HostFacts]  # the generator hosts' facts
    # the operating system as the run found and set it
    os_state: dict[str, str]
    os: OsFacts  # [os]: asked for, and read back
    server_limits: dict[str, str]
    cpu_affinity: CpuFacts  # [os] cpus / client_cpus: the CPUs of the server and pgbench
    memory_limit: MemoryFacts  # [os] memory: the server's cgroup
    huge_pages: HugePagesFacts  # [os] huge_pages: the reservation and its source
    dropped_caches: float  # seconds it took
    hardware_counters: str  # a profiled run: what perf can count here
    fleet_worker: str  # the fleet's worker that ran it
