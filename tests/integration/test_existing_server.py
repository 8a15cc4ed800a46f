"""Benchmarking a server pglab did not start (``[server] dsn``), against a real one the test
starts itself (``existing_server.py``): as a non-superuser role with pg_monitor, over TCP with a
password, session settings (work_mem, synchronous_commit) and a reload one
(checkpoint_completion_target, manage = "reload"). Afterwards pg_settings on that server is what
it was, row for row — also after pglab is SIGKILLed mid-campaign and started again."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from conftest import assert_stopped_cleanly, pglab_run_in_background, wait_for
from helpers.existing_server import BENCH_PASSWORD

from pglab import fingerprints
from pglab.cli import main
from pglab.lab import Lab
from pglab.postgres import altered
from pglab.store import open_store

pytestmark = pytest.mark.integration


@pytest.fixture
def password(monkeypatch):
    """The role's password from PGPASSWORD, as a libpq user gives it (not in the file)."""
    monkeypatch.setenv("PGPASSWORD", BENCH_PASSWORD)


def campaign(tmp_path: Path, dsn: str, name: str, duration: int = 2, extra: str = "") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f"""
name = "{name}"
[server]
dsn = "{dsn}"
manage = "reload"
[server.settings]
work_mem = "8MB"
[dataset]
scale = 1
[workload]
script = "tpcb-like"
clients = 2
duration = {duration}
[variants.spread.settings]
checkpoint_completion_target = 0.5
[variants.default]
[matrix.settings]
synchronous_commit = ["on", "off"]
{extra}
"""
    )
    return path


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


@pytest.mark.usefixtures("password")
def test_a_campaign_on_an_existing_server_leaves_its_settings_as_they_were(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    before, auto_before = outside_server.settings(), outside_server.auto_conf()
    databases = outside_server.databases()
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, outside_server.dsn(), "existing")
    assert cli("run", str(path), lab=lab, store=store) == 0, capsys.readouterr()
    assert outside_server.settings() == before
    assert outside_server.auto_conf() == auto_before
    assert outside_server.databases() == databases | {"pglab_bench"}
    assert not list(altered.directory(lab).glob("*.json"))  # nothing left to put back

    with open_store(str(store)) as s:
        runs = [s.get_run(r.id) for r in s.list_runs("existing")]
    assert len(runs) == 4 and all(r.ok for r in runs), [r.error for r in runs]
    for run in runs:
        fp = run.fingerprint
        assert fp["server_kind"] == "existing" and fp["client_local"] is True
        assert fp["role"] == "bench" and fp["privileges"]["superuser"] is False
        assert fp["rtt_ms"] > 0 and fp["server_port"] == outside_server.port
        settings = fp["settings"]
        # what pgbench's sessions ran with: the point's, per session and by reload
        assert settings["work_mem"]["setting"] == "8192"
        axes = dict(run.spec["axes"])
        sync = settings.get("synchronous_commit", {}).get("setting", "on")
        assert sync == axes["settings.synchronous_commit"]
        ccT = settings.get("checkpoint_completion_target", {}).get("setting", "0.9")
        assert float(ccT) == (0.5 if run.variant == "spread" else 0.9)
        # telemetry over SQL only: statistics and waits, no OS sampler and it says so
        tables = run.series["0"] if "0" in run.series else next(iter(run.series.values()))
        assert "pg.database" in tables and "pg.checkpointer" in tables
        assert not any(kind.startswith("os.") for kind in tables)
        notes = dict(map(tuple, tables["telemetry.notes"]["rows"]))
        assert notes["os"].startswith("absent")
    out = capsys.readouterr().out
    assert BENCH_PASSWORD not in out

    assert cli("show", str(runs[0].id), lab=lab, store=store) == 0
    shown = capsys.readouterr().out
    assert "server: existing postgresql://bench@" in shown and "round trip" in shown, shown


def test_a_password_in_the_dsn_is_used_and_never_stored(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    store = tmp_path / "r.sqlite"
    path = tmp_path / "pw.toml"
    path.write_text(
        f"""
name = "pw"
[server]
dsn = "{outside_server.dsn(password=BENCH_PASSWORD)}"
[dataset]
scale = 1
[workload]
script = "select-only"
duration = 1
"""
    )
    assert cli("run", str(path), lab=lab, store=store) == 0, capsys.readouterr()
    assert BENCH_PASSWORD not in capsys.readouterr().out
    assert BENCH_PASSWORD.encode() not in store.read_bytes()


@pytest.mark.usefixtures("password")
def test_a_postmaster_setting_is_refused_before_any_run(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, outside_server.dsn(), "sb", extra='shared_buffers = ["128MB"]')
    assert cli("run", str(path), lab=lab, store=store) == 2
    err = capsys.readouterr().err
    assert "shared_buffers has context postmaster" in err, err
    assert "never restarts a server it did not start" in err
    assert not store.exists() or not open_store(str(store)).list_runs("sb")


@pytest.mark.usefixtures("password")
def test_after_a_sigkill_the_next_start_puts_the_settings_back(
    outside_server, lab: Lab, tmp_path: Path
):
    before = outside_server.settings()
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, outside_server.dsn(), "killed", duration=20)
    err = tmp_path / "err.txt"
    with pglab_run_in_background(path, lab.home, store, err) as proc:
        # the journal is written before ALTER SYSTEM; then the reload takes a moment
        wait_for(lambda: outside_server.settings() != before, proc, err, "ALTER SYSTEM")
        assert list(altered.directory(lab).glob("*.json"))
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert_stopped_cleanly(proc, signal.SIGKILL, lab.home, err)
    assert outside_server.settings() != before  # a SIGKILL gives pglab no say
    changed = json.loads(next(altered.directory(lab).glob("*.json")).read_text())
    assert "checkpoint_completion_target" in changed["originals"]

    # the next start (any campaign: a dry run does not count, it changes nothing) puts it back
    other = tmp_path / "other.toml"
    other.write_text('name = "other"\n[dataset]\nscale = 1\n[workload]\nduration = 1\n')
    assert (
        main(["run", str(other), "--lab-dir", str(lab.home), "--store", str(tmp_path / "o.db")])
        == 0
    )
    assert outside_server.settings() == before
    assert not list(altered.directory(lab).glob("*.json"))


@pytest.mark.usefixtures("password")
def test_one_campaign_compares_a_server_pglab_makes_with_an_existing_one(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    path = tmp_path / "mixed.toml"
    path.write_text(
        f"""
name = "mixed"
[dataset]
scale = 1
[workload]
script = "select-only"
duration = 1
[variants.mine]
[variants.theirs.server]
dsn = "{outside_server.dsn()}"
"""
    )
    store = tmp_path / "r.sqlite"
    assert cli("run", str(path), lab=lab, store=store) == 0, capsys.readouterr()
    with open_store(str(store)) as s:
        runs = {r.variant: s.get_run(r.id) for r in s.list_runs("mixed")}
    assert runs["mine"].fingerprint["client"] == "on the server's machine (a server pglab made)"
    assert runs["theirs"].fingerprint["server_kind"] == "existing"
    assert runs["theirs"].spec["dataset"]["reset"] == "never"
    # each run stores its lease's own description, what show and the report render
    assert runs["mine"].fingerprint["lease"] == fingerprints.made_here()
    theirs = runs["theirs"].fingerprint["lease"]
    assert theirs["server"].endswith("database pglab_bench; pglab did not start it"), theirs
    assert theirs["machine"] == "pgbench's machine" and theirs["ram_known"] is False
    capsys.readouterr()
    assert cli("compare", str(runs["mine"].id), str(runs["theirs"].id), lab=lab, store=store) == 0
    out = capsys.readouterr().out
    assert "client" in out and "on the server's machine, round trip" in out, out


@pytest.mark.usefixtures("password")
def test_quick_on_an_existing_server_is_read_only_unless_told(
    outside_server, lab: Lab, tmp_path: Path, capsys
):
    store = tmp_path / "q.sqlite"
    argv = ["quick", "--dsn", outside_server.dsn(), "--duration", "1", "--repeats", "1",
            "--no-report"]  # fmt: skip
    assert cli(*argv, lab=lab, store=store) == 0, capsys.readouterr()
    with open_store(str(store)) as s:
        scripts = {r.axes["script"] for r in s.list_runs()}
    assert scripts == {"select-only"}
    assert cli("quick", "--allow-writes", "--dry-run", lab=lab, store=store) == 2
    assert "--allow-writes is for an existing server" in capsys.readouterr().err
