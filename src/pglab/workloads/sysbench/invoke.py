"""One sysbench run per phase iteration: its OLTP test on the sbtest tables of the run's
dataset, each second's line read as it comes (the live view's TPS), its final statistics
parsed and kept as printed.

sysbench takes no connection string: it connects where pglab's own session did
(``load.Target``), the password in its environment. ``--threads`` is the phase's clients,
``--time`` its duration (or ``--events``: transactions × clients), ``--rate`` its rate,
``--rand-seed`` its random seed; ``--report-interval=1`` and ``--percentile=95`` always.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from pglab import procs
from pglab.campaign.spec import PhaseSpec
from pglab.errors import PgbenchError
from pglab.records import PgbenchReport, PhaseResult, ProgressSample, TableJson
from pglab.workloads.sysbench import output
from pglab.workloads.sysbench.load import Target, sysbench_exe
from pglab.workloads.sysbench.work import SysbenchWork

SECONDS_TABLE = "sysbench.seconds"  # each --report-interval line, t as epoch seconds
REPORT_TABLE = "sysbench.report"  # the final statistics, one row, as printed
PERCENTILE = 95


def test_of(phase: PhaseSpec) -> str:
    """The sysbench test a phase runs."""
    assert isinstance(phase.work, SysbenchWork), "a sysbench phase"
    return phase.work.test


def argv_for(exe: str, phase: PhaseSpec, target: Target) -> list[str]:
    """sysbench's arguments; the dataset's tables and their size are the phase's defines
    (``planning/plan.py`` sets them from ``[dataset]``)."""
    told = dict(phase.pgbench.defines)
    argv = [
        exe,
        test_of(phase),
        *target.sysbench_args(),
        f"--tables={told['tables']}",
        f"--table-size={told['table_size']}",
        f"--threads={phase.clients}",
        "--report-interval=1",
        f"--percentile={PERCENTILE}",
    ]
    if phase.duration is not None:
        argv.append(f"--time={phase.duration}")
    else:
        argv += ["--time=0", f"--events={(phase.transactions or 0) * phase.clients}"]
    if phase.pgbench.rate is not None:
        argv.append(f"--rate={phase.pgbench.rate:g}")
    if isinstance(phase.pgbench.random_seed, int):
        argv.append(f"--rand-seed={phase.pgbench.random_seed}")
    return [*argv, "run"]


def run_phase(
    phase: PhaseSpec,
    iteration: int,
    target: Target,
    workdir: Path,
    on_progress: Callable[[ProgressSample], None] | None = None,
    on_spawn: Callable[[subprocess.Popen[Any]], None] | None = None,
    cpus: Collection[int] | None = None,
    limits: Mapping[str, int] | None = None,
) -> PhaseResult:
    """Run one iteration and return what sysbench said of it (``cpus``: the CPUs it is
    confined to, [os] client_cpus; ``limits``: its resource limits, soft and hard)."""
    workdir.mkdir(parents=True, exist_ok=True)
    argv = argv_for(sysbench_exe(), phase, target)
    started, t0 = time.time(), time.monotonic()
    seconds: list[output.SysbenchSecond] = []
    lines: list[str] = []
    proc = procs.spawn(
        argv,
        cwd=workdir,
        env=target.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cpus=cpus,
        limits=limits,
    )
    if on_spawn is not None:
        on_spawn(proc)
    limit = (phase.duration or 6 * 3600) * 2 + 120
    timer = threading.Timer(limit, procs.terminate, args=(proc,))
    timer.daemon = True
    with procs.owned(proc):
        timer.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line)
                second = output.parse_second(line)
                if second is not None:
                    seconds.append(second)
                    if on_progress is not None:
                        on_progress(ProgressSample(t=second.t, tps=second.tps))
            proc.wait()
        finally:
            timer.cancel()
            if proc.stdout is not None:
                proc.stdout.close()
    text = "".join(lines)
    (workdir / "sysbench.stdout").write_text(text)
    if proc.returncode != 0:
        raise PgbenchError(
            f"sysbench failed in phase {phase.name!r} (exit {proc.returncode}): {procs.tail(text)}"
        )
    report = output.parse_report(text)
    return PhaseResult(
        name=phase.name,
        iteration=iteration,
        measured=phase.measured,
        started_at=started,
        elapsed_s=time.monotonic() - t0,
        argv=tuple(argv),
        report=as_pgbench(report, phase),
        progress=tuple(ProgressSample(t=s.t, tps=s.tps, failed=None) for s in seconds),
        output=text,
        tables=tables_of(report, seconds, started),
    )


def as_pgbench(r: output.SysbenchReport, phase: PhaseSpec) -> PgbenchReport:
    """The figures every phase has (TPS, transactions, mean latency), from sysbench's."""
    return PgbenchReport(
        tps=r.tps,
        transactions=r.transactions,
        latency_avg_ms=r.latency_avg_ms,
        clients=phase.clients,
        threads=phase.clients,
        duration_s=r.total_time_s,
        transaction_type=phase.script_label,
    )


def tables_of(
    r: output.SysbenchReport, seconds: list[output.SysbenchSecond], started: float
) -> dict[str, TableJson]:
    """The final statistics (one row, as printed) and each second (t as epoch seconds)."""
    names = [f.name for f in fields(output.SysbenchSecond)]
    return {
        REPORT_TABLE: {"columns": list(asdict(r)), "rows": [list(asdict(r).values())]},
        SECONDS_TABLE: {
            "columns": names,
            "rows": [[started + s.t, *list(asdict(s).values())[1:]] for s in seconds],
        },
    }
