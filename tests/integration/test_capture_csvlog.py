"""``pglab capture --from-log`` on a CSV log: a real server (started outside pglab) writes one
workload to its stderr log and its csvlog at once (``log_destination = 'stderr,csvlog'``); the
two files read into the same sessions, statements, parameters and errors, and the CLI writes a
workload file from the CSV one."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pglab.lab import Lab
from pglab.workloads.replay import logfile, workload_file

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def logged(lab: Lab) -> Iterator[tuple[str, str]]:
    """A server logging both ways, a small workload run on it: (stderr text, csv text)."""
    from helpers.existing_server import OutsideServer

    server = OutsideServer(lab)
    settings = {**logfile.SETTINGS, "logging_collector": "on",
                "log_destination": "stderr,csvlog", "log_directory": "log",
                "log_filename": "server.log"}  # fmt: skip
    start = server.start
    server.start = lambda: _start_logging(server, start, settings)  # type: ignore[method-assign]
    server.start()
    try:
        server.pgbench("-i", "-s", "1", "-q")
        server.pgbench("-c", "2", "-t", "15", "-M", "extended", "-b", "simple-update")
        # an error, and the statement that raised it
        with server.admin() as conn, pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("SELECT * FROM no_such_table")
        logs = server.data / "log"
        deadline = time.monotonic() + 30  # the collector writes the last lines after a moment
        while time.monotonic() < deadline:
            stderr, csv = (logs / "server.log").read_text(), (logs / "server.csv").read_text()
            if "no_such_table" in stderr and "no_such_table" in csv and stderr.count(
                "disconnection") == csv.count("disconnection"):  # fmt: skip
                break
            time.sleep(0.2)
        yield stderr, csv
    finally:
        server.stop()


def _start_logging(server: Any, start: Any, settings: dict[str, str]) -> Any:
    """The server started with ``settings`` in its postgresql.conf (appended before it starts:
    the logging collector cannot be turned on by a reload)."""
    real_pg_ctl = server.pg_ctl

    def pg_ctl(action: str, *more: str) -> None:
        if action == "start":
            with open(server.data / "postgresql.conf", "a") as conf:
                conf.writelines(f"{k} = '{v}'\n" for k, v in settings.items())
        real_pg_ctl(action, *more)

    server.pg_ctl = pg_ctl
    return start()


AT = re.compile(r" at character \d+$")


def shape(parsed: logfile.Parsed) -> list[tuple[Any, ...]]:
    """What a replay takes from a log, without times, and errors without the position the
    stderr log gives them (csvlog keeps it only where it also writes the statement, which
    log_statement = 'all' has already logged)."""
    return sorted(
        (s.user, s.database, s.end is not None,
         tuple((e.message, e.detail, e.error and AT.sub("", e.error)) for e in s.entries))
        for s in parsed.sessions
    )  # fmt: skip


def test_the_csv_log_reads_as_the_stderr_log_does(logged: tuple[str, str]) -> None:
    stderr, csv = logged
    assert logfile.is_csv(csv) and not logfile.is_csv(stderr)
    from_stderr, from_csv = logfile.read(stderr), logfile.read(csv)
    assert shape(from_csv) == shape(from_stderr)
    entries = [e for s in from_csv.sessions for e in s.entries]
    assert sum(e.message.startswith("execute ") for e in entries) >= 30  # 2 clients × 15
    assert any(e.detail and e.detail.startswith("parameters: $1 = ") for e in entries)
    (failed,) = [e for e in entries if e.error]
    assert "no_such_table" in failed.text and 'relation "no_such_table"' in failed.error
    assert abs((from_csv.start - from_stderr.start).total_seconds()) < 1


def test_capture_from_a_csv_log(logged: tuple[str, str], lab_home: Path, tmp_path: Path) -> None:
    log, out = tmp_path / "postgresql.csv", tmp_path / "w.json.gz"
    log.write_text(logged[1])
    argv = [sys.executable, "-m", "pglab", "capture", "--lab-dir", str(lab_home),
            "--from-log", str(log), "-o", str(out)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = workload_file.read(out).data["summary"]
    assert summary["by_kind"]["UPDATE"] >= 30 and summary["sessions"] >= 2
