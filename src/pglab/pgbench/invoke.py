"""Workload: one pgbench invocation per phase iteration, with live progress and its logs.

pgbench runs as the calling user (it does not mind root), in a work directory where it writes its
per-transaction logs (``-l``); its ``-P 1`` progress lines on stderr are read as they come and
passed to a callback, so the CLI can show live TPS (a phase with ``progress = false`` runs
without them: its series is read from the aggregate log when it ends).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from pglab import procs
from pglab.campaign.spec import PhaseSpec
from pglab.errors import PgbenchError
from pglab.pgbench import output as pgbench_output
from pglab.pgbench.responses import TABLE, Responses
from pglab.postgres.sources import Binaries
from pglab.records import LatencySecond, PgbenchReport, PhaseResult, ProgressSample, ScriptSecond
from pglab.workloads.work import paced

ProgressCallback = Callable[[ProgressSample], None]
LOG_PREFIX = "pgbench_log"


def auto_threads(clients: int, cpus: int | None = None) -> int:
    """The largest thread count that divides the clients and does not exceed the CPUs."""
    limit = max(1, min(clients, cpus or os.cpu_count() or 1))
    return max(t for t in range(1, limit + 1) if clients % t == 0)


def argv_for(
    binaries: Binaries,
    phase: PhaseSpec,
    conn_args: list[str],
    workdir: Path,
) -> list[str]:
    threads = phase.threads or auto_threads(phase.clients)
    argv = [binaries.exe("pgbench"), "-c", str(phase.clients), "-j", str(threads)]
    if phase.pgbench.progress:
        argv += ["-P", "1"]
    if phase.duration is not None:
        argv += ["-T", str(phase.duration)]
    else:
        argv += ["-t", str(phase.transactions)]
    for script in phase.pgbench.scripts:
        if script.builtin:
            argv += ["-b", f"{script.builtin}@{script.weight}"]
        else:
            argv += ["-f", f"{script.path}@{script.weight}"]
    argv += ["-M", phase.pgbench.protocol]
    for name, value in phase.pgbench.defines:
        argv += ["-D", f"{name}={value}"]
    return argv + _options(phase, workdir) + conn_args


def _options(phase: PhaseSpec, workdir: Path) -> list[str]:
    """pgbench's options beyond its clients, length, scripts and variables: rate, connections,
    vacuum, retries, latency limits and logs."""
    argv: list[str] = []
    if phase.pgbench.rate is not None:
        argv += ["-R", f"{phase.pgbench.rate:g}"]
    if phase.pgbench.connect:
        argv.append("-C")
    if not phase.pgbench.vacuum:
        argv.append("-n")
    if phase.pgbench.max_tries != 1:
        argv.append(f"--max-tries={phase.pgbench.max_tries}")
    if phase.pgbench.failures_detailed:
        argv.append("--failures-detailed")
    if phase.pgbench.latency_limit is not None:
        argv += ["-L", f"{phase.pgbench.latency_limit:g}"]
    if phase.pgbench.report_per_command:
        argv.append("-r")
    if phase.pgbench.random_seed is not None:
        argv.append(f"--random-seed={phase.pgbench.random_seed}")
    if phase.pgbench.sampling_rate is not None and phase.pgbench.latency_log == "full":
        argv.append(f"--sampling-rate={phase.pgbench.sampling_rate:g}")
    if phase.pgbench.latency_log != "off":
        argv += ["-l", f"--log-prefix={workdir / LOG_PREFIX}"]
    if phase.pgbench.latency_log == "aggregate":
        argv.append("--aggregate-interval=1")
    return argv


def run_phase(
    binaries: Binaries,
    phase: PhaseSpec,
    iteration: int,
    conn_args: list[str],
    workdir: Path,
    on_progress: ProgressCallback | None = None,
    on_spawn: Callable[[subprocess.Popen[Any]], None] | None = None,
    env: Mapping[str, str] | None = None,
    cpus: Collection[int] | None = None,
    limits: Mapping[str, int] | None = None,
) -> PhaseResult:
    """Run one iteration of a phase and return everything pgbench said about it. ``env``: what
    pgbench's libpq needs beside its arguments (an existing server's PG* and password);
    ``cpus``: the CPUs it is confined to ([os] client_cpus); ``limits``: its resource limits,
    soft and hard ([os] limits)."""
    workdir.mkdir(parents=True, exist_ok=True)
    for old in workdir.glob(f"{LOG_PREFIX}.*"):
        old.unlink()
    argv = argv_for(binaries, phase, conn_args, workdir)
    stdout_path = workdir / "pgbench.stdout"
    started = time.time()
    t0 = time.monotonic()
    samples: list[ProgressSample] = []
    other_lines: list[str] = []
    told = Responses()  # a paced kit's response times (pgbench/responses.py)
    with open(stdout_path, "w") as stdout:
        proc = procs.spawn(
            argv,
            cwd=workdir,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=env,
            cpus=cpus,
            limits=limits,
        )
    if on_spawn is not None:
        on_spawn(proc)
    timeout = _timeout(phase)
    timer = threading.Timer(timeout, procs.terminate, args=(proc,))
    timer.daemon = True
    with procs.owned(proc):
        timer.start()
        try:
            assert proc.stderr is not None
            for said in proc.stderr:
                line = told.strip(said) if paced(phase.work) else said
                sample = pgbench_output.parse_progress_line(line)
                if sample is None:
                    if line:
                        other_lines.append(line.rstrip("\n"))
                    continue
                samples.append(sample)
                if on_progress is not None:
                    on_progress(sample)
            proc.wait()
        finally:
            timer.cancel()
            if proc.stderr is not None:
                proc.stderr.close()
    elapsed = time.monotonic() - t0
    stdout_text = stdout_path.read_text()
    stderr_text = "\n".join(other_lines)
    if proc.returncode != 0:
        said = stderr_text.strip() or stdout_text.strip()
        raise _failure(phase, proc.returncode, said, elapsed >= timeout, timeout)
    report = pgbench_output.parse_report(stdout_text)
    latency, script_latency = _logs(phase, report, workdir)
    return PhaseResult(
        name=phase.name,
        iteration=iteration,
        measured=phase.measured,
        started_at=started,
        elapsed_s=elapsed,
        argv=tuple(argv),
        report=report,
        progress=tuple(samples)
        if phase.pgbench.progress
        else pgbench_output.progress_from_aggregate(latency, started),
        latency=latency,
        script_latency=script_latency,
        output=stdout_text + ("\n" + stderr_text if stderr_text else ""),
        tables={TABLE: told.table()} if paced(phase.work) else {},
    )


def _failure(phase: PhaseSpec, code: int, said: str, late: bool, timeout: float) -> PgbenchError:
    """Why pgbench failed, in words: what it said (or its exit status), the signal that killed
    it, and whether it ran past its time."""
    reason = said.strip() or f"exit status {code}"
    if code < 0:
        reason = f"{reason}\npgbench was killed by signal {-code} ({signal.Signals(-code).name})"
    if late:
        reason = f"did not finish within {timeout:.0f} s; {reason}"
    return PgbenchError(f"pgbench failed in phase {phase.name!r}: {procs.tail(reason)}")


def _logs(
    phase: PhaseSpec, report: PgbenchReport, workdir: Path
) -> tuple[tuple[LatencySecond, ...], tuple[ScriptSecond, ...]]:
    """The per-second latencies of a phase's logs, and per script when it mixes scripts."""
    logs = sorted(workdir.glob(f"{LOG_PREFIX}.*"))
    if phase.pgbench.latency_log == "full":
        retries = report.max_tries not in (None, 1)  # the log's lines end with their retries
        latency = pgbench_output.read_transaction_logs(logs, retries=retries)
        scripts = pgbench_output.read_script_logs(logs) if len(phase.pgbench.scripts) > 1 else ()
        return latency, scripts
    if phase.pgbench.latency_log == "aggregate":
        return pgbench_output.read_aggregate_logs(logs), ()
    return (), ()


def _timeout(phase: PhaseSpec) -> float:
    if phase.duration is not None:
        return phase.duration * 2 + 120
    return 6 * 3600.0
