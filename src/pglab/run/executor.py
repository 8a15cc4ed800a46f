"""The executor: the only module that owns processes while a campaign runs.

Per campaign: the runs of a plan already made and checked (``run/campaign_run.py``, the use
case every command goes through, plans it, checks it and cleans what a dead pglab left
first), its storage targets made and undone at the end. Per run: the dataset (initialized
once, reset by copy as its policy says; on an existing server, in pglab's own database), the
server started or brought to the run's settings (reload when that suffices, restart when a
setting needs it; on an existing server, per session or by ALTER SYSTEM + reload, never a
restart), the phases (pgbench here, or on the generator hosts at once), and the run stored in
one transaction, as "ok" or as "failed" with its reason and the server log. Ctrl-C stops
everything, puts back what it changed and stores nothing half.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import psycopg

from pglab.campaign.parse import Campaign
from pglab.campaign.spec import (
    COPY_RESETS,
    PhaseSpec,
    ProfileSpec,
    RunSpec,
)
from pglab.errors import CommandError, LabError, PgbenchError, ServerError
from pglab.fingerprints import Fingerprint, MemoryFacts, OsFacts
from pglab.lab import Lab
from pglab.maintenance import clients
from pglab.maintenance.figures import Prior
from pglab.pgbench import sampling
from pglab.planning import devices
from pglab.planning.plan import Plan
from pglab.planning.preflight import targets_of
from pglab.planning.rounds import Rounds
from pglab.postgres import bench_db, kit_load, server
from pglab.postgres import dataset as datasets
from pglab.postgres.existing import ExistingServer
from pglab.postgres.interface import DsnServer, Server
from pglab.postgres.on_host import HostServer
from pglab.postgres.server import Cluster
from pglab.postgres.sources import Binaries
from pglab.profile import perf
from pglab.profile.watch import ProfileWatch
from pglab.records import PhaseResult, ProgressSample, RunResult
from pglab.run import affinity, memory_limit, os_state
from pglab.run.metrics import run_metrics
from pglab.run.phases import PhaseContext, runner_for
from pglab.run.remote import Hosts
from pglab.store.base import Store
from pglab.targets import fsbench
from pglab.targets import targets as storage_targets
from pglab.telemetry.base import Table
from pglab.telemetry.watch import PhaseWatch


class Events(Protocol):
    """What the executor tells its caller (the CLI draws progress from these)."""

    def status(self, message: str) -> None: ...
    def run_started(self, run: RunSpec, index: int, total: int) -> None: ...
    def phase_started(self, run: RunSpec, phase: str, iteration: int) -> None: ...
    def progress(self, sample: ProgressSample) -> None: ...
    # once a second in an operation phase: its progress view in words ("vacuum: scanning
    # heap 43%"), from the operation's watcher thread
    def operation(self, text: str) -> None: ...
    # once a second in a measured phase: the recent waits and the checkpoints (PhaseWatch)
    def telemetry(self, tables: dict[str, Table]) -> None: ...
    def run_finished(self, run: RunSpec, result: RunResult) -> None: ...


class QuietEvents:
    def status(self, message: str) -> None: ...
    def run_started(self, run: RunSpec, index: int, total: int) -> None: ...
    def phase_started(self, run: RunSpec, phase: str, iteration: int) -> None: ...
    def progress(self, sample: ProgressSample) -> None: ...
    def operation(self, text: str) -> None: ...
    def telemetry(self, tables: dict[str, Table]) -> None: ...
    def run_finished(self, run: RunSpec, result: RunResult) -> None: ...


@dataclass
class Outcome:
    plan: Plan
    ok: int = 0
    failed: int = 0
    run_ids: list[int] = field(default_factory=list)
    stopped_early: bool = False


def _add(timings: dict[str, float], key: str, seconds: float) -> None:
    timings[key] = timings.get(key, 0.0) + seconds


class Executor:
    def __init__(self, lab: Lab, store: Store, events: Events | None = None, reinit: bool = False):
        self.lab = lab
        self.reinit = reinit  # pgbench tables pglab did not make may be re-initialised
        self.existing: dict[str, DsnServer] = {}  # and servers made on hosts
        self.hosts = Hosts(())  # the campaign's generator hosts (run/remote.py)
        self.store = store
        self.events: Events = events or QuietEvents()
        self.cluster: Cluster | None = None
        # its data directory is thrown away after its run (dataset reset = "run"): no shutdown
        # checkpoint is worth waiting for, so it is stopped at once ("immediate")
        self.throwaway = False
        self.targets = storage_targets.Targets(lab)
        self.os = os_state.OsState(lab)  # [os]: the kernel state runs set, put back in close
        self.limits = os_state.Limits()  # [os] limits: this process's, while a run goes
        self.cpus = affinity.ServerCpus()  # [os] cpus: the local server's processes'
        self.memory = memory_limit.ServerMemory(lab)  # [os] memory: its cgroup, for a run
        self.huge = os_state.HugePages(self.os)  # [os] huge_pages: sized by the server
        self.workdirs: set[Path] = set()
        self.prepared: set[Path] = set()
        # fixed width (pid_max is at most 2^22): every data directory path, and so every
        # server's command line, of one length whichever pglab made it
        self.tag = f"{os.getpid():07d}"
        self.worker: str | None = None  # a fleet worker's name, kept in every run's fingerprint
        self.plan_runs: tuple[RunSpec, ...] = ()
        self._priors_of: str | None = None  # the run whose earlier progress _priors holds
        self._priors: dict[tuple[str, int], Prior] = {}
        # (campaign, point, phase) -> the most TPS a run of it made: its log's sampling rate
        self._tps_seen: dict[tuple[str, str, str], float] = {}
        self._tps_read: set[str] = set()  # campaigns whose stored runs _tps_seen holds

    # -- campaign ---------------------------------------------------------------------------
    def execute(self, plan: Plan, binaries: Mapping[str, Binaries]) -> Outcome:
        """Run a checked plan's runs (``run/campaign_run.py`` plans and checks it first): the
        storage targets made (and measured, with ``[storage_bench]``), the rounds of ``repeats
        = "auto"`` judged as they end, every run stored whole; what this executor made is
        undone at the end, on errors and Ctrl-C too (``close``)."""
        campaign = plan.campaign
        outcome = Outcome(plan)
        self.plan_runs = plan.runs
        try:
            self.targets.make(targets_of(plan.runs), self.events.status)
            if campaign.storage_bench.enabled and plan.runs:
                self._bench_storage(campaign, plan.runs, binaries)
            rounds = (
                Rounds(campaign, plan.points, self.store, self.events.status)
                if campaign.sequential is not None
                else None
            )
            index = 0
            for at, run in enumerate(plan.runs):
                total = len(plan.runs)
                if rounds is not None:  # repeats = "auto": decided points run no more
                    if not rounds.wanted(run):
                        continue
                    total = index + rounds.remaining(plan.runs[at:])
                index += 1
                self.events.run_started(run, index, total)
                result = self.run_one(run, binaries[run.server.binaries_key])
                outcome.run_ids.append(self.store.save_run(result))
                if result.status == "ok":
                    outcome.ok += 1
                else:
                    outcome.failed += 1
                self.events.run_finished(run, result)
                if result.status != "ok" and campaign.on_error == "stop":
                    outcome.stopped_early = True
                    break
        finally:
            self.close()
        return outcome

    def _bench_storage(
        self, campaign: Campaign, runs: tuple[RunSpec, ...], binaries: Mapping[str, Binaries]
    ) -> None:
        """[storage_bench]: pg_test_fsync (and fio) on every directory the runs write to."""
        dirs: dict[Path, None] = {}
        for run in runs:
            for target in (run.storage.data, run.storage.wal):
                root = self.targets.root_of(target)  # None for the lab's own directory
                if root is not None:
                    dirs[root] = None
            if run.storage.data is None:
                dirs[self.lab.clusters] = None
        spec = campaign.storage_bench
        for directory in dirs:
            for result in fsbench.measure(
                self.lab,
                directory,
                seconds=spec.seconds,
                fio=spec.fio,
                binaries=binaries[runs[0].server.binaries_key],
                status=self.events.status,
            ):
                self.store.save_storage_result(result)

    def close(self) -> None:
        """Stop the server, remove this process's working clusters (templates are kept) and
        tear down the storage targets it made."""
        try:
            self.limits.restore()
            self._release_memory()
            self._put_back()
            self.hosts.close()
            if self.cluster is not None:
                self.cluster.stop(self._stop_mode())
        finally:
            self.cluster = None
            for path in self.workdirs:
                shutil.rmtree(path, ignore_errors=True)
                for suffix in (".log", f".{server.OWNER_FILE}"):
                    path.with_name(path.name + suffix).unlink(missing_ok=True)
            self.workdirs.clear()
            self.prepared.clear()
            try:
                self.os.close()  # before the targets' loop devices go
            finally:
                self.targets.teardown()

    def _release_memory(self) -> MemoryFacts:
        """The run's memory cgroup removed (its server back in pglab's group); what it used.
        A failure to remove it fails no run: the next pglab removes it (its journal)."""
        try:
            return self.memory.release()
        except LabError as exc:
            self.events.status(f"warning: {exc.message}; the next pglab run will try again")
            return {}

    def _put_back(self) -> None:
        """Put back what ALTER SYSTEM changed on existing servers; a server that cannot be
        reached keeps its journal, for the next pglab to put back (``resume``)."""
        for srv in self.existing.values():
            try:
                srv.close()
            except (LabError, psycopg.Error) as exc:
                self.events.status(
                    f"warning: could not put back the settings pglab changed on {srv.key}: "
                    f"{exc}; the next pglab run will try again"
                )
        self.existing.clear()

    # -- one run ---------------------------------------------------------------------------
    def run_one(self, run: RunSpec, binaries: Binaries) -> RunResult:
        started = time.time()
        timings: dict[str, float] = {}
        phases: list[PhaseResult] = []
        log_offset = 0
        fp: Fingerprint = {}
        srv: Server | None = None
        workdir: Path | None = None
        try:
            if run.server.over_network:
                existing = self._existing_for(run, binaries, timings)
                srv = existing
                fp = existing.fingerprint(binaries)
                existing.mark_start()
            else:
                devices = self._devices(run)
                fp_os = self.os.apply(run.os, devices)  # None when it asks nothing
                self.limits.set(run.os.limits)  # inherited by the server started now, pgbench
                ds = self._dataset(run, binaries, timings)
                cluster = self._cluster_for(run, binaries, ds, timings)
                srv = cluster
                log_offset = cluster.log_size()
                self._set_up(run, binaries, cluster, devices, fp_os, timings, fp)
            self._more_facts(run, binaries, fp)
            workdir = self.lab.home / "work" / f"{self.tag}-{run.point_key}"
            self.workdirs.add(workdir)
            context = PhaseContext(
                srv, binaries, workdir, self.hosts, self.events.progress, self.events.operation,
                prior=lambda name, iteration: self._prior(run, name, iteration),
                client_cpus=affinity.client_cpus(run.os), client_limits=dict(run.os.limits),
            )  # fmt: skip
            for phase in [self._logged(run, ph) for ph in run.phases]:
                for iteration in range(1, phase.times + 1):
                    phases.append(self._phase(run, phase, iteration, context, fp, timings))
            if why := srv.changed_under_run():
                raise ServerError(why)  # restarted under the run: its numbers mean nothing
            status, error = "ok", None
        except (LabError, psycopg.Error, OSError) as exc:
            status, error = "failed", str(exc)
            failed_in_run = isinstance(exc, PgbenchError | CommandError | psycopg.Error)
            if failed_in_run and srv is not None and (why := srv.lost(grace=1.0)):
                error += f"\n({why})"
        self.limits.restore()
        if used := self._release_memory():  # the server's cgroup: the run's own
            fp.setdefault("memory_limit", {}).update(used)
        if workdir is not None:  # a dump is the run's own: the next run makes its own
            shutil.rmtree(workdir / clients.DUMP_DIR, ignore_errors=True)
        log = srv.log_since(log_offset) if srv is not None else ""
        if error is not None and (said := server.complaints(log)) and said not in error:
            error += f"\nthe server log says:\n{said}"
        metrics = run_metrics(run, phases) if status == "ok" else {}
        self._saw(run.campaign, run.point_key, metrics)
        return RunResult(
            campaign=run.campaign,
            run_key=run.run_key,
            point_key=run.point_key,
            repeat=run.repeat,
            variant=run.variant,
            label=run.label,
            spec=run.to_dict(),
            status=status,
            started_at=started,
            finished_at=time.time(),
            error=error,
            fingerprint=fp,
            phases=tuple(phases),
            metrics=metrics,
            timings=timings,
            server_log=log,
        )

    def _dataset(
        self, run: RunSpec, binaries: Binaries, timings: dict[str, float]
    ) -> datasets.Dataset:
        """The run's dataset, made if no earlier run made it, its making timed."""
        ds = datasets.ensure(
            self.lab, binaries, run.server, run.dataset, self.events.status, run.storage
        )
        timings["dataset_init_s"] = ds.init_seconds  # when made, maybe by a past run
        timings["dataset_made_now"] = float(ds.made_now)
        for step, secs in ds.init_steps.items():  # pgbench -i's: "primary keys" ...
            timings[f"dataset_init.{step.replace(' ', '_')}_s"] = secs
        return ds

    def _set_up(
        self,
        run: RunSpec,
        binaries: Binaries,
        cluster: Cluster,
        devices: list[str],
        fp_os: OsFacts | None,
        timings: dict[str, float],
        fp: Fingerprint,
    ) -> None:
        """The run's settings applied to its cluster, and the fingerprint of what it runs on
        into ``fp`` (as far as it got when a step fails)."""
        t0 = time.monotonic()
        cluster.before_start = self.huge.before_start(cluster) if run.os.huge_pages else None
        cluster.hard_limits = dict(run.os.limits)  # soft and hard, for a server started now
        how = cluster.apply(run.settings, datasets.load_catalog(self.lab, binaries))
        timings["settings_s"] = time.monotonic() - t0
        timings["restarted"] = 1.0 if how == "restart" else 0.0
        t0 = time.monotonic()
        fp.update(cluster.fingerprint(binaries))
        timings["fingerprint_s"] = time.monotonic() - t0
        fp["storage"] = {
            "data": self.targets.describe(run.storage.data),
            "wal": self.targets.describe(run.storage.wal),
        }
        fp["os_state"] = os_state.observed(devices)  # asked for or not
        if fp_os is not None:
            fp["os"] = fp_os
        if run.os.huge_pages:
            fp["huge_pages"] = self.huge.facts(run.os, restarted=how == "restart")
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

    def _more_facts(self, run: RunSpec, binaries: Binaries, fp: Fingerprint) -> None:
        """What the fingerprint says beside the server: the fleet's worker, sysbench, the
        hardware counters of a profiled run, the generator hosts."""
        if self.worker is not None:
            fp["fleet_worker"] = self.worker
        if any(ph.generator == "sysbench" for ph in run.phases):
            fp["sysbench_version"] = kit_load.sysbench_version()
        if run.profile.enabled and run.server.host is None:  # this machine's CPU: said once
            fp["hardware_counters"] = perf.hardware_counters()  # per run, not an error if none
        self.hosts.local_pgbench = binaries.exe("pgbench")  # "local" among generators
        remote = sorted({g for ph in run.phases if ph.remote for g in ph.generators})
        if remote:
            fp["generators"] = dict(self.hosts.check(remote))
            fp["client"] = f"on {', '.join(remote)} (other hosts, over the network)"

    def _phase(
        self,
        run: RunSpec,
        phase: PhaseSpec,
        iteration: int,
        context: PhaseContext,
        fp: Fingerprint,
        timings: dict[str, float],
    ) -> PhaseResult:
        """One iteration of a phase through its runner, watched by the telemetry (and perf)."""
        self.events.phase_started(run, phase.name, iteration)
        spec = run.telemetry if phase.measured else replace(run.telemetry, enabled=False)
        runner = runner_for(phase, iteration, context)
        profile = run.profile if phase.measured else ProfileSpec()
        with contextlib.ExitStack() as stack:
            runner.prepare(stack)  # an operation's dirtying, before the watching
            # perf starts before the samplers and stops after them (ProfileWatch)
            prof = stack.enter_context(
                ProfileWatch(context.server, profile, context.workdir, f"{phase.name}-{iteration}")
            )
            t0 = time.monotonic()
            watch = stack.enter_context(PhaseWatch(
                context.server, spec, fp["server_version_num"], on_live=self.events.telemetry
            ))  # fmt: skip
            _add(timings, "telemetry_s", time.monotonic() - t0)
            result = runner.run(watch)
            t0 = time.monotonic()  # the samplers stopped, the closing snapshot
        _add(timings, "telemetry_s", time.monotonic() - t0 - prof.seconds)
        if prof.seconds:
            _add(timings, "profile_s", prof.seconds)
        result = runner.finish(result)  # a kit's consistency check: after the watching
        tables = {**watch.tables, **prof.tables, **result.tables}
        return replace(result, tables=tables)

    def _devices(self, run: RunSpec) -> list[str]:
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

    def _logged(self, run: RunSpec, phase: PhaseSpec) -> PhaseSpec:
        """The phase as pgbench runs it: its per-transaction log sampled (``--sampling-rate``,
        pgbench/sampling.py) when a run of the point made more transactions a second than the
        log's budget and the phase does not set ``sampling_rate`` itself."""
        if phase.latency_log != "full" or phase.sampling_rate is not None or phase.operation:
            return phase
        if run.campaign not in self._tps_read:
            self._tps_read.add(run.campaign)
            for row in self.store.list_runs(run.campaign):
                if row.status == "ok":
                    self._saw(run.campaign, row.point_key, row.metrics)
        rate = sampling.auto_rate(self._tps_seen.get((run.campaign, run.point_key, phase.name)))
        return phase if rate is None else replace(phase, sampling_rate=rate)

    def _saw(self, campaign: str, point_key: str, metrics: Mapping[str, float]) -> None:
        for key, value in metrics.items():
            name = key[len("phase.") : -len(".tps")]
            if key.startswith("phase.") and key.endswith(".tps") and value is not None:
                seen = self._tps_seen.get((campaign, point_key, name), 0.0)
                self._tps_seen[(campaign, point_key, name)] = max(seen, value)

    def _prior(self, run: RunSpec, phase: str, iteration: int) -> Prior | None:
        """The progress of this operation phase in the point's latest stored run: what its ETA
        goes by (the same operation, options, version and dataset)."""
        if self._priors_of != run.run_key:  # read once per run
            self._priors_of, self._priors = run.run_key, {}
            done = [
                r for r in self.store.list_runs(run.campaign)
                if r.point_key == run.point_key and r.status == "ok"
            ]  # fmt: skip
            stored = self.store.get_run(done[-1].id) if done else None
            if stored is not None:  # (deleted since it was listed: no prior)
                for ph in stored.phases:
                    tables = stored.series.get(str(ph.idx), {})
                    found = [t for k, t in tables.items() if k.startswith("progress.")]
                    if found and found[0]["rows"]:
                        ended = ph.started_at + ph.elapsed_s
                        self._priors[(ph.name, ph.iteration)] = Prior(found[0]["rows"], ended)
        return self._priors.get((phase, iteration))

    def _existing_for(
        self, run: RunSpec, binaries: Binaries, timings: dict[str, float]
    ) -> DsnServer:
        """The existing server of the run (or the one made on its host, made now the first
        time), its dataset made or re-made (``reset = "reinit"``) in pglab's database, and the
        run's settings applied (per session, or by reload; restart on a host)."""
        key = run.server.server_label
        if run.server.host is not None and not run.storage.is_default:  # one per storage
            key += "|" + json.dumps(run.storage.identity(), sort_keys=True)
        srv = self.existing.get(key)
        for other in self.existing.values():  # one server at a time on a host
            if other is not srv and run.server.host is not None:
                other.pause(run.server.host)
        if srv is None and run.server.host is not None:
            self.events.status(f"making the PostgreSQL server on {run.server.host}")
            clients = [
                self.hosts.specs[g].address
                for r in self.plan_runs for ph in r.phases for g in ph.generators
                if ph.remote and g in self.hosts.specs
            ]  # fmt: skip
            srv = HostServer(
                run.server, self.lab, self.hosts.ssh(run.server.host), binaries, clients,
                run.storage,
            )  # fmt: skip
            self.existing[key] = srv
        elif srv is None:
            srv = self.existing[key] = ExistingServer(run.server, self.lab)
        srv.for_run(run.server)  # same server and database; this run's settings
        srv.wait_ready(on_status=self.events.status)  # after someone else restarted it
        copied = run.dataset.reset in COPY_RESETS  # a server made on a host: its files
        dataset = json.dumps(run.dataset.identity(), sort_keys=True)
        name = "run" if run.dataset.reset == "run" else run.point_key
        seconds = srv.use_copy(dataset, name, fresh=name == "run") if copied else 0.0
        if seconds is not None and copied:
            timings["reset_s"] = seconds
        again = run.dataset.reset == "reinit"
        ds = bench_db.ensure(
            srv, binaries, run.dataset, self.events.status, reinit=self.reinit, again=again
        )
        if seconds is None:  # its first run: the dataset just made (or found) is kept
            self.events.status(f"keeping the dataset's files on {run.server.host} for resets")
            timings["keep_s"] = srv.keep_dataset(dataset)
            if name != "run":  # a point's copy (its first run goes on in the files kept)
                timings["reset_s"] = srv.use_copy(dataset, name, fresh=True) or 0.0
        timings["dataset_init_s"] = ds.init_seconds
        timings["dataset_made_now"] = float(ds.made_now)
        if again:
            timings["reset_s"] = ds.init_seconds
        t0 = time.monotonic()
        how = srv.apply(run.settings, srv.catalog())
        timings["settings_s"] = time.monotonic() - t0
        timings["reloaded"] = 1.0 if how == "reload" else 0.0
        timings["restarted"] = 1.0 if how == "restart" else 0.0
        return srv

    def _cluster_for(
        self, run: RunSpec, binaries: Binaries, ds: datasets.Dataset, timings: dict[str, float]
    ) -> Cluster:
        policy = run.dataset.reset
        name = f"w{self.tag}-{run.point_key if policy == 'point' else ds.key}"
        datadir = (self.targets.root_of(run.storage.data) or self.lab.clusters) / name
        wal_root = self.targets.root_of(run.storage.wal)
        waldir = wal_root / f"{name}-wal" if wal_root else None
        if self.cluster is not None and (self.cluster.datadir != datadir or policy == "run"):
            t0 = time.monotonic()
            self.cluster.stop(self._stop_mode())  # the last run's server
            timings["stop_s"] = time.monotonic() - t0
            self.cluster = None
        if policy == "run" or datadir not in self.prepared:
            server.write_owner(datadir)  # before the copy, so no other pglab sweeps it away
            if waldir is not None:
                self.workdirs.add(waldir)
            self.workdirs.add(datadir)
            timings["reset_s"] = datasets.reset(
                self.lab, ds, datadir, waldir, on_status=self.events.status
            )
            self.prepared.add(datadir)
        if self.cluster is None:
            self.cluster = Cluster(binaries, self.lab, datadir, name)
        self.throwaway = policy == "run"
        return self.cluster

    def _stop_mode(self) -> str:
        """How the last run's server stops: at once when its data directory is thrown away
        (a fresh copy for every run: its shutdown checkpoint would write what nobody reads),
        else cleanly, since the next run of its point starts from what it leaves."""
        return "immediate" if self.throwaway else "fast"
