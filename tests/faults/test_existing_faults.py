"""Faults with an existing server (``[server] dsn``), on a real one the tests start themselves
(``existing_server.py``): each a clear error naming the problem, nothing stored half, nothing
left changed on the server. Connection and privilege problems are found before any run; a
restart by someone else or a dropped connection fails the run it happens in, with the reason,
and the campaign goes on; Ctrl-C puts back what pglab changed with ALTER SYSTEM."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
from conftest import assert_stopped_cleanly, pglab_run_in_background, wait_for
from helpers.existing_server import BENCH_PASSWORD

from pglab import procs
from pglab.cli import main
from pglab.lab import Lab
from pglab.postgres import altered
from pglab.postgres.server import free_port
from pglab.store import open_store

pytestmark = pytest.mark.integration


@pytest.fixture
def password(monkeypatch):
    monkeypatch.setenv("PGPASSWORD", BENCH_PASSWORD)


def write(tmp_path: Path, dsn: str, server: str = "", body: str = "", name: str = "f",
          duration: int = 1, repeats: int = 1) -> Path:  # fmt: skip
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f"""
name = "{name}"
repeats = {repeats}
[server]
dsn = "{dsn}"
{server}
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 1
duration = {duration}
{body}
"""
    )
    return path


def refused(path: Path, lab: Lab, tmp_path: Path, capsys, *more: str) -> str:
    """Run the campaign, which must be refused before any run: its stderr."""
    store = tmp_path / "r.sqlite"
    code = main(["run", str(path), "--lab-dir", str(lab.home), "--store", str(store), *more])
    err = capsys.readouterr().err
    assert code == 2, err
    if store.exists():
        with open_store(str(store)) as s:
            assert not s.list_runs()
    return err


def test_an_unreachable_server_is_refused_with_what_to_try(lab: Lab, tmp_path: Path, capsys):
    path = write(tmp_path, f"postgresql://bench@127.0.0.1:{free_port()}/postgres")
    err = refused(path, lab, tmp_path, capsys)
    assert "cannot connect to the existing server bench@127.0.0.1" in err
    assert "Connection refused" in err and "pg_isready" in err


def test_a_wrong_password_is_named_and_never_printed(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    path = write(tmp_path, outside_server.dsn(password="not-the-pw-42"))
    err = refused(path, lab, tmp_path, capsys)
    assert 'password authentication failed for user "bench"' in err
    assert "~/.pgpass" in err and "not-the-pw-42" not in err


def test_a_server_that_wants_ssl_says_so(outside_server, lab: Lab, tmp_path: Path, capsys):
    path = write(tmp_path, outside_server.dsn("sslonly", password="ssl-secret"))
    err = refused(path, lab, tmp_path, capsys)
    assert "pg_hba.conf" in err and "no encryption" in err and "sslmode=require" in err


def test_a_role_that_may_not_create_the_database_is_told_the_grant(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    # a database of its own: the shared server may hold pglab_bench from other tests
    path = write(tmp_path, outside_server.dsn("plain", password="plain-secret"),
                 server='database = "plain_bench"')  # fmt: skip
    err = refused(path, lab, tmp_path, capsys)
    assert "role plain may not create database plain_bench" in err
    assert "ALTER ROLE plain CREATEDB" in err
    assert "plain_bench" not in outside_server.databases()


def test_a_database_without_create_for_the_role_is_refused(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    with outside_server.admin() as conn:
        conn.execute("CREATE DATABASE theirs")  # the admin's: public's CREATE is the owner's
    try:
        path = write(tmp_path, outside_server.dsn(password=BENCH_PASSWORD),
                     server='database = "theirs"')  # fmt: skip
        err = refused(path, lab, tmp_path, capsys)
        assert "role bench may not create tables in database theirs" in err
        assert "GRANT CREATE ON SCHEMA public TO bench" in err
    finally:
        outside_server.drop_database("theirs")


@pytest.mark.usefixtures("password")
def test_pgbench_tables_pglab_did_not_make_are_kept_unless_reinit(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    with outside_server.admin() as conn:
        conn.execute("CREATE DATABASE someone_elses OWNER bench")
    try:
        procs.run(
            [outside_server.binaries.exe("pgbench"), "-i", "-s", "1", "-q",
             outside_server.dsn().replace("/postgres", "/someone_elses")],
            timeout=120, env={"PGPASSWORD": BENCH_PASSWORD},
        )  # fmt: skip
        path = write(tmp_path, outside_server.dsn(), server='database = "someone_elses"')
        err = refused(path, lab, tmp_path, capsys)
        assert "has pgbench tables that pglab did not make" in err and "--reinit" in err
        with outside_server.admin("someone_elses") as conn:
            assert conn.execute("SELECT count(*) FROM pgbench_accounts").fetchone() == (100000,)
        store = tmp_path / "ok.sqlite"
        argv = ["run", str(path), "--reinit", "--lab-dir", str(lab.home), "--store", str(store)]
        assert main(argv) == 0, capsys.readouterr()
    finally:
        outside_server.drop_database("someone_elses")


@pytest.mark.usefixtures("password")
def test_an_init_cut_short_is_made_again_without_reinit(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    """A pgbench -i interrupted (a restart, Ctrl-C) leaves tables and the marker saying they
    were being made: pglab's own, made again, not refused as someone else's."""
    with outside_server.admin() as conn:
        conn.execute("CREATE DATABASE halfmade OWNER bench")
    try:
        procs.run(
            [outside_server.binaries.exe("pgbench"), "-i", "-s", "1", "-q", "-I", "dt",
             outside_server.dsn().replace("/postgres", "/halfmade")],
            timeout=120, env={"PGPASSWORD": BENCH_PASSWORD},
        )  # fmt: skip
        with outside_server.admin("halfmade") as conn:
            conn.execute("CREATE TABLE pglab_dataset (dataset text, init_seconds float8, "
                         "made_at timestamptz)")  # fmt: skip
            conn.execute("INSERT INTO pglab_dataset VALUES ('(being made)', 0, now())")
            conn.execute("ALTER TABLE pglab_dataset OWNER TO bench")
        path = write(tmp_path, outside_server.dsn(), server='database = "halfmade"')
        store = tmp_path / "r.sqlite"
        argv = ["run", str(path), "--lab-dir", str(lab.home), "--store", str(store)]
        assert main(argv) == 0, capsys.readouterr()
        with outside_server.admin("halfmade") as conn:
            assert conn.execute("SELECT count(*) FROM pgbench_accounts").fetchone() == (100000,)
            made = conn.execute("SELECT dataset FROM pglab_dataset").fetchone()
        assert made is not None and made[0].startswith("{")
    finally:
        outside_server.drop_database("halfmade")


@pytest.mark.usefixtures("password")
def test_settings_the_server_does_not_let_the_role_vary_are_all_named_at_once(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    before = outside_server.settings()
    path = write(
        tmp_path,
        outside_server.dsn(),
        body="[server.settings]\n"
        "log_statement_stats = true\n"  # context superuser, no GRANT SET
        "checkpoint_completion_target = 0.5\n"  # sighup, and manage is "session"
        "max_connections = 200\n"  # postmaster
        'work_mem = "64MB"\n',  # fine: user context, per session
    )
    err = refused(path, lab, tmp_path, capsys)
    assert "role bench may not set log_statement_stats (context superuser)" in err
    assert "GRANT SET ON PARAMETER log_statement_stats TO bench" in err
    assert "checkpoint_completion_target has context sighup" in err
    assert 'manage = "reload"' in err
    assert "max_connections has context postmaster" in err
    assert "work_mem" not in err
    reload = write(tmp_path, outside_server.dsn(), server='manage = "reload"', name="g",
                   body='[server.settings]\nbgwriter_delay = "100ms"\n')  # fmt: skip
    err = refused(reload, lab, tmp_path, capsys)
    assert "GRANT ALTER SYSTEM ON PARAMETER bgwriter_delay TO bench" in err
    assert outside_server.settings() == before


def _pgbench_backends(server) -> list[int]:
    with server.admin() as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' "
            "AND query ILIKE 'select abalance%'"  # the measured clients, not pgbench -i
        ).fetchall()
    return [r[0] for r in rows]


def _runs(store: Path, name: str):
    with open_store(str(store)) as s:
        return [s.get_run(r.id) for r in s.list_runs(name)]


@pytest.mark.usefixtures("password")
def test_a_restart_by_someone_else_fails_that_run_and_the_campaign_goes_on(
    outside_server, lab: Lab, tmp_path: Path
):
    store = tmp_path / "r.sqlite"
    path = write(tmp_path, outside_server.dsn(), name="restarted", duration=5, repeats=2)
    err = tmp_path / "err.txt"
    with pglab_run_in_background(path, lab.home, store, err) as proc:
        wait_for(lambda: bool(_pgbench_backends(outside_server)), proc, err, "pgbench")
        time.sleep(1)
        outside_server.restart()
        assert proc.wait(180) == 1, err.read_text()
    runs = sorted(_runs(store, "restarted"), key=lambda r: r.repeat)
    assert [r.status for r in runs] == ["failed", "ok"], [r.error for r in runs]
    assert "restarted during the run" in runs[0].error
    assert "pglab never restarts it" in runs[0].error


@pytest.mark.usefixtures("password")
def test_a_connection_dropped_mid_phase_fails_that_run_with_pgbench_s_words(
    outside_server, lab: Lab, tmp_path: Path
):
    store = tmp_path / "r.sqlite"
    path = write(tmp_path, outside_server.dsn(), name="dropped", duration=5, repeats=2)
    err = tmp_path / "err.txt"
    with pglab_run_in_background(path, lab.home, store, err) as proc:
        wait_for(lambda: bool(_pgbench_backends(outside_server)), proc, err, "pgbench")
        time.sleep(1)
        with outside_server.admin() as conn:
            for pid in _pgbench_backends(outside_server):
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert proc.wait(180) == 1, err.read_text()
    runs = sorted(_runs(store, "dropped"), key=lambda r: r.repeat)
    assert [r.status for r in runs] == ["failed", "ok"], [r.error for r in runs]
    assert "pgbench failed" in runs[0].error
    assert "terminating connection due to administrator command" in runs[0].error


@pytest.mark.usefixtures("password")
def test_ctrl_c_puts_back_what_alter_system_changed(outside_server, lab: Lab, tmp_path: Path):
    before = outside_server.settings()
    store = tmp_path / "r.sqlite"
    body = "[server.settings]\ncheckpoint_completion_target = 0.6\n"
    path = write(tmp_path, outside_server.dsn(), server='manage = "reload"', name="interrupted",
                 duration=30, body=body)  # fmt: skip
    err = tmp_path / "err.txt"
    with pglab_run_in_background(path, lab.home, store, err) as proc:
        wait_for(lambda: bool(_pgbench_backends(outside_server)), proc, err, "pgbench")
        assert outside_server.settings() != before
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    assert_stopped_cleanly(proc, signal.SIGINT, lab.home, err)
    assert outside_server.settings() == before
    assert not list(altered.directory(lab).glob("*.json"))
    assert not _pgbench_backends(outside_server)
    assert not _runs(store, "interrupted")  # nothing half stored: the run did not finish


@pytest.mark.usefixtures("password")
def test_two_pglabs_never_change_the_same_server_s_settings_at_once(outside_server, lab: Lab):
    """The second one is refused before it writes anything (its journal neither), and may go
    once the first has put everything back."""
    from pglab.campaign.spec import ServerSpec
    from pglab.errors import ServerError
    from pglab.postgres.existing import ExistingServer

    before = outside_server.settings()
    spec = ServerSpec(dsn=outside_server.dsn(), manage="reload")
    first, second = ExistingServer(spec, lab), ExistingServer(spec, lab)
    want = {"checkpoint_completion_target": "0.6"}
    try:
        assert first.apply(want, first.catalog()) == "reload"
        with pytest.raises(ServerError, match="another pglab is changing settings"):
            second.apply(want, second.catalog())
        assert outside_server.settings() != before
        first.close()
        assert outside_server.settings() == before
        assert second.apply(want, second.catalog()) == "reload"
        second.close()
    finally:
        first.close()
        second.close()
    assert outside_server.settings() == before
    assert not list(altered.directory(lab).glob("*.json"))
