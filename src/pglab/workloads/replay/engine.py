"""A captured workload replayed on one server by pgreplay, and what it did there: the
replay's time against the captured window's (its lag), statements per second, errors, the
total execution time of its statements from the target's ``pg_stat_statements`` (the
headline) with the top statement classes, the sessions' active time from
``pg_stat_database`` (which holds what pg_stat_statements does not time: a COMMIT's wait for
the WAL flush happens after its statement), and the divergence: per class, statements that
failed in the replay and not in the capture, or the other way (``Divergence``).

The target must have the workload's databases and users (a dataset restored from the
capture's dump) and ``pg_stat_statements`` loaded (``shared_preload_libraries``);
``prepare`` makes the extension in each database and resets its counters. pgreplay runs in a
session of its own under a time limit (``timeout``): with conflicting sessions it can wait
for ever (it replays in the log's order, and a session blocked by a lock that another
session's next statement would release stops it), and such a replay is failed, said so.
"""

from __future__ import annotations

import concurrent.futures
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from pglab import procs
from pglab.errors import CommandError
from pglab.workloads.replay import pgreplay, workload_file
from pglab.workloads.replay.classes import class_of, key_of
from pglab.workloads.replay.workload_file import ClassCount, Workload

DIVERGENCE_THRESHOLD = 0.01  # a share of the statements: above it, the replay is marked
CLASSES_KEPT = 100  # the classes a run keeps, by total time (each compared)
STATS_SETTLE_S = 0.5
Connect = Callable[[str], psycopg.Connection]  # a superuser's session in that database


@dataclass(frozen=True, slots=True)
class ClassTime:
    key: str  # classes.key_of: the class's name among a run's metrics
    statement: str  # pg_stat_statements' normalised text (its busiest entry's)
    calls: int
    total_ms: float
    mean_ms: float


@dataclass(frozen=True, slots=True)
class Divergence:
    """Statements whose outcome differs between capture and replay, per class."""

    failed_in_replay_only: list[ClassCount]
    failed_in_capture_only: list[ClassCount]
    statements: int
    threshold: float = DIVERGENCE_THRESHOLD

    @property
    def count(self) -> int:
        return sum(c["count"] for c in self.failed_in_replay_only + self.failed_in_capture_only)

    @property
    def share(self) -> float:
        return self.count / self.statements if self.statements else 0.0

    @property
    def marked(self) -> bool:
        return self.share > self.threshold

    def said(self) -> str:
        if not self.count:
            return "no divergence: every statement failed or succeeded as in the capture"
        line = (
            f"{self.count:,} statement(s) ({100 * self.share:.2f}%) diverged: "
            f"{sum(c['count'] for c in self.failed_in_replay_only):,} failed only in the "
            f"replay, {sum(c['count'] for c in self.failed_in_capture_only):,} only in "
            "the capture"
        )
        if self.marked:
            line += (
                f"; above {100 * self.threshold:g}%: the replay did other work than the "
                "capture, its timing is not comparable"
            )
        return line


@dataclass(frozen=True, slots=True)
class ReplayResult:
    captured_s: float
    replay_s: float  # pgreplay's total run time
    statements: int
    errors: int
    max_lag_s: float  # pgreplay's maximum lag behind schedule
    exec_ms: float  # total execution time of the replayed statements (pg_stat_statements)
    # the sessions' time active in the workload's databases (pg_stat_database.active_time):
    # with the commits' WAL flush, which pg_stat_statements does not time
    active_ms: float
    classes: list[ClassTime]  # the classes by total time (``CLASSES_KEPT``)
    divergence: Divergence
    output: str  # pgreplay's statistics, as it printed them

    @property
    def lag_s(self) -> float:
        """How much longer the replay took than the window it replays."""
        return self.replay_s - self.captured_s

    @property
    def statements_s(self) -> float:
        return self.statements / self.replay_s if self.replay_s > 0 else 0.0


def prepare(connect: Connect, workload: Workload) -> None:
    """pg_stat_statements in each of the workload's databases, its counters reset."""
    for db in workload.data["databases"]:
        with connect(db) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    with connect(workload.data["databases"][0]) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")


def run(
    workload: Workload,
    host: str,
    port: int,
    workdir: Path,
    speed: float = 1.0,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """pgreplay of the workload against ``host``:``port`` at ``speed``; its output. A replay
    still running at ``timeout`` (default: four times the window, plus a minute) is stopped
    and refused (a CommandError that says why it can happen)."""
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "replay.log"
    log.write_text(pgreplay.log_for(workload))
    log.chmod(0o600)  # the workload's values
    limit = timeout if timeout is not None else 60 + 4 * workload.duration / speed
    argv = ["pgreplay", "-h", host, "-p", str(port), "-s", f"{speed:g}", str(log)]
    try:
        done = procs.run(argv, timeout=limit, env=env, check=False, what="pgreplay")
    except CommandError as exc:
        raise CommandError(
            f"pgreplay did not finish within {limit:.0f} s: {exc.message}",
            hint="pgreplay replays sessions in the log's order: a session blocked by a lock "
            "that another session's next statement would release stops it; a workload with "
            "hot rows replays only if the target takes its locks in the captured order",
        ) from exc
    finally:
        log.unlink(missing_ok=True)
    output = done.stdout + done.stderr
    if done.returncode != 0 or "Replay statistics" not in output:
        raise CommandError(f"pgreplay failed (exit {done.returncode}): {procs.tail(output)}")
    return output


def active_ms(connect: Connect, workload: Workload) -> float:
    """The time sessions have been active in the workload's databases, so far (ms)."""
    with connect(workload.data["databases"][0]) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(active_time), 0) FROM pg_stat_database WHERE datname = ANY(%s)",
            (workload.data["databases"],),
        ).fetchone()
    return float(row[0]) if row else 0.0


def class_times(connect: Connect, workload: Workload) -> tuple[float, list[ClassTime]]:
    """The replayed statements' total execution time (ms) and their classes by total time
    (``CLASSES_KEPT``), from pg_stat_statements (pglab's own sessions and the extension's own
    calls left out)."""
    rows: list[tuple[str, int, float]] = []
    with connect(workload.data["databases"][0]) as conn:
        rows = conn.execute(
            "SELECT query, calls, total_exec_time FROM pg_stat_statements s "
            "JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = ANY(%s) "
            "AND query !~* 'pg_stat_statements' ORDER BY total_exec_time DESC",
            (workload.data["users"],),
        ).fetchall()
    total = sum(float(t) for _, _, t in rows)
    # entries of one class (other users, nesting levels, constants pg_stat_statements keeps)
    # summed under its key; its text the busiest entry's (rows come by total time)
    found: dict[str, list[Any]] = {}
    for query, calls, spent in rows:
        key = key_of(query)
        seen = found.setdefault(key, [query, 0, 0.0])
        seen[1] += int(calls)
        seen[2] += float(spent)
    ranked = sorted(found.items(), key=lambda kv: -kv[1][2])[:CLASSES_KEPT]
    return total, [ClassTime(k, q, c, t, t / max(c, 1)) for k, (q, c, t) in ranked]


_ERROR = re.compile(r"ERROR:  .*?\n[^\n]*?STATEMENT:  (.*?)(?=\n\S|\Z)", re.DOTALL)


def replay_errors(server_log: str) -> Counter[str]:
    """The statements that failed on the target, per class, from its log of the replay
    (``ERROR`` followed by its ``STATEMENT``: log_min_error_statement = 'error', the
    default; English messages)."""
    return Counter(class_of(m.group(1).replace("\n\t", "\n")) for m in _ERROR.finditer(server_log))


def divergence(
    workload: Workload, failed_in_replay: Counter[str], threshold: float = DIVERGENCE_THRESHOLD
) -> Divergence:
    captured: Counter[str] = Counter()
    for s in workload.sessions:
        for e in s.entries:
            if e.error is not None:
                captured[class_of(e.text)] += 1
    replay_only = failed_in_replay - captured
    capture_only = captured - failed_in_replay
    return Divergence(
        [ClassCount(statement=c, count=n) for c, n in replay_only.most_common()],
        [ClassCount(statement=c, count=n) for c, n in capture_only.most_common()],
        workload.data["summary"]["statements"],
        threshold,
    )


# plays a workload (a part of one: ``workload_file.split``) with pgreplay somewhere, in a
# directory of its own here; pgreplay's output
Player = Callable[[Workload, Path], str]


def play_apart(workload: Workload, players: Sequence[Player], workdir: Path) -> list[str]:
    """The workload's sessions split in as many disjoint sets as ``players`` (balanced by
    statements, ``workload_file.split``), each played by its player at once; their outputs."""
    parts = workload_file.split(workload, len(players))
    # more players than sessions: those without a session sit it out
    work = [(play, part) for play, part in zip(players, parts, strict=True) if part.sessions]
    with concurrent.futures.ThreadPoolExecutor(len(work)) as pool:
        futures = [
            pool.submit(play, part, workdir / f"part{n}") for n, (play, part) in enumerate(work, 1)
        ]
        return [f.result() for f in futures]  # the first failure raised, the others waited


def replay(
    workload: Workload,
    connect: Connect,
    host: str,
    port: int,
    workdir: Path,
    server_log: Callable[[], str],
    speed: float = 1.0,
    threshold: float = DIVERGENCE_THRESHOLD,
    env: dict[str, str] | None = None,
    players: Sequence[Player] = (),
) -> ReplayResult:
    """``prepare``, ``run`` (or, with ``players``, the sessions split between them: the
    generator hosts, ``on_hosts``), then what the target says: its statement times and the
    log's errors (``server_log`` gives the target's log written since ``prepare``)."""
    prepare(connect, workload)
    active_before = active_ms(connect, workload)
    if players:
        outputs = play_apart(workload, players, workdir)
        figures = pgreplay.merged([pgreplay.statistics(out) for out in outputs])
        output = "".join(
            f"--- set {n} of {len(outputs)}:\n{out[out.find('Replay statistics') :]}"
            for n, out in enumerate(outputs, 1)
        )
    else:
        output = run(workload, host, port, workdir, speed, env=env)
        figures = pgreplay.statistics(output)
        output = output[output.find("Replay statistics") :]
    time.sleep(STATS_SETTLE_S)  # the replay's backends report their active time as they end
    active = active_ms(connect, workload) - active_before
    exec_ms, classes = class_times(connect, workload)
    return ReplayResult(
        captured_s=workload.duration,
        replay_s=figures.get("run_seconds", 0.0),
        statements=int(figures.get("statements", 0)),
        errors=int(figures.get("errors", 0)),
        max_lag_s=figures.get("max_lag_seconds", 0.0),
        exec_ms=exec_ms,
        active_ms=active,
        classes=classes,
        divergence=divergence(workload, replay_errors(server_log()), threshold),
        output=output,
    )
