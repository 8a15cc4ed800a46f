"""The executor: the only module that owns processes while a campaign runs.

Per campaign session (``for_session``; ``run/campaign_run.py``, the use case every command
goes through, plans and checks first and cleans what a dead pglab left): the runs of its plan
(``run_plan``) or those its caller makes as it goes (``run_stored``: tune's), its storage
targets made and undone at the end. Per run: the dataset (initialized
once, reset by copy as its policy says; on an existing server, in pglab's own database), the
server started or brought to the run's settings (reload when that suffices, restart when a
setting needs it; on an existing server, per session or by ALTER SYSTEM + reload, never a
restart), the phases (pgbench here, or on the generator hosts at once), and the run stored in
one transaction, as "ok" or as "failed" with its reason and the server log. Ctrl-C stops
everything, puts back what it changed and stores nothing half.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import psycopg

from pglab import workloads
from pglab.campaign.parse import Campaign
from pglab.campaign.spec import (
    PhaseSpec,
    ProfileSpec,
    RunSpec,
)
from pglab.errors import CommandError, LabError, PgbenchError, ServerError
from pglab.fingerprints import Fingerprint, MemoryFacts
from pglab.lab import Lab
from pglab.pgbench import sampling
from pglab.planning.hints import PointHints, priors_of
from pglab.planning.plan import Plan
from pglab.planning.preflight import targets_of
from pglab.planning.rounds import Rounds
from pglab.postgres import server
from pglab.postgres.interface import Server
from pglab.postgres.lease import HERE, Lease, Site, Upcoming, lease_key, provision
from pglab.postgres.server import Cluster
from pglab.postgres.sources import Binaries
from pglab.profile import counters
from pglab.profile.watch import ProfileWatch
from pglab.records import PhaseResult, ProgressSample, RunMetrics, RunResult, RunStatus, Timings
from pglab.run import affinity, os_hosts
from pglab.run.machine import Here
from pglab.run.metrics import run_metrics
from pglab.run.phases import PhaseContext, runner_for
from pglab.run.remote import Hosts
from pglab.store.base import Store
from pglab.targets import fsbench
from pglab.targets import targets as storage_targets
from pglab.telemetry.base import Table
from pglab.telemetry.watch import PhaseWatch
from pglab.workloads import workload_of
from pglab.workloads.maintenance import clients
from pglab.workloads.maintenance.figures import Prior


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


def _plus(seconds: float | None, more: float) -> float:
    """A timing taken again (once per phase): the seconds so far and ``more``."""
    return (seconds or 0.0) + more


class Executor:
    def __init__(
        self,
        lab: Lab,
        store: Store,
        events: Events | None = None,
        reinit: bool = False,
        *,
        hosts: Hosts | None = None,
        worker: str | None = None,
    ):
        """Built once with what every run needs: the lab, the store, what it tells (``events``),
        whether pgbench tables pglab did not make may be re-initialised (``reinit``), the
        generator hosts of runs run by ``run_one`` (``for_session`` is given its campaign's), a
        fleet worker's name (kept in every run's fingerprint)."""
        self.lab = lab
        self.reinit = reinit  # pgbench tables pglab did not make may be re-initialised
        self.leases: dict[str, Lease] = {}  # the runs' servers, by lease_key
        self.hosts = hosts or Hosts(())  # the generator hosts (run/remote.py)
        self.store = store
        self.events: Events = events or QuietEvents()
        self.targets = storage_targets.Targets(lab)
        self.here = Here(lab, self.targets)  # [os], limits, CPUs, memory: this machine's
        self.host_os = os_hosts.HostsOs()  # [os] on hosts (sudo = true), put back in close
        self.workdirs: set[Path] = set()
        # fixed width (pid_max is at most 2^22): every data directory path, and so every
        # server's command line, of one length whichever pglab made it
        self.tag = f"{os.getpid():07d}"
        self.worker = worker  # a fleet worker's name, kept in every run's fingerprint
        self.plan_runs: tuple[RunSpec, ...] = ()
        # what this executor's own runs made, beside what the plan's hints say of stored runs:
        # (campaign, point, phase) -> the most TPS (its log's sampling rate); (campaign, point)
        # -> the operations' progress in its latest run that went well (their ETA)
        self._tps_seen: dict[tuple[str, str, str], float] = {}
        self._progress: dict[tuple[str, str], dict[tuple[str, int], Prior]] = {}

    # -- campaign ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def for_session(
        self,
        plan: Plan,
        binaries: Mapping[str, Binaries],
        hosts: Hosts | None = None,
        events: Events | None = None,
    ) -> Iterator[None]:
        """A campaign session's time on this executor (``run/campaign_run.session``: the plan
        checked first): the campaign's ``hosts`` and the live state's ``events`` taken for it,
        the storage targets of the plan's runs made (and measured, with ``[storage_bench]``);
        what this executor made undone at the end, on errors and Ctrl-C too (``close``)."""
        self.plan_runs = plan.runs
        self.hosts = hosts or self.hosts
        caller, self.events = self.events, events or self.events
        try:
            self.targets.make(targets_of(plan.runs), self.events.status)
            if plan.campaign.storage_bench.enabled and plan.runs:
                self._bench_storage(plan.campaign, plan.runs, binaries)
            yield
        finally:
            try:
                self.close()
            finally:
                self.events = caller

    def run_plan(self, plan: Plan, binaries: Mapping[str, Binaries]) -> Outcome:
        """A checked plan's runs, within ``for_session``: the rounds of ``repeats = "auto"``
        judged as they end, every run stored whole with its point's hints, the campaign
        stopped at the first failed run when its ``on_error`` says so."""
        campaign = plan.campaign
        outcome = Outcome(plan)
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
            hints = plan.hints.get(run.point_key) or PointHints()
            after = plan.runs[at + 1] if at + 1 < len(plan.runs) else None
            upcoming = Upcoming(after, binaries[after.server.binaries_key]) if after else None
            run_id, result = self.run_stored(run, binaries, hints, index, total, upcoming=upcoming)
            outcome.run_ids.append(run_id)
            if result.status == "ok":
                outcome.ok += 1
            else:
                outcome.failed += 1
            if result.status != "ok" and campaign.on_error == "stop":
                outcome.stopped_early = True
                break
        return outcome

    def run_stored(
        self,
        run: RunSpec,
        binaries: Mapping[str, Binaries],
        hints: PointHints,
        index: int,
        total: int,
        amend: Callable[[RunResult], RunResult] | None = None,
        upcoming: Upcoming | None = None,
    ) -> tuple[int, RunResult]:
        """One run within ``for_session``, told as the ``index``-th of ``total``, stored whole
        (``amend``: what its caller adds to the result first, as tune its p99); its id and
        result. The storage targets of a run its session made as it went (tune's) are made at
        its first run. ``upcoming``: the plan's next run (``run_one``)."""
        self.events.run_started(run, index, total)
        wanted = [t for t in targets_of([run]) if t.name not in self.targets.made]
        if wanted:
            self.targets.make(wanted, self.events.status)
        result = self.run_one(run, binaries[run.server.binaries_key], hints, upcoming)
        if amend is not None:
            result = amend(result)
        run_id = self.store.save_run(result)
        self.events.run_finished(run, result)
        return run_id, result

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
        """Release every lease (stopped, put back, removed), remove this process's working
        directories and tear down the storage targets it made."""
        try:
            self.here.limits.restore()
            self._release_memory()
            with contextlib.ExitStack() as releases:  # every lease, whichever fails
                for lease in self.leases.values():
                    releases.callback(lease.release, self.site)
                self.leases = {}
            for line in self.host_os.close():  # once their servers are stopped
                self.events.status(line)
            self.hosts.close()
        finally:
            for path in self.workdirs:
                shutil.rmtree(path, ignore_errors=True)
            self.workdirs.clear()
            try:
                self.here.os.close()  # before the targets' loop devices go
            finally:
                self.targets.teardown()

    @property
    def site(self) -> Site:
        """What the leases are prepared with (``postgres/lease.Site``)."""
        return Site(
            self.here,
            self.hosts.ssh,
            self._clients,
            self.events.status,
            workloads.dataset_kind,
            self.reinit,
            self.tag,
            os_hosts.OnHosts(self.host_os, self.hosts),
        )

    def _clients(self) -> list[str]:
        """The addresses of the plan's generator hosts (a server made on a host lets them in)."""
        return [
            self.hosts.specs[g].address
            for r in self.plan_runs
            for ph in r.phases
            for g in ph.generators
            if ph.remote and g in self.hosts.specs
        ]

    @property
    def cluster(self) -> Cluster | None:
        """The cluster made here for the last run on this machine, while it runs (the tests
        read its postmaster)."""
        found: Cluster | None = getattr(self.leases.get(HERE), "cluster", None)
        return found

    def _release_memory(self) -> MemoryFacts:
        """The run's memory cgroup removed (its server back in pglab's group); what it used.
        A failure to remove it fails no run: the next pglab removes it (its journal)."""
        try:
            return self.here.after_run()
        except LabError as exc:
            self.events.status(f"warning: {exc.message}; the next pglab run will try again")
            return {}

    # -- one run ---------------------------------------------------------------------------
    def run_one(
        self,
        run: RunSpec,
        binaries: Binaries,
        hints: PointHints | None = None,
        upcoming: Upcoming | None = None,
    ) -> RunResult:
        """One run, whole (``hints``: what its point's stored runs say, read with the plan;
        ``upcoming``: the plan's next run, whose copy of its dataset may begin as this one
        ends). Its profiles are folded once its lease has finished with it (its server
        stopped when its data is thrown away): off the measured path; however the run ends,
        no perf is left running."""
        folds: list[tuple[int, ProfileWatch]] = []  # perf's recordings, folded at the end
        try:
            return self._run_one(run, binaries, hints or PointHints(), upcoming, folds)
        finally:
            for _, prof in folds:  # folded (nothing left), or the run ended otherwise
                prof.discard()

    def _run_one(
        self,
        run: RunSpec,
        binaries: Binaries,
        hints: PointHints,
        upcoming: Upcoming | None,
        folds: list[tuple[int, ProfileWatch]],
    ) -> RunResult:
        started = time.time()
        timings = Timings()
        phases: list[PhaseResult] = []
        log_offset = 0
        fp: Fingerprint = {}
        srv: Server | None = None
        lease: Lease | None = None
        workdir: Path | None = None
        status: RunStatus
        try:
            lease = self._lease(run)
            prepared = lease.prepare(run, binaries, self.site, timings, fp)
            srv, log_offset = prepared.server, prepared.log_from
            self._more_facts(run, binaries, fp)
            os_hosts.refresh_generators(fp, self.hosts)  # their OS as this run finds it
            workdir = self.lab.home / "work" / f"{self.tag}-{run.point_key}"
            self.workdirs.add(workdir)
            context = PhaseContext(
                srv,
                binaries,
                workdir,
                self.hosts,
                self.events.progress,
                self.events.operation,
                prior=lambda name, iteration: self._prior(run, hints, name, iteration),
                client_cpus=affinity.client_cpus(run.os),
                client_limits=dict(run.os.limits),
            )
            for phase in [self._with_sampling_rate(run, hints, ph) for ph in run.phases]:
                for iteration in range(1, phase.times + 1):
                    result, prof = self._phase(run, phase, iteration, context, fp, timings)
                    if prof.pending:
                        folds.append((len(phases), prof))
                    phases.append(result)
            if why := srv.changed_under_run():
                raise ServerError(why)  # restarted under the run: its numbers mean nothing
            status, error = "ok", None
        except (LabError, psycopg.Error, OSError) as exc:
            status, error = "failed", str(exc)
            failed_in_run = isinstance(exc, PgbenchError | CommandError | psycopg.Error)
            if failed_in_run and srv is not None and (why := srv.lost(grace=1.0)):
                error += f"\n({why})"
        if used := self._release_memory():  # the run's limits back; the cgroup: the run's own
            fp.setdefault("memory_limit", {}).update(used)
        if workdir is not None:  # a dump is the run's own: the next run makes its own
            shutil.rmtree(workdir / clients.DUMP_DIR, ignore_errors=True)
        log = srv.log_since(log_offset) if srv is not None else ""
        if error is not None and (said := server.complaints(log)) and said not in error:
            error += f"\nthe server log says:\n{said}"
        if lease is not None:  # its server stopped if thrown away; the next copy begun
            lease.finish(upcoming, self.site, timings)
        for at, prof in folds:  # perf stopped, its unwinding: now that nothing is measured
            prof.fold()
            phases[at] = replace(phases[at], tables={**phases[at].tables, **prof.tables})
            timings.profile_s = _plus(timings.profile_s, prof.folding)
            timings.profile_fold_s = _plus(timings.profile_fold_s, prof.folding)  # after the run
        metrics = run_metrics(run, phases) if status == "ok" else RunMetrics()
        self._saw(run, metrics, phases)
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

    def _more_facts(self, run: RunSpec, binaries: Binaries, fp: Fingerprint) -> None:
        """What the fingerprint says beside the server: the fleet's worker, a kind's client, the
        hardware counters of a profiled run, the generator hosts."""
        if self.worker is not None:
            fp["fleet_worker"] = self.worker
        for told in {w.fingerprint for ph in run.phases if (w := workload_of(ph)).fingerprint}:
            told(fp)  # what a kind's client adds (sysbench's version)
        if run.profile.enabled and run.server.host is None:  # this machine's CPU: said once
            fp["hardware_counters"] = counters.hardware_counters()  # per run, not an error if none
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
        timings: Timings,
    ) -> tuple[PhaseResult, ProfileWatch]:
        """One iteration of a phase through its runner, watched by the telemetry (and perf,
        whose recording the caller folds: ``ProfileWatch.fold``)."""
        self.events.phase_started(run, phase.name, iteration)
        spec = run.telemetry if phase.measured else replace(run.telemetry, enabled=False)
        runner = runner_for(phase, iteration, context)
        profile = run.profile if phase.measured else ProfileSpec()
        with contextlib.ExitStack() as stack:
            runner.prepare(stack)  # an operation's dirtying, before the watching
            # perf starts before the samplers and stops after them (ProfileWatch)
            label = f"{phase.name}-{iteration}"
            prof = stack.enter_context(
                ProfileWatch(context.server, profile, context.workdir, label, later=True)
            )
            t0 = time.monotonic()
            watch = stack.enter_context(
                PhaseWatch(
                    context.server, spec, fp["server_version_num"], on_live=self.events.telemetry
                )
            )
            timings.telemetry_s = _plus(timings.telemetry_s, time.monotonic() - t0)
            result = runner.run(watch)
            t0 = time.monotonic()  # the samplers stopped, the closing snapshot
        timings.telemetry_s = _plus(timings.telemetry_s, time.monotonic() - t0 - prof.seconds)
        if prof.seconds:
            timings.profile_s = _plus(timings.profile_s, prof.seconds)
        result = runner.finish(result)  # a kit's consistency check: after the watching
        tables = {**watch.tables, **prof.tables, **result.tables}
        return replace(result, tables=tables), prof

    def _lease(self, run: RunSpec) -> Lease:
        """The lease of the run's server (provisioned at its first run); the others told
        that it goes next (one server at a time on a host)."""
        key = lease_key(run.server, run.storage)
        lease = self.leases.get(key)
        if lease is None:
            lease = self.leases[key] = provision(run.server, run.storage, self.lab)
        for other in self.leases.values():
            if other is not lease:
                other.yield_to(run.server)
        return lease

    def _with_sampling_rate(self, run: RunSpec, hints: PointHints, phase: PhaseSpec) -> PhaseSpec:
        """The phase as pgbench runs it: its per-transaction log sampled (``--sampling-rate``,
        pgbench/sampling.py) when a run of the point made more transactions a second than the
        log's budget and the phase does not set ``sampling_rate`` itself."""
        told = phase.pgbench
        if told.latency_log != "full" or told.sampling_rate is not None or not phase.work.GENERATED:
            return phase
        seen = [
            v
            for v in (
                hints.tps.get(phase.name),
                self._tps_seen.get((run.campaign, run.point_key, phase.name)),
            )
            if v is not None
        ]
        rate = sampling.auto_rate(max(seen) if seen else None)
        return phase if rate is None else phase.with_pgbench(sampling_rate=rate)

    def _saw(self, run: RunSpec, metrics: RunMetrics, phases: list[PhaseResult]) -> None:
        """What a run made, for the next runs of its point: its TPS by phase, and (when it went
        well) its operations' progress."""
        for name, value in metrics.by_phase("tps").items():
            seen = self._tps_seen.get((run.campaign, run.point_key, name), 0.0)
            self._tps_seen[(run.campaign, run.point_key, name)] = max(seen, value)
        if metrics:  # a run that went well
            self._progress[(run.campaign, run.point_key)] = priors_of(phases)

    def _prior(self, run: RunSpec, hints: PointHints, phase: str, iteration: int) -> Prior | None:
        """The progress of this operation phase in the point's latest run that went well (this
        executor's, else the stored one the plan's hints hold): what its ETA goes by (the same
        operation, options, version and dataset)."""
        latest = self._progress.get((run.campaign, run.point_key), hints.priors)
        return latest.get((phase, iteration))
