"""The executor: the only module that owns processes while a campaign runs.

Per campaign: stop leftovers of a dead pglab, resolve the server sources, check every setting and
custom script before the first run, then run the plan. Per run: the dataset (initialized once,
reset by copy as its policy says), the server started or brought to the run's settings (reload
when that suffices, restart when a setting needs it), the phases, and the run stored in one
transaction, as "ok" or as "failed" with its reason and the server log. Ctrl-C stops everything
and stores nothing half.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import psycopg

from . import (
    analysis,
    changes,
    fingerprint,
    fsbench,
    pgbench,
    procs,
    server,
    settings,
    storage_targets,
)
from . import dataset as datasets
from .campaign import Campaign
from .errors import CampaignError, CommandError, LabError, PgbenchError
from .lab import Lab
from .plan import Plan, make_plan
from .records import PhaseResult, ProgressSample, RunResult
from .server import Cluster
from .sources import Binaries, resolve
from .spec import RunSpec
from .telemetry.watch import PhaseWatch


class Events(Protocol):
    """What the executor tells its caller (the CLI draws progress from these)."""

    def status(self, message: str) -> None: ...
    def run_started(self, run: RunSpec, index: int, total: int) -> None: ...
    def phase_started(self, run: RunSpec, phase: str, iteration: int) -> None: ...
    def progress(self, sample: ProgressSample) -> None: ...
    def run_finished(self, run: RunSpec, result: RunResult) -> None: ...


class QuietEvents:
    def status(self, message: str) -> None: ...
    def run_started(self, run: RunSpec, index: int, total: int) -> None: ...
    def phase_started(self, run: RunSpec, phase: str, iteration: int) -> None: ...
    def progress(self, sample: ProgressSample) -> None: ...
    def run_finished(self, run: RunSpec, result: RunResult) -> None: ...


@dataclass
class Outcome:
    plan: Plan
    ok: int = 0
    failed: int = 0
    run_ids: list[int] = field(default_factory=list)
    stopped_early: bool = False


def preflight(campaign: Campaign, lab: Lab) -> tuple[Plan, dict[str, Binaries]]:
    """Resolve sources and check every setting and script of every point; raise listing all."""
    plan = make_plan(campaign)
    binaries: dict[str, Binaries] = {}
    problems: list[str] = []
    for point in plan.points:
        label = point.server.source_label
        if label not in binaries:
            binaries[label] = resolve(point.server, lab)
    catalogs = {label: datasets.load_catalog(lab, b) for label, b in binaries.items()}
    checked: set[tuple] = set()
    for point in plan.points:
        b = binaries[point.server.source_label]
        key = (b.label, point.server.settings)
        if key in checked:
            continue
        checked.add(key)
        names = [n for n, _ in point.server.settings]
        managed = sorted(n for n in names if n.lower() in server.LAB_MANAGED)
        where = f'point "{point.label}" (PostgreSQL {b.version}): '
        for name in managed:
            problems.append(f"{where}{name} is managed by pglab and cannot be set")
        catalog = catalogs[b.label]
        other_versions = _versions_having(names, b, binaries, catalogs)
        for name, versions in other_versions.items():
            problems.append(
                f"{where}{name} does not exist in PostgreSQL {b.version}, only in "
                f"{versions}: set it in the settings of the variants of those versions"
            )
        problems += settings.validate(
            {
                n: v
                for n, v in point.server.settings
                if n.lower() not in server.LAB_MANAGED and n not in other_versions
            },
            catalog,
            where=where,
        )
    problems = list(dict.fromkeys(problems))
    settings.raise_if_problems(problems)
    _check_scripts(plan, binaries)
    storage_targets.require(targets_of(plan.points), lab)
    if campaign.storage_bench.enabled and campaign.storage_bench.fio and not shutil.which("fio"):
        raise CampaignError(
            "[storage_bench] fio = true, but fio is not installed",
            hint="install Debian's fio package (apt-get install fio), or set fio = false",
        )
    return plan, binaries


def _versions_having(
    names: list[str],
    mine: Binaries,
    binaries: Mapping[str, Binaries],
    catalogs: Mapping[str, Mapping],
) -> dict[str, str]:
    """Settings unknown to ``mine`` that another server version of the campaign has:
    name -> "PostgreSQL 18.6 (embedded)"."""
    found: dict[str, str] = {}
    for name in names:
        if settings.exists(name, catalogs[mine.label]):
            continue
        having = [
            f"PostgreSQL {b.version} ({b.label})"
            for label, b in binaries.items()
            if b.major != mine.major and settings.exists(name, catalogs[label])
        ]
        if having:
            found[name] = ", ".join(having)
    return found


def targets_of(runs) -> list:
    """The storage targets the runs use (PGDATA's and pg_wal's), each once."""
    found = {}
    for run in runs:
        for t in (run.storage.data, run.storage.wal):
            if t is not None:
                found[t.name] = t
    return list(found.values())


def _check_scripts(plan: Plan, binaries: Mapping[str, Binaries]) -> None:
    """pgbench parses its scripts before it connects: a parse that ends at connecting is clean."""
    seen: set[tuple[str, str]] = set()
    for point in plan.points:
        b = binaries[point.server.source_label]
        for phase in point.phases:
            for script in phase.scripts:
                if script.path is None or (b.label, script.path) in seen:
                    continue
                seen.add((b.label, script.path))
                res = procs.run(
                    [
                        b.exe("pgbench"),
                        "-n",
                        "-t",
                        "1",
                        "-f",
                        script.path,
                        "-h",
                        "/nonexistent-pglab-socket-dir",
                        "-p",
                        "1",
                        "postgres",
                    ],
                    timeout=30,
                    check=False,
                )
                err = (res.stderr or "") + (res.stdout or "")
                if "connection to server" not in err and "could not connect" not in err:
                    raise CampaignError(
                        f"custom script {script.path} is not valid for pgbench {b.pgbench_version}:"
                        f"\n{procs.tail(err)}",
                        hint="fix the script; `pgbench --help` and the pgbench docs list the "
                        "meta-commands (\\set, \\sleep, ...)",
                    )


class Executor:
    def __init__(self, lab: Lab, store, events: Events | None = None):
        self.lab = lab
        self.store = store
        self.events: Events = events or QuietEvents()
        self.cluster: Cluster | None = None
        self.targets = storage_targets.Targets(lab)
        self.workdirs: set[Path] = set()
        self.prepared: set[Path] = set()
        self.tag = f"{os.getpid()}"

    # -- campaign ---------------------------------------------------------------------------
    def run_campaign(self, campaign: Campaign, replace: bool = False) -> Outcome:
        """Run what is not stored yet. Stored runs of points the campaign file no longer has
        (it was edited) stop it with an error, or are deleted first when ``replace``."""
        for line in clean_leftovers(self.lab):
            self.events.status(line)
        plan, binaries = preflight(campaign, self.lab)
        stale = find_stale(self.store, campaign.name, plan.points)
        if stale and not replace:
            raise stale_error(campaign.name, stale)
        if stale:
            n = self.store.delete_points(campaign.name, [s.point_key for s in stale])
            self.events.status(
                f"--replace: deleted {n} stored run(s) of {len(stale)} changed point(s)"
            )
        self.store.ensure_campaign(campaign.name, campaign.document, campaign.source_file)
        plan = make_plan(campaign, self.store.done_run_keys(campaign.name))
        outcome = Outcome(plan)
        if plan.done:
            self.events.status(
                f"resuming: {plan.done} run(s) already stored, {len(plan.runs)} to do"
            )
        try:
            self.targets.make(targets_of(plan.runs), self.events.status)
            if campaign.storage_bench.enabled and plan.runs:
                self._bench_storage(campaign, plan.runs, binaries)
            for index, run in enumerate(plan.runs, 1):
                self.events.run_started(run, index, len(plan.runs))
                result = self.run_one(run, binaries[run.server.source_label])
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

    def _bench_storage(self, campaign: Campaign, runs, binaries: Mapping[str, Binaries]) -> None:
        """[storage_bench]: pg_test_fsync (and fio) on every directory the runs write to."""
        dirs: dict[Path, None] = {}
        for run in runs:
            for target in (run.storage.data, run.storage.wal):
                if target is not None:
                    dirs[self.targets.root_of(target)] = None
            if run.storage.data is None:
                dirs[self.lab.clusters] = None
        spec = campaign.storage_bench
        for directory in dirs:
            for result in fsbench.measure(
                self.lab,
                directory,
                seconds=spec.seconds,
                fio=spec.fio,
                binaries=binaries[runs[0].server.source_label],
                status=self.events.status,
            ):
                self.store.save_storage_result(result)

    def close(self) -> None:
        """Stop the server, remove this process's working clusters (templates are kept) and
        tear down the storage targets it made."""
        try:
            if self.cluster is not None:
                self.cluster.stop()
        finally:
            self.cluster = None
            for path in self.workdirs:
                shutil.rmtree(path, ignore_errors=True)
                for suffix in (".log", f".{server.OWNER_FILE}"):
                    path.with_name(path.name + suffix).unlink(missing_ok=True)
            self.workdirs.clear()
            self.prepared.clear()
            self.targets.teardown()

    # -- one run ---------------------------------------------------------------------------
    def run_one(self, run: RunSpec, binaries: Binaries) -> RunResult:
        started = time.time()
        timings: dict[str, float] = {}
        phases: list[PhaseResult] = []
        log_offset = 0
        fp: dict = {}
        try:
            ds = datasets.ensure(
                self.lab, binaries, run.server, run.dataset, self.events.status, run.storage
            )
            timings["dataset_init_s"] = ds.init_seconds  # when it was made, maybe by a past run
            timings["dataset_made_now"] = float(ds.made_now)
            cluster = self._cluster_for(run, binaries, ds, timings)
            log_offset = cluster.log_size()
            t0 = time.monotonic()
            how = cluster.apply(
                dict(run.server.settings), datasets.load_catalog(self.lab, binaries)
            )
            timings["settings_s"] = time.monotonic() - t0
            timings["restarted"] = 1.0 if how == "restart" else 0.0
            fp = fingerprint.of_run(cluster)
            fp["storage"] = {
                "data": self.targets.describe(run.storage.data),
                "wal": self.targets.describe(run.storage.wal),
            }
            workdir = self.lab.home / "work" / f"{self.tag}-{run.point_key}"
            self.workdirs.add(workdir)
            for phase in run.phases:
                for iteration in range(1, phase.times + 1):
                    self.events.phase_started(run, phase.name, iteration)
                    spec = (
                        run.telemetry if phase.measured else replace(run.telemetry, enabled=False)
                    )
                    with PhaseWatch(cluster, spec, fp["server_version_num"]) as watch:
                        result = pgbench.run_phase(
                            binaries,
                            phase,
                            iteration,
                            cluster.pgbench_conn_args(),
                            workdir,
                            on_progress=self.events.progress,
                            on_spawn=watch.set_pgbench,
                        )
                    phases.append(replace(result, tables=watch.tables))
            status, error = "ok", None
        except (LabError, psycopg.Error, OSError) as exc:
            status, error = "failed", str(exc)
            failed_in_run = isinstance(exc, PgbenchError | CommandError | psycopg.Error)
            if failed_in_run and self.cluster and not self.cluster.running:
                error += "\n(the server was not running at the end of the run)"
        log = self.cluster.log_since(log_offset) if self.cluster else ""
        if error is not None and (said := server.complaints(log)) and said not in error:
            error += f"\nthe server log says:\n{said}"
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
            metrics=run_metrics(run, phases) if status == "ok" else {},
            timings=timings,
            server_log=log,
        )

    def _cluster_for(
        self, run: RunSpec, binaries: Binaries, ds: datasets.Dataset, timings: dict[str, float]
    ) -> Cluster:
        policy = run.dataset.reset
        name = f"w{self.tag}-{run.point_key if policy == 'point' else ds.key}"
        datadir = (self.targets.root_of(run.storage.data) or self.lab.clusters) / name
        wal_root = self.targets.root_of(run.storage.wal)
        waldir = wal_root / f"{name}-wal" if wal_root else None
        if self.cluster is not None and (self.cluster.datadir != datadir or policy == "run"):
            self.cluster.stop()
            self.cluster = None
        if policy == "run" or datadir not in self.prepared:
            server.write_owner(datadir)  # before the copy, so no other pglab sweeps it away
            if waldir is not None:
                self.workdirs.add(waldir)
            self.workdirs.add(datadir)
            timings["reset_s"] = datasets.reset(self.lab, ds, datadir, waldir)
            self.prepared.add(datadir)
        if self.cluster is None:
            self.cluster = Cluster(binaries, self.lab, datadir, name)
        return self.cluster


def run_metrics(run: RunSpec, phases: list[PhaseResult]) -> dict[str, float]:
    """TPS and latency per phase (mean over its iterations), the run's TPS, derived metrics."""
    metrics: dict[str, float] = {}
    by_name: dict[str, list[PhaseResult]] = {}
    for ph in phases:
        by_name.setdefault(ph.name, []).append(ph)
    steady: dict[int, float] = {}  # id(phase result) -> its steady-state TPS
    for ph in phases:
        series = [s.tps for s in ph.progress]
        if len(series) >= 20:  # MSER needs a few batches of 5 s to tell warm-up from noise
            start = analysis.steady_start(series)
            steady[id(ph)] = statistics.fmean(series[start:])
    for name, items in by_name.items():
        metrics[f"phase.{name}.tps"] = statistics.fmean(p.report.tps for p in items)
        with_steady = [steady[id(p)] for p in items if id(p) in steady]
        if with_steady:
            # per-second TPS after the warm-up MSER-5 detects, and the trend over the phase
            metrics[f"phase.{name}.tps_steady"] = statistics.fmean(with_steady)
            trend = analysis.drift([s.tps for s in items[-1].progress])
            if trend is not None:
                metrics[f"phase.{name}.drift_pct"] = trend.change_pct
        lats = [p.report.latency_avg_ms for p in items if p.report.latency_avg_ms is not None]
        if lats:
            metrics[f"phase.{name}.latency_avg_ms"] = statistics.fmean(lats)
    measured = [p for p in phases if p.measured]
    if measured:
        metrics["tps"] = statistics.fmean(p.report.tps for p in measured)
        lats = [p.report.latency_avg_ms for p in measured if p.report.latency_avg_ms is not None]
        if lats:
            metrics["latency_avg_ms"] = statistics.fmean(lats)
        metrics["failed"] = float(sum(p.report.failed or 0 for p in measured))
        if all(id(p) in steady for p in measured):
            metrics["tps_steady"] = statistics.fmean(steady[id(p)] for p in measured)
    for d in run.derived:
        a, b = metrics.get(f"phase.{d.a}.tps"), metrics.get(f"phase.{d.b}.tps")
        if a and b is not None:
            metrics[d.name] = (a - b) / a if d.kind == "decrease" else b / a
    return metrics


def clean_leftovers(lab: Lab) -> list[str]:
    """Stop the servers and undo the storage targets that a dead pglab left in ``lab`` (what
    its records say it made); one line for each."""
    lines = [
        f"stopped a leftover of an earlier pglab: {line}" for line in server.stop_leftovers(lab)
    ]
    return lines + storage_targets.cleanup_leftovers(lab)


def find_stale(store, campaign: str, points) -> list[changes.StalePoint]:
    """Stored points of ``campaign`` that the campaign (as parsed now) no longer has."""

    def spec_of(run_id: int) -> dict | None:
        run = store.get_run(run_id)
        return run["spec"] if run else None

    return changes.stale_points(store.list_runs(campaign), points, spec_of)


def stale_error(campaign: str, stale: list[changes.StalePoint]) -> CampaignError:
    lines = "\n".join(f"  - {s.describe()}" for s in stale)
    return CampaignError(
        f"campaign {campaign!r} changed since some of its runs were stored; these stored "
        f"points are not in it as it is now, and resuming would mix old and new results:\n{lines}",
        hint="to keep both, give the file another `name = ...`; to delete those runs and go "
        "on, run it again with --replace",
    )
