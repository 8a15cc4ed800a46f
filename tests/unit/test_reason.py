"""A failed run's one-line reason (``records.reason_of``): the most specific line pgbench, pglab
or the server gave, not the first. On real pgbench output (tests/data/pgbench), built into an
error the way the executor builds it, and on the texts of the failures pglab meets."""
# ruff: noqa: E501  (error texts and server log lines, as written)

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pglab import procs
from pglab.analysis import run_warnings
from pglab.records import reason_of
from pglab.report.model import Report
from pglab.rows import RunRow

DATA = Path(__file__).resolve().parents[1] / "data" / "pgbench"


def as_executor_says(stderr: str, phase: str = "main") -> str:
    """``invoke.run_phase``'s error for a pgbench that exited non-zero (progress lines apart)."""
    lines = [ln for ln in stderr.splitlines() if not ln.startswith("progress: ")]
    return f"pgbench failed in phase {phase!r}: {procs.tail(chr(10).join(lines))}"


# the issue: 100 clients against max_connections = 100, as a run stored it
TOO_MANY = """pgbench failed in phase 'main': starting vacuum...end.
pgbench: error: connection to server on socket "/var/lib/pglab/sock/d5989957f48f/.s.PGSQL.45271" failed: FATAL:  sorry, too many clients already
pgbench: error: could not create connection for client 8
the server log says:
2026-11-24 00:28:06.728 UTC [24345] FATAL:  sorry, too many clients already"""


def test_the_issue_says_too_many_clients_not_starting_vacuum() -> None:
    assert reason_of(TOO_MANY) == "FATAL: sorry, too many clients already"
    assert TOO_MANY.splitlines()[0].endswith("starting vacuum...end.")  # what was shown before


@pytest.mark.parametrize("version", ["15", "16", "17", "18"])
def test_a_script_error_on_every_version(version: str) -> None:
    stderr = (DATA / f"pg{version}_aborted.stderr").read_text()
    assert stderr.startswith("starting vacuum...end.")
    assert reason_of(as_executor_says(stderr)) == "ERROR: division by zero"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("pg18_no_database", 'FATAL: database "nosuchdb" does not exist'),
        ("pg18_no_tables", 'ERROR: relation "pgbench_branches" does not exist'),
    ],
)
def test_recorded_failures(name: str, reason: str) -> None:
    assert reason_of(as_executor_says((DATA / f"{name}.stderr").read_text())) == reason


def test_pgbench_killed_or_stopped_by_pglab_comes_before_what_the_server_then_logged() -> None:
    killed = as_executor_says("starting vacuum...end.") + (
        "\npgbench was killed by signal 9 (SIGKILL)\nthe server log says:\n"
        "2026-11-23 09:00:01.000 UTC [300] FATAL:  connection to client lost"
    )
    assert reason_of(killed) == "pgbench was killed by signal 9 (SIGKILL)"
    late = "pgbench failed in phase 'main': did not finish within 140 s; starting vacuum...end."
    assert reason_of(late) == "did not finish within 140 s"


def test_a_full_disk_says_the_panic_not_the_echoes_of_the_crash() -> None:
    error = as_executor_says(
        "starting vacuum...end.\n"
        "pgbench: error: client 0 script 0 aborted in command 1 query 0: server closed the connection unexpectedly"
    ) + (
        "\n(the server was not running at the end of the run)\nthe server log says:\n"
        "2026-11-23 09:00:01.004 UTC [204] FATAL:  terminating connection due to unexpected postmaster exit\n"
        '2026-11-23 09:00:02.007 UTC [100] PANIC:  could not write to file "pg_wal/xlogtemp.100": No space left on device'
    )
    assert reason_of(error) == (
        'PANIC: could not write to file "pg_wal/xlogtemp.100": No space left on device'
    )


def test_a_killed_postmaster_says_the_server_was_not_running() -> None:
    error = as_executor_says(
        "starting vacuum...end.\n"
        "pgbench: error: client 1 aborted in command 4 (SQL) of script 0; perhaps the backend died while processing"
    ) + (
        "\n(the server was not running at the end of the run)\nthe server log says:\n"
        "2026-11-23 09:00:01.004 UTC [204] FATAL:  terminating connection due to unexpected postmaster exit"
    )
    assert reason_of(error) == "the server was not running at the end of the run"


def test_a_server_that_did_not_start_says_why() -> None:
    # what PostgreSQL 18.6 printed for max_connections = 10, superuser_reserved_connections = 20
    recorded = (
        "PostgreSQL 18.6 did not start (exit 1)\n--- server log (last lines) ---\n"
        'postgres: "superuser_reserved_connections" (20) plus "reserved_connections" (0) must be '
        'less than "max_connections" (10)'
    )
    assert reason_of(recorded) == recorded.splitlines()[-1]
    assert reason_of("PostgreSQL 18.6 did not start (exit 1)") == (
        "PostgreSQL 18.6 did not start (exit 1)"
    )
    error = (
        "PostgreSQL 18.6 did not start (exit 1)\n--- server log (last lines) ---\n"
        "2026-11-23 09:00:00.000 UTC [99] LOG:  starting PostgreSQL 18.6\n"
        "2026-11-23 09:00:00.001 UTC [99] FATAL:  superuser_reserved_connections (20) plus reserved_connections (0) must be less than max_connections (10)"
    )
    assert reason_of(error) == (
        "FATAL: superuser_reserved_connections (20) plus reserved_connections (0) must be less "
        "than max_connections (10)"
    )


def test_plain_and_empty_errors() -> None:
    assert reason_of("boom") == "boom"
    assert reason_of("cannot connect to cluster w1: connection refused\nmore") == (
        "cannot connect to cluster w1: connection refused"
    )
    assert reason_of(None) == reason_of("") == reason_of("\n \n") == "no error recorded"
    # a pgbench error line beats its follow-ups, and a notice is said when nothing else is
    assert reason_of("pgbench: error: could not create connection for client 3\n"
                     "pgbench: error: invalid variable name") == "invalid variable name"  # fmt: skip
    assert reason_of(as_executor_says("starting vacuum...end.")) == "starting vacuum...end."


def test_a_client_program_that_failed_says_its_own_error_not_the_server_echo() -> None:
    said = (
        "phase backup: the basebackup target /mnt/tiny ran out of room (No space left on "
        "device)\nthe server log says:\n2026-11-24 08:57:13.086 UTC [14865] FATAL:  connection "
        "to client lost"
    )
    assert reason_of(said) == (
        "phase backup: the basebackup target /mnt/tiny ran out of room (No space left on device)"
    )


def test_every_summary_of_a_failed_run_uses_it() -> None:
    row = RunRow(id=7, campaign="c", run_key="p/1", point_key="p", variant="v",
                 label="clients=100", repeat=1, status="failed", tps=None, started_at=0.0,
                 finished_at=1.0, error=TOO_MANY)  # fmt: skip
    (notice,) = run_warnings.run_notices(row)
    assert notice.message == "run 7 failed: FATAL: sorry, too many clients already"
    ok = replace(row, id=8, status="ok", error=None)
    report = Report("c", {}, None, [], [row, ok], {}, [], {})
    assert [(r.id, reason) for r, reason in report.failed_runs] == [
        (7, "FATAL: sorry, too many clients already")]  # fmt: skip
