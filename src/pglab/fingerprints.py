"""A run's fingerprint, typed: what the numbers depend on besides the campaign's own choices,
as ``postgres/fingerprint`` reads it and the executor adds to it, stored as JSON with the run
and read back by ``show``, ``compare``, the report and the warnings.

The types are ``TypedDict``s, so a fingerprint is the same dict it always was (stored and read
back byte for byte, by this version and the ones before it) while mypy checks every key a
reader asks for. Every key may be missing (``total=False``): a fingerprint of an older
version lacks the keys added since, one of an existing server lacks what pglab cannot read of
its machine, and a failed run's stops where it failed. Keys that older versions wrote and this
one no longer does are declared too, each saying so, for the readers that still meet them.
"""

from __future__ import annotations

from typing import Any, TypedDict


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
    pglab_machine: dict[str, Any]  # a server on a host: pglab's own machine's facts
    # the programs
    pgbench_version: str
    pgbench_from: str
    source: str
    bindir: str
    pgbench: str
    build: dict[str, Any]  # a build pglab made: build.json's facts (BUILD_FACTS)
    build_commit: str
    sysbench_version: str
    # the server
    server_kind: str  # absent: a server pglab made here; "existing"; "host"
    server: str
    server_host: str
    server_addr: str | None
    server_port: int | None
    database: str
    role: str
    privileges: dict[str, Any]
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
    storage: dict[str, Any]  # the storage targets of data and wal, as described
    # pgbench's place relative to the server
    client: str
    client_local: bool
    rtt_ms: float
    generators: dict[str, dict[str, Any]]  # the generator hosts' facts
    # the operating system as the run found and set it
    os_state: dict[str, str]
    os: dict[str, Any]  # [os]: asked for, and read back
    server_limits: dict[str, str]
    dropped_caches: float  # seconds it took
    hardware_counters: str  # a profiled run: what perf can count here
    fleet_worker: str  # the fleet's worker that ran it
