"""``pglab capture`` on a real server started outside pglab (``helpers.existing_server``):
pgbench's workload captured live (the window closed by Ctrl-C), the server's settings exactly
as before; a capture killed by SIGKILL leaves the logging set, and the next pglab command puts
it back; a role that may not set the logging is refused with nothing changed."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import pglab_in_background, wait_for

from pglab.lab import Lab
from pglab.workloads.replay import workload_file

pytestmark = pytest.mark.integration
SAMPLE_LOG = Path(__file__).parents[1] / "data" / "replay" / "pg18-pgbench.log"


@pytest.fixture(scope="module")
def source(lab: Lab) -> Iterator[Any]:
    from helpers.existing_server import OutsideServer

    server = OutsideServer(lab).start()
    try:
        server.pgbench("-i", "-s", "1", "-q")
        yield server
    finally:
        server.stop()


def admin_dsn(server: Any) -> str:
    return f"host={server.sock} port={server.port} user=admin dbname=postgres"


def capture_argv(home: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "pglab", "capture", "--lab-dir", str(home), *more]


def window_open(err: Path) -> bool:
    return "window open" in err.read_text()


def test_pgbench_captured_live_and_settings_put_back(
    source: Any, lab_home: Path, tmp_path: Path
) -> None:
    before, auto = source.settings(), source.auto_conf()
    out, err = tmp_path / "w.json.gz", tmp_path / "err"
    argv = capture_argv(lab_home, admin_dsn(source), "--log", str(source.log), "-o", str(out))
    with pglab_in_background(argv, err) as proc:
        wait_for(lambda: window_open(err), proc, err, "the capture's window", seconds=60)
        with source.admin() as conn:  # during the window: the logging a replay needs
            shown = dict(conn.execute("SELECT name, setting FROM pg_settings WHERE name IN "
                                      "('log_statement', 'lc_messages')").fetchall())  # fmt: skip
        assert shown == {"log_statement": "all", "lc_messages": "C"}
        source.pgbench("-c", "2", "-T", "2")
        proc.send_signal(signal.SIGINT)  # Ctrl-C: the window closes, the file is written
        assert proc.wait(60) == 0, err.read_text()
    said = err.read_text()
    assert "Ctrl-C: the window closes now" in said and "settings put back" in said
    assert source.settings() == before and source.auto_conf() == auto
    workload = workload_file.read(out)
    s = workload.data["summary"]
    assert out.stat().st_mode & 0o777 == 0o600
    assert s["sessions"] >= 2 and workload.data["users"] == ["admin"]
    assert s["by_kind"]["UPDATE"] >= 3 * s["by_kind"]["END"] > 0  # 3 UPDATEs a transaction
    assert any("pgbench_accounts SET abalance = abalance + ?" in c["statement"]
               for c in s["busiest"])  # fmt: skip
    assert not [x for x in workload.sessions if x.user == "pglab"]
    assert 0 < workload.duration < 60


def test_a_killed_capture_is_put_back_by_the_next_pglab(
    source: Any, lab_home: Path, tmp_path: Path
) -> None:
    before, auto = source.settings(), source.auto_conf()
    err = tmp_path / "err"
    argv = capture_argv(lab_home, admin_dsn(source), "--log", str(source.log), "--for", "5m",
                        "-o", str(tmp_path / "never.json.gz"))  # fmt: skip
    with pglab_in_background(argv, err) as proc:
        wait_for(lambda: window_open(err), proc, err, "the capture's window", seconds=60)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert "log_statement = 'all'" in source.auto_conf()
    assert not (tmp_path / "never.json.gz").exists()
    time.sleep(0.5)
    done = subprocess.run(
        capture_argv(lab_home, "--from-log", str(SAMPLE_LOG), "-o", str(tmp_path / "x.json.gz")),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "put back settings an earlier, killed pglab had changed" in done.stderr
    assert "log_statement" in done.stderr
    assert source.settings() == before and source.auto_conf() == auto


def test_a_role_that_may_not_set_the_logging_is_refused(
    source: Any, lab_home: Path, tmp_path: Path
) -> None:
    before = source.settings()
    dsn = f"host=127.0.0.1 port={source.port} user=bench password=bench-secret dbname=postgres"
    done = subprocess.run(
        capture_argv(lab_home, dsn, "--for", "1s", "-o", str(tmp_path / "w.json.gz")),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "may not ALTER SYSTEM log_statement" in done.stderr
    assert not (tmp_path / "w.json.gz").exists()
    assert source.settings() == before


def test_a_dump_made_as_the_window_opens_and_one_of_another_database_refused(
    source: Any, lab: Lab, lab_home: Path, tmp_path: Path
) -> None:
    out, err, dumped = tmp_path / "w.json.gz", tmp_path / "err", tmp_path / "dump"
    argv = capture_argv(lab_home, admin_dsn(source), "--log", str(source.log), "--for", "4s",
                        "--with-dump", str(dumped), "-o", str(out))  # fmt: skip
    with pglab_in_background(argv, err) as proc:
        wait_for(lambda: window_open(err), proc, err, "the capture's window", seconds=60)
        source.pgbench("-c", "1", "-t", "20")
        assert proc.wait(60) == 0, err.read_text()
    workload = workload_file.read(out)
    assert workload.data["dump"] == str(dumped)
    assert (dumped / "toc.dat").is_file() and dumped.stat().st_mode & 0o777 == 0o700
    # the dump of another database, given with a log whose sessions used postgres
    from pglab.campaign.spec import ServerSpec
    from pglab.postgres.sources import resolve

    binaries = resolve(ServerSpec(), lab)
    with source.admin() as conn:
        conn.execute("CREATE DATABASE other")
    other = tmp_path / "other-dump"
    subprocess.run([binaries.exe("pg_dump"), "-Fd", "-f", str(other), "-h", str(source.sock),
                    "-p", str(source.port), "-U", "admin", "other"], check=True)  # fmt: skip
    refused = subprocess.run(
        capture_argv(lab_home, "--from-log", str(SAMPLE_LOG), "--dump", str(other), "-o",
                     str(tmp_path / "x.json.gz")),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "the dump" in refused.stderr and "is of database 'other'" in refused.stderr
    assert not (tmp_path / "x.json.gz").exists()
    ok = subprocess.run(
        capture_argv(lab_home, "--from-log", str(SAMPLE_LOG), "--dump", str(dumped), "-o",
                     str(tmp_path / "y.json.gz")),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert workload_file.read(tmp_path / "y.json.gz").data["dump"] == str(dumped)


def test_the_logging_collector_s_file_read_through_the_server(
    source: Any, lab_home: Path, tmp_path: Path
) -> None:
    """Without --log: the collector's current file (pg_current_logfile), read by
    pg_read_binary_file through the server (any host). Last in the file: it leaves the
    module's server with its collector on."""
    with open(source.data / "postgresql.conf", "a") as conf:
        conf.write("logging_collector = on\n")
    source.restart()
    before, auto = source.settings(), source.auto_conf()
    out, err = tmp_path / "w.json.gz", tmp_path / "err"
    argv = capture_argv(lab_home, admin_dsn(source), "--for", "4s", "-o", str(out))
    with pglab_in_background(argv, err) as proc:
        wait_for(lambda: window_open(err), proc, err, "the capture's window", seconds=60)
        source.pgbench("-c", "1", "-t", "30", "-S")
        assert proc.wait(60) == 0, err.read_text()
    s = workload_file.read(out).data["summary"]
    assert s["by_kind"]["SELECT"] >= 30
    assert source.settings() == before and source.auto_conf() == auto
