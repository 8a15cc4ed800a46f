"""This machine around a cluster pglab makes here (``postgres/lease.Machine``): ``[os]`` applied
before each run and put back after (``os_state``), this process's limits, the server's CPUs
(``affinity``), its memory cgroup (``memory_limit``), huge pages sized by the server, the
storage targets its directories go to; and what of all that goes into the run's fingerprint.
The executor owns one and closes it at the end."""

from __future__ import annotations

from pathlib import Path

from pglab.campaign.spec import RunSpec
from pglab.campaign.target_spec import TargetSpec
from pglab.fingerprints import Fingerprint, MemoryFacts, OsFacts
from pglab.lab import Lab
from pglab.planning import devices
from pglab.postgres.server import Cluster
from pglab.run import affinity, memory_limit, os_state
from pglab.targets import targets as storage_targets


class Here:
    def __init__(self, lab: Lab, targets: storage_targets.Targets):
        self.lab = lab
        self.targets = targets
        self.os = os_state.OsState(lab)  # [os]: the kernel state runs set, put back in close
        self.limits = os_state.Limits()  # [os] limits: this process's, while a run goes
        self.cpus = affinity.ServerCpus()  # [os] cpus: the local server's processes'
        self.memory = memory_limit.ServerMemory(lab)  # [os] memory: its cgroup, for a run
        self.huge = os_state.HugePages(self.os)  # [os] huge_pages: sized by the server
        self._devices: list[str] = []  # the run's, since ``enter``
        self._fp_os: OsFacts | None = None

    def enter(self, run: RunSpec) -> None:
        self._devices = self.devices(run)
        self._fp_os = self.os.apply(run.os, self._devices)  # None when it asks nothing
        self.limits.set(run.os.limits)  # inherited by the server started now, pgbench

    def root_of(self, target: TargetSpec | None) -> Path | None:
        return self.targets.root_of(target)

    def starting(self, run: RunSpec, cluster: Cluster) -> None:
        cluster.before_start = self.huge.before_start(cluster) if run.os.huge_pages else None
        cluster.hard_limits = dict(run.os.limits)  # soft and hard, for a server started now

    def describe(self, run: RunSpec, cluster: Cluster, restarted: bool, fp: Fingerprint) -> None:
        fp["storage"] = {
            "data": self.targets.describe(run.storage.data),
            "wal": self.targets.describe(run.storage.wal),
        }
        fp["os_state"] = os_state.observed(self._devices)  # asked for or not
        if self._fp_os is not None:
            fp["os"] = self._fp_os
        if run.os.huge_pages:
            fp["huge_pages"] = self.huge.facts(run.os, restarted=restarted)
        pid = cluster.proc.pid if cluster.proc is not None else None
        if cpus := self.cpus.set(pid, run.os):  # after a restart: the postmaster is new
            fp["cpu_affinity"] = cpus
        wal = (cluster.datadir / "pg_wal").resolve()  # a symlink to its own target, maybe
        dirs = [cluster.datadir] + ([] if wal.is_relative_to(cluster.datadir.resolve()) else [wal])
        if memory := self.memory.set(pid, run.os, dirs):
            fp["memory_limit"] = memory
        if run.os.limits:  # what the server runs under (one started earlier keeps its)
            fp["server_limits"] = os_state.limits_of(cluster.os_view(), dict(run.os.limits))
        if run.os.drop_caches:  # a cold run: after the server started, before phases
            fp["dropped_caches"] = os_state.drop_caches()

    def devices(self, run: RunSpec) -> list[str]:
        """The block devices under the run's PGDATA and pg_wal (none for a tmpfs)."""
        found = []
        for target in [run.storage.data] + ([run.storage.wal] if run.storage.wal else []):
            made = self.targets.made.get(target.name) if target is not None else None
            if made is not None and made.device:
                found.append(Path(made.device).name)
            elif made is None or made.target.kind == "path":
                dev = devices.device_of(made.root if made else self.lab.clusters)
                found += [dev] if dev else []
        return list(dict.fromkeys(found))

    def after_run(self) -> MemoryFacts:
        """The run's limits put back and its memory cgroup removed (a ``LabError`` when it
        cannot be): what the server used in it."""
        self.limits.restore()
        return self.memory.release()
