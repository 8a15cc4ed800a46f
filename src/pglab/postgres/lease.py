"""A server is a lease: whatever a run measures has one life, whoever starts it.

``provision(spec, storage, lab)`` gives every kind of server (the embedded PostgreSQL, a bindir,
a build pglab made: a cluster here; an existing server reached by a dsn; a server pglab makes on
a host over SSH) the same life: ``prepare`` for a run (its dataset made, copied or reset as the
run says, the run's settings applied, the fingerprint of what it runs on), then use (what
``prepare`` gives back is an ``interface.Server``, what the phase runners and the telemetry
use), ``release`` at the end (stopped, put back, removed). ``describe()`` is the lease's own
description, stored in the fingerprint (``lease``) and what the views render; ``check()`` is
what the checks before the first run ask of it (``planning/preflight``). The executor holds
leases and never asks which kind it has: that is decided here, once.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import psycopg

from pglab import fingerprints
from pglab.campaign.spec import COPY_RESETS, DatasetSpec, RunSpec, ServerSpec, StorageSpec
from pglab.errors import LabError
from pglab.fingerprints import Fingerprint, LeaseFacts
from pglab.lab import Lab
from pglab.postgres import bench_db, server
from pglab.postgres import dataset as datasets
from pglab.postgres.ahead import CopyAhead
from pglab.postgres.dataset import DatasetKind
from pglab.postgres.existing import ExistingServer
from pglab.postgres.interface import DsnServer, OsView, Server
from pglab.postgres.server import Cluster
from pglab.postgres.sources import Binaries
from pglab.records import Timings

if TYPE_CHECKING:  # asyncssh takes a while to import; a local server never needs it
    from pglab.campaign.target_spec import TargetSpec
    from pglab.hosts.ssh import Remote
    from pglab.postgres.reach import Facts

HERE = "here"  # the key of the lease of clusters made on this machine: one at a time


class Machine(Protocol):
    """This machine around a cluster pglab makes here (``run/machine.py``: ``[os]``, the
    storage targets, the server's CPUs, memory cgroup and limits)."""

    def enter(self, run: RunSpec) -> None:
        """Before the run's server starts: ``[os]`` applied, this process's limits set."""
        ...

    def root_of(self, target: TargetSpec | None) -> Path | None:
        """Where a storage target's directories go (None: the lab's own)."""
        ...

    def starting(self, run: RunSpec, cluster: Cluster) -> None:
        """What the cluster starts with (huge pages reserved, hard limits)."""
        ...

    def describe(self, run: RunSpec, cluster: Cluster, restarted: bool, fp: Fingerprint) -> None:
        """This machine's part of the run's fingerprint (storage, OS state, CPUs, memory)."""
        ...


class HostOs(Protocol):
    """``[os]`` on the hosts of a server made on a host (``run/os_hosts.py``, through sudo):
    applied before its run, recorded into its fingerprint, the limits its server starts with."""

    def apply(self, run: RunSpec) -> dict[str, dict[str, str]]:
        """The run's sysctls set on its hosts; what each host's files read back, by host."""
        ...

    def record(
        self, run: RunSpec, view: OsView | None, read: dict[str, dict[str, str]], fp: Fingerprint
    ) -> None:
        """What [os] set there, into the run's fingerprint (and its server's CPUs confined)."""
        ...

    def limits_for(self, run: RunSpec) -> dict[str, int]:
        """The ``[os] limits`` the run's server on a host starts with (soft and hard)."""
        ...


@dataclass(frozen=True)
class Site:
    """What a lease is prepared with, the executor's: this machine, the campaign's hosts by
    name (``remote``), the addresses of its generator hosts (``clients``: a server made on a
    host lets them in), where to say what is going on, each dataset's kind (``datasets``: the
    workloads' registry, ``workloads.dataset_kind``, whose loaders make a kind's tables), and
    whether pgbench tables pglab did not make may be re-initialised (``reinit``)."""

    machine: Machine
    remote: Callable[[str], Remote]
    clients: Callable[[], list[str]]
    status: Callable[[str], None]
    datasets: Callable[[DatasetSpec], DatasetKind | None]
    reinit: bool = False
    tag: str = ""  # names this process's working clusters
    host_os: HostOs | None = None  # [os] on a server's host (none: nothing there)


@dataclass(frozen=True)
class Prepared:
    """A lease ready for a run: the server to use, and where the run's part of its log starts."""

    server: Server
    log_from: int = 0


@dataclass(frozen=True)
class Upcoming:
    """The run the plan has next, and its server's binaries."""

    run: RunSpec
    binaries: Binaries


@dataclass(frozen=True)
class Check:
    """What the checks before the first run learn of a server that exists before it: where it
    is, its facts, why pglab's database cannot be made there, and what it says of settings."""

    where: str
    facts: Facts
    database: list[str]
    settings: Callable[[Mapping[str, str], str], list[str]]


class Lease(Protocol):
    key: str

    def prepare(
        self, run: RunSpec, binaries: Binaries, site: Site, timings: Timings, fp: Fingerprint
    ) -> Prepared:
        """Ready for ``run``: its dataset, its settings, its fingerprint (into ``fp``, as far
        as it got when a step fails); the run's timings into ``timings``."""
        ...

    def finish(self, upcoming: Upcoming | None, site: Site, timings: Timings) -> None:
        """The run is over (its log read): what can be done before the next one begins is
        begun (``upcoming``: the next run of the plan, when it is known)."""
        ...

    def yield_to(self, spec: ServerSpec) -> None:
        """Another lease's run comes next, on the server of ``spec``."""
        ...

    def release(self, site: Site) -> None:
        """The end: stopped, what pglab changed put back, what it made removed."""
        ...

    def describe(self) -> LeaseFacts:
        """The lease's own description, as the views render it."""
        ...

    def check(self, reinit: bool = False) -> Check | None:
        """What the checks before the first run ask of it (None: nothing to reach yet)."""
        ...


def lease_key(spec: ServerSpec, storage: StorageSpec) -> str:
    """Which runs share a lease: every cluster made here one (one server at a time), an
    existing server by its label, a server on a host by its label and its storage."""
    if not spec.over_network:
        return HERE
    key = spec.server_label
    if spec.host is not None and not storage.is_default:  # one per storage
        key += "|" + json.dumps(storage.identity(), sort_keys=True)
    return key


def provision(spec: ServerSpec, storage: StorageSpec, lab: Lab) -> Lease:
    """The lease of a run's server: the one place that tells the kinds of server apart."""
    if not spec.over_network:
        return LocalLease(lab)
    if spec.host is not None:
        return DsnLease(lease_key(spec, storage), spec, storage, lab, on_host=True)
    return DsnLease(lease_key(spec, storage), spec, storage, lab, on_host=False)


class LocalLease:
    """A cluster pglab makes here: its dataset made once and copied into a working cluster as
    its reset says, started with the run's settings, stopped when another takes its place."""

    key = HERE

    def __init__(self, lab: Lab):
        self.lab = lab
        self.cluster: Cluster | None = None
        self.prepared: set[Path] = set()
        self.dirs: set[Path] = set()  # the working clusters (and WAL directories) it made
        # its data directory is thrown away after its run (dataset reset = "run"): no shutdown
        # checkpoint is worth waiting for, so it is stopped at once ("immediate")
        self.throwaway = False
        self.ahead: CopyAhead | None = None  # the next run's copy, begun as the last one ended

    def prepare(
        self, run: RunSpec, binaries: Binaries, site: Site, timings: Timings, fp: Fingerprint
    ) -> Prepared:
        if self.ahead is not None:  # the copy begun as the last run ended, done before [os]
            timings.reset_waited_s = self.ahead.wait()
        site.machine.enter(run)
        kind = site.datasets(run.dataset)
        ds = datasets.ensure(
            self.lab, binaries, run.server, run.dataset, site.status, run.storage, kind
        )
        timings.dataset_init_s = ds.init_seconds  # when made, maybe by a past run
        timings.dataset_made_now = ds.made_now
        timings.dataset_init_steps.update(ds.init_steps)  # pgbench -i's: "primary keys" ...
        cluster = self._cluster_for(run, binaries, ds, site, timings)
        log_from = cluster.log_size()
        t0 = time.monotonic()
        site.machine.starting(run, cluster)
        how = cluster.apply(run.settings, datasets.load_catalog(self.lab, binaries))
        timings.settings_s = time.monotonic() - t0
        timings.restarted = how == "restart"
        t0 = time.monotonic()
        fp.update(cluster.fingerprint(binaries))
        timings.fingerprint_s = time.monotonic() - t0
        fp["lease"] = self.describe()
        site.machine.describe(run, cluster, how == "restart", fp)
        return Prepared(cluster, log_from)

    def _cluster_for(
        self, run: RunSpec, binaries: Binaries, ds: datasets.Dataset, site: Site, timings: Timings
    ) -> Cluster:
        policy = run.dataset.reset
        name, datadir, waldir = self._dirs(run, ds.key, site)
        if self.cluster is not None and (self.cluster.datadir != datadir or policy == "run"):
            t0, running = time.monotonic(), self.cluster.running
            self.cluster.stop(self._stop_mode())  # the last run's server (unless finish did)
            if running:
                timings.stop_s = time.monotonic() - t0
            self.cluster = None
        copied = False
        ahead, self.ahead = self.ahead, None
        if ahead is not None:  # the copy begun as the last run ended (done: prepare waited)
            copied = policy == "run" and ahead.fits(datadir, waldir, ds.key)
            if copied:
                timings.reset_s, timings.reset_ahead = ahead.seconds, True
        if not copied and (policy == "run" or datadir not in self.prepared):
            server.write_owner(datadir)  # before the copy, so no other pglab sweeps it away
            if waldir is not None:
                self.dirs.add(waldir)
            self.dirs.add(datadir)
            timings.reset_s = datasets.reset(self.lab, ds, datadir, waldir, on_status=site.status)
            self.prepared.add(datadir)
        if self.cluster is None:
            self.cluster = Cluster(binaries, self.lab, datadir, name)
        self.throwaway = run.dataset.reset == "run"
        return self.cluster

    def _dirs(self, run: RunSpec, key: str, site: Site) -> tuple[str, Path, Path | None]:
        """A run's working cluster: its name, data directory and WAL directory (or None)."""
        name = f"w{site.tag}-{run.point_key if run.dataset.reset == 'point' else key}"
        datadir = (site.machine.root_of(run.storage.data) or self.lab.clusters) / name
        wal_root = site.machine.root_of(run.storage.wal)
        return name, datadir, wal_root / f"{name}-wal" if wal_root else None

    def finish(self, upcoming: Upcoming | None, site: Site, timings: Timings) -> None:
        """A server whose data directory is thrown away is stopped now (at once); when the
        next run is made here with a fresh copy of a dataset that exists, that copy is begun
        (``ahead.CopyAhead``), to be taken by its ``prepare``."""
        if self.cluster is None or not self.throwaway:
            return
        t0 = time.monotonic()
        self.cluster.stop(self._stop_mode())
        timings.stop_s = time.monotonic() - t0
        if upcoming is None or self.ahead is not None:
            return
        run = upcoming.run
        if run.server.over_network or run.dataset.reset != "run":
            return
        ds = datasets.found(self.lab, run.server, run.dataset, run.storage)
        if ds is None:  # made by the next run's prepare, which copies it then
            return
        _, datadir, waldir = self._dirs(run, ds.key, site)
        if not datadir.parent.is_dir() or (waldir is not None and not waldir.parent.is_dir()):
            return
        server.write_owner(datadir)  # before the copy, so no other pglab sweeps it away
        self.dirs.update(d for d in (datadir, waldir) if d is not None)
        self.ahead = CopyAhead.start(self.lab, ds, datadir, waldir, site.status)

    def _stop_mode(self) -> str:
        """How the last run's server stops: at once when its data directory is thrown away
        (a fresh copy for every run: its shutdown checkpoint would write what nobody reads),
        else cleanly, since the next run of its point starts from what it leaves."""
        return "immediate" if self.throwaway else "fast"

    def yield_to(self, spec: ServerSpec) -> None:
        """Kept running: it is on pglab's machine, not on the next server's host."""

    def release(self, site: Site) -> None:
        try:
            if self.cluster is not None:
                self.cluster.stop(self._stop_mode())
        finally:
            self.cluster = None
            ahead, self.ahead = self.ahead, None
            if ahead is not None:  # a copy begun for a run that will not come
                ahead.wait()
            for path in self.dirs:
                shutil.rmtree(path, ignore_errors=True)
                for suffix in (".log", f".{server.OWNER_FILE}"):
                    path.with_name(path.name + suffix).unlink(missing_ok=True)
            self.dirs.clear()
            self.prepared.clear()

    def describe(self) -> LeaseFacts:
        return fingerprints.made_here()

    def check(self, reinit: bool = False) -> Check | None:
        return None  # its source and settings are checked against the version's catalog


class DsnLease:
    """A server reached by a dsn: an existing one (never started by pglab, its settings per
    session or by reload, journaled) or one pglab makes on a host at its first run (``on_host``:
    started, restarted and removed by pglab over SSH). Its dataset lives in pglab's database
    there; where pglab owns the files, a copy of them resets it."""

    def __init__(self, key: str, spec: ServerSpec, storage: StorageSpec, lab: Lab, on_host: bool):
        self.key, self.spec, self.storage, self.lab = key, spec, storage, lab
        self.on_host = on_host
        self.server: DsnServer | None = None
        self.fp: Fingerprint = {}

    def _made(self, run: RunSpec, binaries: Binaries, site: Site) -> DsnServer:
        limits = site.host_os.limits_for(run) if site.host_os and self.on_host else {}
        if self.server is not None:
            if self.on_host:  # [os] limits: for a server (re)started from now on
                self.server.hard_limits = dict(limits)  # type: ignore[attr-defined]
            return self.server
        if self.on_host and self.spec.host is not None:
            from pglab.postgres.on_host import HostServer  # asyncssh: only when a host has one

            site.status(f"making the PostgreSQL server on {self.spec.host}")
            self.server = HostServer(
                self.spec,
                self.lab,
                site.remote(self.spec.host),
                binaries,
                site.clients(),
                self.storage,
                limits,
            )
        else:
            self.server = ExistingServer(self.spec, self.lab)
        return self.server

    def prepare(
        self, run: RunSpec, binaries: Binaries, site: Site, timings: Timings, fp: Fingerprint
    ) -> Prepared:
        read = site.host_os.apply(run) if site.host_os else {}  # [os] on its hosts, or nothing
        srv = self._made(run, binaries, site)
        srv.for_run(run.server)  # same server and database; this run's settings
        srv.wait_ready(on_status=site.status)  # after someone else restarted it
        copied = run.dataset.reset in COPY_RESETS  # a server made on a host: its files
        dataset = json.dumps(run.dataset.identity(), sort_keys=True)
        name = "run" if run.dataset.reset == "run" else run.point_key
        seconds = srv.use_copy(dataset, name, fresh=name == "run") if copied else 0.0
        if seconds is not None and copied:
            timings.reset_s = seconds
        again = run.dataset.reset == "reinit"
        ds = bench_db.ensure(
            srv,
            binaries,
            run.dataset,
            site.status,
            reinit=site.reinit,
            again=again,
            kind=site.datasets(run.dataset),
            whole=self.on_host,  # pglab made it: a kind's roles and databases may go there
        )
        if seconds is None:  # its first run: the dataset just made (or found) is kept
            site.status(f"keeping the dataset's files on {run.server.host} for resets")
            timings.keep_s = srv.keep_dataset(dataset)
            if name != "run":  # a point's copy (its first run goes on in the files kept)
                timings.reset_s = srv.use_copy(dataset, name, fresh=True) or 0.0
        timings.dataset_init_s = ds.init_seconds
        timings.dataset_made_now = ds.made_now
        if again:
            timings.reset_s = ds.init_seconds
        t0 = time.monotonic()
        how = srv.apply(run.settings, srv.catalog())
        timings.settings_s = time.monotonic() - t0
        timings.reloaded = how == "reload"
        timings.restarted = how == "restart"
        fp.update(srv.fingerprint(binaries))
        if site.host_os is not None:  # what [os] set on its hosts (and its CPUs confined)
            site.host_os.record(run, srv.os_view(), read, fp)
        self.fp = fp
        fp["lease"] = self.describe()
        srv.mark_start()
        return Prepared(srv)

    def finish(self, upcoming: Upcoming | None, site: Site, timings: Timings) -> None:
        """Nothing: its dataset is reset when its next run is prepared."""

    def yield_to(self, spec: ServerSpec) -> None:
        if self.server is not None and spec.host is not None:  # one server at a time there
            self.server.pause(spec.host)

    def release(self, site: Site) -> None:
        """What ALTER SYSTEM changed put back (or what pglab made on the host removed); a
        server that cannot be reached keeps its journal, for the next pglab (``resume``)."""
        if self.server is None:
            return
        srv, self.server = self.server, None
        try:
            srv.close()
        except (LabError, psycopg.Error) as exc:  # said, never raised at the end
            site.status(
                f"warning: could not put back the settings pglab changed on {srv.key}: "
                f"{exc}; the next pglab run will try again"
            )

    def describe(self) -> LeaseFacts:
        """What its fingerprint (made by ``prepare``) says of it."""
        return fingerprints.on_host(self.fp) if self.on_host else fingerprints.existing(self.fp)

    def check(self, reinit: bool = False) -> Check | None:
        """An existing server reached now (a ``LabError`` when it cannot be): its facts, and
        whether pglab's database can be made; a server made on a host is not there yet (its
        host is checked)."""
        if self.on_host:
            return None
        srv = ExistingServer(self.spec, self.lab)
        facts = srv.facts()
        return Check(srv.where, facts, bench_db.problems(srv, reinit), srv.check_settings)
