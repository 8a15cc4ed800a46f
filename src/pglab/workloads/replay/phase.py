"""A phase that replays a captured workload (``[workload] replay = "FILE"``): pgreplay on the
variant's server through ``engine.replay``, its result as every phase's (``PhaseResult``:
the report's TPS is the replay's statements per second of the sessions' active time, its
transactions the statements, its failures the errors) with the replay's own tables:
``SUMMARY_TABLE`` (one row: the captured and replayed durations, the lag, the total
execution and active times, the divergence and whether it passed the threshold),
``CLASSES_TABLE`` (the statement classes by total time, each with its key among the run's
metrics: ``classes.key_of``) and ``DIVERGENCE_TABLE`` (per
class, failed in the replay only or the capture only)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict

from pglab.campaign.spec import PhaseSpec
from pglab.records import PgbenchReport, PhaseResult, TableJson
from pglab.workloads.replay import engine, workload_file
from pglab.workloads.replay.metrics import CLASSES_TABLE, SUMMARY_TABLE
from pglab.workloads.replay.work import ReplayWork

DIVERGENCE_TABLE = "replay.divergence"
SUMMARY_COLUMNS = [
    "captured_s",
    "replay_s",
    "lag_s",
    "max_lag_s",
    "statements",
    "statements_s",
    "errors",
    "exec_ms",
    "active_ms",
    "diverged",
    "divergence_pct",
    "marked",
]
CLASSES_COLUMNS = ["class", "statement", "calls", "total_ms", "mean_ms"]


def run_phase(
    phase: PhaseSpec,
    iteration: int,
    conninfo: Callable[[str], str],
    env: dict[str, str] | None,
    workdir: Path,
    server_log: Callable[[], str],
    players: Callable[[str, int], list[engine.Player]] | None = None,
) -> PhaseResult:
    """Replay the phase's workload file on the server ``conninfo`` reaches (pglab's own
    sessions, in a database; pgreplay connects to its host and port as each session's user,
    to its database); from several hosts at once when ``players`` gives their players for
    that host and port (the generator hosts: ``on_hosts``)."""
    told = phase.work
    assert isinstance(told, ReplayWork), "a replaying phase"
    workload = workload_file.read(Path(told.replay))

    def connect(db: str) -> psycopg.Connection:  # a server on a host: its password in env
        password = (env or {}).get("PGPASSWORD")
        return psycopg.connect(
            conninfo(db), autocommit=True, application_name="pglab", password=password
        )

    info = conninfo_to_dict(conninfo(workload.data["databases"][0]))
    host, port = str(info.get("host") or "localhost"), int(str(info.get("port") or 5432))
    started, t0 = time.time(), time.monotonic()
    r = engine.replay(
        workload,
        connect,
        host,
        port,
        workdir,
        server_log,
        speed=told.speed,
        env=env,
        players=players(host, port) if players is not None else (),
    )
    d = r.divergence
    summary: TableJson = {
        "columns": SUMMARY_COLUMNS,
        "rows": [
            [
                r.captured_s,
                r.replay_s,
                r.lag_s,
                r.max_lag_s,
                r.statements,
                r.statements_s,
                r.errors,
                r.exec_ms,
                r.active_ms,
                d.count,
                100 * d.share,
                d.marked,
            ]
        ],
    }
    classes: TableJson = {
        "columns": CLASSES_COLUMNS,
        "rows": [[c.key, c.statement, c.calls, c.total_ms, c.mean_ms] for c in r.classes],
    }
    divergence: TableJson = {
        "columns": ["statement", "failed_in", "count"],
        "rows": [
            *([c["statement"], "replay", c["count"]] for c in d.failed_in_replay_only),
            *([c["statement"], "capture", c["count"]] for c in d.failed_in_capture_only),
        ],
    }
    # the run's figure: statements per second of the sessions' active time (the server's work,
    # commits' flushes included; at speed 1 the replay's own statements/s follows the capture)
    per_active_s = r.statements / (r.active_ms / 1000) if r.active_ms > 0 else r.statements_s
    report = PgbenchReport(
        tps=per_active_s,
        transactions=r.statements,
        failed=r.errors,
        duration_s=r.replay_s,
        transaction_type=phase.script_label,
        figure="statements/active s",
    )
    notes = [d.said()]
    return PhaseResult(
        name=phase.name,
        iteration=iteration,
        measured=phase.measured,
        started_at=started,
        elapsed_s=time.monotonic() - t0,
        argv=(
            "pgreplay",
            "-s",
            f"{told.speed:g}",
            *(("on", *phase.generators) if players else ()),
        ),
        report=report,
        output="\n".join([r.output, *notes]),
        tables={SUMMARY_TABLE: summary, CLASSES_TABLE: classes, DIVERGENCE_TABLE: divergence},
    )
