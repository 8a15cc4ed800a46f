"""A phase run by pgbench on several hosts at once (load generators), merged into one result.

The clients are split between the hosts (``split_clients``); every pgbench is started at once,
each with ``--progress-timestamp`` so that its per-second lines carry its host's clock, which
``Remote.clock_offset`` measured against pglab's before the phase. Merged:

- **TPS**: the sum of the pgbench totals (each ``tps =`` line), exactly; transactions and
  failures summed, the mean latency weighted by transactions. Each script of a mix and each
  statement of ``-r`` the same way (``merge_reports``).
- **per second**: a second is kept only when every generator reported it (the window where
  they all ran), its TPS the sum, on pglab's clock.
- **latency percentiles**: from every host's per-transaction log, fetched by SFTP and read as
  one (each host's seconds moved by its clock offset), never from averaged percentiles.

Each host's own figures go to the phase's ``generators`` table (with its clock offset and the
offset's uncertainty before the phase, the offset measured again after it and the drift between
the two), stored with the run.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import asyncssh

from pglab.campaign.spec import PhaseSpec, Script
from pglab.errors import HostError, PgbenchError
from pglab.hosts import proc, sudo
from pglab.hosts.local import LocalHost, LocalProcess
from pglab.hosts.loop import call
from pglab.hosts.ssh import Finished, Remote, RemoteProcess
from pglab.pgbench import output as pgbench_output
from pglab.pgbench.invoke import LOG_PREFIX, ProgressCallback, argv_for, auto_threads
from pglab.pgbench.merge import _sum, merge_reports
from pglab.pgbench.responses import PREFIXES, Responses
from pglab.pgbench.responses import TABLE as RESPONSES
from pglab.postgres.sources import Binaries
from pglab.procs import prlimit_options, tail
from pglab.records import (
    LatencySecond,
    PgbenchReport,
    PhaseResult,
    ProgressSample,
    TableJson,
)
from pglab.workloads.kits.work.pacing import from_terminal
from pglab.workloads.work import paced

TABLE = "generators"  # the phase's table of per-host figures
CPU_TABLE = "generators.cpu"  # each host's CPU every second: the host's, its pgbench's
CPU_COLUMNS = ["t", "host", "host_cpu_busy_pct", "pgbench_cpu_pct"]
# a host whose pgbench used this share of the CPUs it could use (its threads, its host's CPUs
# and cgroup quota) is client-bound: the load generator, not the server, was measured
CLIENT_BOUND_SHARE = 0.9
# each second on each host: the clock tick, the host's CPU line, the stat of the pgbench whose
# pid the phase's pid file ($0) holds (nothing before it started)
PROBE = (
    'getconf CLK_TCK; head -n 1 /proc/stat; p=$(cat "$0" 2>/dev/null); '
    'if [ -n "$p" ]; then cat /proc/"$p"/stat 2>/dev/null; fi; exit 0'
)
# pgbench started through sh, which writes its own pid ($$, pgbench's after exec) to $0 first
WITH_PIDFILE = ("sh", "-c", 'echo $$ >"$0" && exec "$@"')
# a clock offset known to no better than this (half the best round trip) is flagged, and so is
# a clock that moved by more than this against pglab's during a phase
OFFSET_UNCERTAINTY_WARN_S = 0.1


def split_clients(clients: int, generators: int) -> list[int]:
    """Clients per generator: as even as can be, the first ones taking one more."""
    base, extra = divmod(clients, generators)
    return [base + (1 if i < extra else 0) for i in range(generators)]


@dataclass
class Generator:
    """One host's part: where pgbench is there, how many CPUs it has, its clock's offset."""

    remote: Remote | LocalHost  # "local": this machine, beside the hosts
    pgbench: str
    cpus: int
    offset_s: float = 0.0
    uncertainty_s: float = 0.0

    @property
    def name(self) -> str:
        return self.remote.spec.name


def passfile_line(password: str) -> bytes:
    """A ~/.pgpass line that matches any server: ``:`` and ``\\`` escaped as libpq reads them."""
    escaped = password.replace("\\", "\\\\").replace(":", "\\:")
    return f"*:*:*:*:{escaped}\n".encode()


def run_phase(
    generators: Sequence[Generator],
    phase: PhaseSpec,
    iteration: int,
    conn_args: list[str],
    env: Mapping[str, str],
    workdir: Path,
    on_progress: ProgressCallback | None = None,
    rlimits: Mapping[str, int] | None = None,
) -> tuple[PhaseResult, TableJson]:
    """Run one iteration of ``phase`` on every generator at once; the merged result and the
    per-host table. ``env``: libpq's variables for pgbench (a ``PGPASSWORD`` goes to a file of
    mode 0600 in the host's run directory, never on its command line); ``rlimits``: pgbench's
    resource limits there, soft and hard (``[os] limits``: under the host's ``prlimit``, up
    to the hard limits its SSH user has, checked before the campaign runs)."""
    clients = split_clients(phase.clients, len(generators))
    dirs = {g.name: g.remote.make_dir() for g in generators}
    try:
        argvs, envs, placed = {}, {}, {}
        for i, (g, n) in enumerate(zip(generators, clients, strict=True)):
            scripts, placed[g.name] = place_scripts(g.remote, phase.pgbench.scripts)
            own = replace(
                phase.with_pgbench(
                    random_seed=_seed(phase.pgbench.random_seed, i), scripts=scripts
                ),
                clients=n,
                threads=min(phase.threads or n, n) if phase.threads else auto_threads(n, g.cpus),
            )
            if paced(phase.work):  # its terminals' home warehouses follow the hosts' before it
                own = own.with_pgbench(
                    defines=from_terminal(phase.pgbench.defines, sum(clients[:i]))
                )
            argvs[g.name] = _argv(
                g.pgbench, own, conn_args, Path(dirs[g.name]), rlimits, as_root=g.remote.spec.sudo
            )
            envs[g.name] = {k: v for k, v in env.items() if k != "PGPASSWORD"}
            if env.get("PGPASSWORD"):
                passfile = f"{dirs[g.name]}/.pgpass"
                g.remote.write(passfile, passfile_line(env["PGPASSWORD"]))
                envs[g.name]["PGPASSFILE"] = passfile
        merger = _Merger([g.name for g in generators], on_progress)
        limits = {g.name: _limits(g) for g in generators}
        pidfiles = {g.name: f"{dirs[g.name]}/pgbench.pid" for g in generators}
        watched: list[list[Any]] = []
        started = time.time()
        t0 = time.monotonic()
        finished = call(
            _run_all(generators, argvs, envs, merger, _timeout(phase), pidfiles, watched)
        )
        elapsed = time.monotonic() - t0
        for g in generators:
            done = finished[g.name]
            if done.returncode != 0:
                said = done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}"
                raise PgbenchError(
                    f"pgbench failed on {g.remote.spec.label} in phase {phase.name!r}: {tail(said)}"
                )
        after = {g.name: g.remote.clock_offset(samples=3)[0] for g in generators}
        throttled = {g.name: _limits(g).throttled_pct(limits[g.name]) for g in generators}
        reports = {
            g.name: _named_as_given(
                pgbench_output.parse_report(finished[g.name].stdout), placed[g.name]
            )
            for g in generators
        }
        latency: tuple[LatencySecond, ...] = ()
        if phase.pgbench.latency_log != "off":
            retries = any(r.max_tries not in (None, 1) for r in reports.values())
            latency = _latency(
                generators,
                dirs,
                workdir,
                phase.pgbench.latency_log,
                retries,
                None if phase.pgbench.progress else merger,
            )
    finally:
        for g in generators:
            g.remote.remove_dir(dirs[g.name])
    report = merge_reports([reports[g.name] for g in generators])
    told = Responses()  # a paced kit's response times, out of the output
    stderr = {
        g.name: told.strip_all(finished[g.name].stderr)
        if paced(phase.work)
        else finished[g.name].stderr
        for g in generators
    }
    result = PhaseResult(
        name=phase.name,
        iteration=iteration,
        measured=phase.measured,
        started_at=started,
        elapsed_s=elapsed,
        argv=tuple(argvs[generators[0].name]),
        report=report,
        progress=merger.merged(started),
        latency=latency,
        output="".join(
            f"== {g.remote.spec.label}: {n} client(s) ==\n{finished[g.name].stdout}"
            f"{stderr[g.name]}\n"
            for g, n in zip(generators, clients, strict=True)
        ),
    )
    load = {
        g.name: cpu_load(
            watched, g.name, reports[g.name].threads, limits[g.name].cpus, throttled[g.name]
        )
        for g in generators
    }
    table: TableJson = {
        "columns": [
            "host",
            "clients",
            "threads",
            "tps",
            "transactions",
            "failed",
            "latency_avg_ms",
            "clock_offset_ms",
            "clock_uncertainty_ms",
            "clock_offset_after_ms",
            "clock_drift_ms",
            "cpus_available",
            "cpu_throttled_pct",
            "host_cpu_busy_pct",
            "pgbench_cpu_pct",
            "client_bound",
        ],
        "rows": [
            [
                g.name,
                n,
                reports[g.name].threads,
                reports[g.name].tps,
                reports[g.name].transactions,
                reports[g.name].failed,
                reports[g.name].latency_avg_ms,
                round(g.offset_s * 1000, 3),
                round(g.uncertainty_s * 1000, 3),
                round(after[g.name] * 1000, 3),
                round((after[g.name] - g.offset_s) * 1000, 3),
                round(limits[g.name].cpus, 3),
                throttled[g.name],
                *load[g.name],
            ]
            for g, n in zip(generators, clients, strict=True)
        ],
    }
    if paced(phase.work):
        result = replace(result, tables={**result.tables, RESPONSES: told.table()})
    if watched:
        result = replace(
            result, tables={**result.tables, CPU_TABLE: {"columns": CPU_COLUMNS, "rows": watched}}
        )
    return result, table


def _argv(
    pgbench: str,
    phase: PhaseSpec,
    conn_args: list[str],
    remote_dir: Path,
    rlimits: Mapping[str, int] | None,
    as_root: bool = False,
) -> list[str]:
    """pgbench's command on a host (under its ``prlimit`` with ``rlimits``, soft and hard; on
    a host with ``sudo = true``, its hard limits raised as root first)."""
    argv = argv_for(Binaries(Path(""), "", "", ""), phase, conn_args, remote_dir)
    stamps = ["--progress-timestamp"] if phase.pgbench.progress else []
    if as_root and rlimits:
        return sudo.with_limits([pgbench, *argv[1:], *stamps], rlimits)
    bounded = ["prlimit", *prlimit_options(rlimits), "--"] if rlimits else []
    return [*bounded, pgbench, *argv[1:], *stamps]


def _limits(g: Generator) -> proc.CpuLimits:
    return proc.cpu_limits(g.remote.run(["sh", "-c", proc.CPUS_PROBE]).stdout)


def cpu_load(
    rows: Sequence[Sequence[Any]],
    host: str,
    threads: int | None,
    cpus: float,
    throttled_pct: float | None = None,
) -> list[Any]:
    """[host CPU busy %, pgbench CPU % of one core, client-bound 0/1] of one host over the
    phase, from its seconds in ``CPU_COLUMNS`` rows (Nones when none came): client-bound when
    pgbench used ``CLIENT_BOUND_SHARE`` of the CPUs it could use (its threads on the CPUs its
    host and cgroup allow), or when its cgroup's CPU quota throttled it in most periods (its
    other processes, sshd's, share that quota)."""
    busy = [r[2] for r in rows if r[1] == host and r[2] is not None]
    used = [r[3] for r in rows if r[1] == host and r[3] is not None]
    if not used:
        return [None, None, None]
    pgbench_pct = statistics.fmean(used)
    could = min(float(threads or 1), cpus)
    bound = pgbench_pct / 100 >= CLIENT_BOUND_SHARE * could or (throttled_pct or 0.0) >= 50
    return [round(statistics.fmean(busy), 1) if busy else None, round(pgbench_pct, 1), int(bound)]


def place_scripts(
    host: Remote | LocalHost, scripts: Sequence[Script]
) -> tuple[tuple[Script, ...], dict[str, str]]:
    """The phase's scripts as the host's pgbench reads them: each custom script's file copied
    there by content (once per campaign, ``Remote.copy_in``) and named by its path there; and
    each such path -> the path the campaign gave, to name the scripts of the report as a local
    run does."""
    out, given = [], {}
    for script in scripts:
        if script.path is None:
            out.append(script)
            continue
        there = host.copy_in(Path(script.path))
        given[there] = script.path
        out.append(replace(script, path=there))
    return tuple(out), given


def _named_as_given(report: PgbenchReport, given: Mapping[str, str]) -> PgbenchReport:
    """The report's script sections named by the paths the campaign gave (pgbench named them by
    the copies' paths on the host, which differ from host to host)."""
    if not given:
        return report
    return replace(
        report, scripts=tuple(replace(s, name=given.get(s.name, s.name)) for s in report.scripts)
    )


async def _run_all(
    generators: Sequence[Generator],
    argvs: Mapping[str, list[str]],
    envs: Mapping[str, Mapping[str, str]],
    merger: _Merger,
    timeout: float,
    pidfiles: Mapping[str, str],
    watched: list[list[Any]],
) -> dict[str, Finished]:
    """Start every pgbench, then wait for all, each host's CPU read every second meanwhile
    (rows into ``watched``); on a timeout, an error or a cancel (Ctrl-C), stop every one of
    them (closing their channels' stdin ends them on their hosts)."""
    started: dict[str, RemoteProcess | LocalProcess] = {}
    watchers = []
    try:
        for g in generators:
            argv = [*WITH_PIDFILE, pidfiles[g.name], *argvs[g.name]]
            started[g.name] = await g.remote.start(argv, envs[g.name])
        watchers = [
            asyncio.ensure_future(_watch_cpu(g, pidfiles[g.name], watched)) for g in generators
        ]
        waits = [started[g.name].wait(merger.feeder(g)) for g in generators]
        results = await asyncio.wait_for(asyncio.gather(*waits), timeout)
        return {g.name: r for g, r in zip(generators, results, strict=True)}
    except TimeoutError:
        raise PgbenchError(
            f"pgbench did not finish within {timeout:.0f} s on the generators"
        ) from None
    except (OSError, asyncssh.Error) as exc:
        raise HostError(
            f"the SSH link to a generator failed mid-phase: {exc}",
            hint="the run is stored as failed; the next run reconnects",
        ) from None
    finally:
        for task in watchers:
            task.cancel()
        for proc in started.values():
            proc.stop()


async def _watch_cpu(g: Generator, pidfile: str, rows: list[list[Any]]) -> None:
    """Every second: the host's CPU busy and its pgbench's CPU (% of one core) since the last
    reading, a ``CPU_COLUMNS`` row on pglab's clock; a reading that fails is skipped (the next
    spans both seconds). Runs until cancelled."""
    last: tuple[float, dict[str, float], float] | None = None
    while True:
        probe = None
        try:
            probe = await g.remote.start(["sh", "-c", PROBE, pidfile])
            said = await asyncio.wait_for(probe.wait(), 10)
            t = time.time()
            lines = said.stdout.splitlines()
            tick = float(lines[0])
            cpu = proc.cpu_seconds(lines[1], tick)
            mine = proc.process_cpu_seconds(lines[2], tick) if len(lines) > 2 else None
        except (OSError, asyncssh.Error, TimeoutError, ValueError, IndexError):
            await asyncio.sleep(1.0)
            continue
        finally:
            if probe is not None:
                probe.stop()
        used = mine[1] if mine is not None else None
        if last is not None:
            t0, cpu0, used0 = last
            share = None
            if used is not None:  # None once pgbench has ended
                share = round(100.0 * max(0.0, used - used0) / max(t - t0, 1e-3), 1)
            rows.append([round(t, 3), g.name, round(proc.busy_pct(cpu0, cpu), 1), share])
        last = (t, cpu, used if used is not None else 0.0)  # not started yet: from nothing
        await asyncio.sleep(1.0)


def _seed(seed: int | str | None, i: int) -> int | str | None:
    """The random seed of the i-th generator: a seed given as a number, plus i (each host its
    own numbers, the same ones run after run)."""
    return (seed + i) % 2**64 if isinstance(seed, int) else seed


def _latency(
    generators: Sequence[Generator],
    dirs: Mapping[str, str],
    workdir: Path,
    kind: str,
    retries: bool = False,
    merger: _Merger | None = None,
) -> tuple[LatencySecond, ...]:
    """The hosts' logs fetched and merged by second on pglab's clock; with ``merger`` (a phase
    without -P), each host's seconds read from its aggregate log are given to it as that host's
    progress, so that the merged series keeps only the whole seconds of every host."""
    paths: list[Path] = []
    shifts: dict[Path, int] = {}
    for g in generators:
        got = g.remote.fetch(dirs[g.name], LOG_PREFIX, workdir / g.name)
        paths += got
        shifts.update({p: round(g.offset_s) for p in got})
        if merger is not None:
            own = pgbench_output.read_aggregate_logs(got, shifts)
            for sample in pgbench_output.progress_from_aggregate(own, 0.0):
                merger.seconds.setdefault(round(sample.t), {})[g.name] = sample
    if kind == "aggregate":  # per-second aggregates: merged by second, no percentiles
        return pgbench_output.read_aggregate_logs(paths, shifts)
    return pgbench_output.read_transaction_logs(paths, shifts, retries)


def _timeout(phase: PhaseSpec) -> float:
    if phase.duration is not None:
        return phase.duration * 2 + 120
    return 6 * 3600.0


class _Merger:
    """Per-second progress of every generator, merged where all of them reported."""

    def __init__(self, names: list[str], on_progress: ProgressCallback | None):
        self.names = names
        self.on_progress = on_progress
        self.seconds: dict[int, dict[str, ProgressSample]] = {}
        self.offsets: dict[str, float] = {}

    def feeder(self, g: Generator) -> Callable[[str], None]:
        self.offsets[g.name] = g.offset_s

        def feed(line: str) -> None:
            sample = pgbench_output.parse_progress_line(PREFIXES.sub("", line))
            if sample is None:
                return
            second = round(sample.t - g.offset_s)  # on pglab's clock
            got = self.seconds.setdefault(second, {})
            got[g.name] = sample
            if len(got) == len(self.names) and self.on_progress is not None:
                self.on_progress(_sum(second, got.values()))

        return feed

    def merged(self, started: float) -> tuple[ProgressSample, ...]:
        """The seconds every generator reported, ``t`` from the phase's start (as pgbench's own
        progress of a local run)."""
        out = []
        for second in sorted(self.seconds):
            got = self.seconds[second]
            if len(got) == len(self.names):
                out.append(replace(_sum(second, got.values()), t=round(second - started, 3)))
        return tuple(out)
