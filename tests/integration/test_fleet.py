"""A fleet on one machine: workers (``pglab worker``, each its own lab home, real PostgreSQL and
pgbench) taking a campaign's jobs from procrastinate's queue in a real PostgreSQL results store
the test starts; every run exactly once, one at a time per worker, each matrix coordinate on one
worker; a worker SIGKILLed mid-run is replaced by another; submitting again adds nothing twice;
workers racing for one job: one runs it."""

from __future__ import annotations

import contextlib
import platform
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import lab_processes
from helpers.fleet_workers import Workers, running_workers

from pglab.cli import main
from pglab.fleet import queue as fleet
from pglab.store import open_store

pytestmark = pytest.mark.integration


@pytest.fixture
def store_url(pg_store: str) -> str:
    return pg_store


@pytest.fixture
def workers(store_url: str) -> Iterator[Workers]:
    with running_workers(store_url) as w:
        yield w


def campaign(tmp_path: Path, name: str, clients=(1, 2, 4), repeats: int = 2,
             duration: int = 2) -> Path:  # fmt: skip
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f"""
name = "{name}"
repeats = {repeats}
[dataset]
scale = 1
[workload]
script = "select-only"
duration = {duration}
rate = 200
[matrix]
clients = {list(clients)}
[variants.wm4]
settings = {{ work_mem = "4MB" }}
[variants.b]
settings = {{ work_mem = "8MB" }}
"""
    )
    return path


def submit(path: Path, store: str, *more: str) -> int:
    return main(["run", str(path), "--fleet", "--store", store, *more])


def wait_done(store: str, name: str, timeout: float = 240) -> list[fleet.JobRow]:
    deadline = time.monotonic() + timeout
    while True:
        rows = fleet.jobs_of(store, name)
        if rows and all(r.status in ("succeeded", "failed") for r in rows):
            return rows
        assert time.monotonic() < deadline, rows
        time.sleep(0.5)


def runs_of(store: str, name: str) -> list:
    with open_store(store) as s:
        return [s.get_run(r.id) for r in s.list_runs(name)]


def test_three_workers_share_a_campaign_by_matrix_coordinate(workers, store_url, tmp_path,
                                                              capsys):  # fmt: skip
    for name in ("w1", "w2", "w3"):
        workers.start(name)
    path = campaign(tmp_path, "fleet12")
    assert submit(path, store_url) == 0
    said = capsys.readouterr().out
    assert "3 job(s) queued" in said and "for 12 run(s)" in said, said
    jobs = wait_done(store_url, "fleet12")
    assert [j.status for j in jobs] == ["succeeded"] * 3
    runs = runs_of(store_url, "fleet12")
    assert len(runs) == 12 and all(r.ok for r in runs)
    assert len({r.run_key for r in runs}) == 12  # every run exactly once
    by_clients: dict[int, set[str]] = {}
    for r in runs:
        by_clients.setdefault(r.spec["phases"][0]["clients"], set()).add(
            r.fingerprint["fleet_worker"]
        )
    assert all(len(w) == 1 for w in by_clients.values()), by_clients  # compared on one host
    # one run at a time on each worker
    for name in ("w1", "w2", "w3"):
        spans = sorted((r.started_at, r.finished_at) for r in runs
                       if r.fingerprint["fleet_worker"] == name)  # fmt: skip
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), spans
    assert len({w for ws in by_clients.values() for w in ws}) >= 2  # the work was spread
    assert main(["status", "fleet12", "--store", store_url]) == 0
    shown = capsys.readouterr().out
    assert "3 done" in shown and shown.count("done") >= 4 and "clients=1" in shown, shown
    assert main(["show", "fleet12", "--store", store_url]) == 0
    shown = capsys.readouterr().out
    assert "machines" not in shown  # no comparison crossed hosts
    # the file's first variant is the baseline, as run here: the job carried the document in
    # its order (a jsonb object would have put "b" first)
    with open_store(store_url) as s:
        stored = s.get_campaign("fleet12")
    assert stored is not None and list(stored["spec"]["variants"]) == ["wm4", "b"]
    assert "vs wm4" in shown, shown
    assert main(["report", "fleet12", "--store", store_url, "-o", str(tmp_path / "r.html")]) == 0
    assert "fleet12" in (tmp_path / "r.html").read_text()


def test_a_sigkilled_worker_s_job_runs_again_on_another(workers, store_url, tmp_path):
    path = campaign(tmp_path, "fleet-kill", clients=(1,), repeats=1, duration=6)
    w1 = workers.start("w1")
    assert submit(path, store_url) == 0
    workers.wait_log("w1", "run 1/")  # its first run under way
    time.sleep(2)
    w1.send_signal(signal.SIGKILL)
    w1.wait(10)
    # its child pglab was interrupted with it: nothing of its lab keeps running
    deadline = time.monotonic() + 15
    while lab_processes(workers.home("w1")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not lab_processes(workers.home("w1"))
    workers.start("w2")  # the job comes to it once w1's heartbeat is known to have stopped
    jobs = wait_done(store_url, "fleet-kill")
    assert [j.status for j in jobs] == ["succeeded"] and jobs[0].worker == "w2"
    runs = runs_of(store_url, "fleet-kill")
    assert len(runs) == 2 and all(r.ok for r in runs)
    assert {r.fingerprint["fleet_worker"] for r in runs} == {"w2"}  # nothing from the dead one
    assert "queued again" in workers.log("w2")


def test_submitting_again_adds_no_job_twice(workers, store_url, tmp_path, capsys):
    path = campaign(tmp_path, "fleet-again", clients=(1, 2), repeats=1, duration=1)
    assert submit(path, store_url) == 0
    assert submit(path, store_url) == 0  # as after a submitter killed half-way
    assert "0 job(s) queued" in capsys.readouterr().out
    assert len(fleet.jobs_of(store_url, "fleet-again")) == 2
    workers.start("w1")
    wait_done(store_url, "fleet-again")
    assert submit(path, store_url) == 0
    assert "nothing left to do" in capsys.readouterr().out
    assert len(fleet.jobs_of(store_url, "fleet-again")) == 2
    assert len(runs_of(store_url, "fleet-again")) == 4


def test_four_workers_racing_for_one_job_run_it_once(workers, store_url, tmp_path):
    path = campaign(tmp_path, "fleet-race", clients=(1,), repeats=1, duration=1)
    for name in ("w1", "w2", "w3", "w4"):
        workers.start(name)
    assert submit(path, store_url) == 0
    (job,) = wait_done(store_url, "fleet-race")
    took = [n for n in ("w1", "w2", "w3", "w4") if f"job {job.id}:" in workers.log(n)]
    assert took == [job.worker], took
    assert len(runs_of(store_url, "fleet-race")) == 2


def test_a_fleet_needs_the_postgresql_store(tmp_path, capsys):
    path = campaign(tmp_path, "fleet-sqlite")
    assert submit(path, str(tmp_path / "r.sqlite")) == 2
    assert "a fleet needs the PostgreSQL results store" in capsys.readouterr().err
    with contextlib.suppress(SystemExit):
        assert main(["worker", "--store", str(tmp_path / "r.sqlite")]) == 2


def test_sigterm_on_a_worker_abandons_its_run_and_queues_the_job_again(
    workers, store_url, tmp_path, capsys
):
    path = campaign(tmp_path, "fleet-term", clients=(1,), repeats=1, duration=6)
    w1 = workers.start("w1")
    # registered when it started, not at its first job: idle, alive, on this host
    capsys.readouterr()
    assert main(["status", "--workers", "--store", store_url]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if " w1 " in f" {x} "]
    assert platform.node() in line and "idle" in line and "alive" in line, line
    assert [w["name"] for w in fleet.workers_of(store_url) if w["job"] is None] == ["w1"]
    assert submit(path, store_url) == 0
    workers.wait_log("w1", "run 1/")
    # `pglab status --workers`: w1 on this host, alive, running the campaign's one job
    capsys.readouterr()
    assert main(["status", "--workers", "--store", store_url]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if " w1 " in f" {x} "]
    (job,) = fleet.jobs_of(store_url, "fleet-term")
    assert platform.node() in line and "alive" in line and f"{job.id} (" in line, line
    time.sleep(1)
    w1.send_signal(signal.SIGTERM)
    assert w1.wait(60) == 0, workers.log("w1")
    assert "queued again" in workers.log("w1")
    (job,) = fleet.jobs_of(store_url, "fleet-term")
    assert job.status == "todo", job  # back in the queue, for the next worker
    assert not lab_processes(workers.home("w1"))  # its server stopped with the run
    assert runs_of(store_url, "fleet-term") == []  # nothing half stored
    workers.start("w2")
    (job,) = wait_done(store_url, "fleet-term")
    assert job.status == "succeeded" and job.worker == "w2"
    assert [r.ok for r in runs_of(store_url, "fleet-term")] == [True, True]
    capsys.readouterr()
    assert main(["status", "--workers", "--store", store_url]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if " w2 " in f" {x} "]
    assert "idle" in line and "alive" in line, line


def test_rounds_spread_over_workers_are_compared_within_rounds(workers, store_url, tmp_path,
                                                                capsys):  # fmt: skip
    """[fleet] spread = "rounds": a job per round, rounds on both workers, each round on one;
    show's verdicts come from the blocked analysis and say the machines cancel."""
    for name in ("s1", "s2"):
        workers.start(name)
    path = campaign(tmp_path, "spread4", clients=(1,), repeats=4)
    path.write_text(path.read_text() + '[fleet]\nspread = "rounds"\n')
    assert submit(path, store_url) == 0
    said = capsys.readouterr().out
    assert "4 job(s) queued" in said and "one per matrix coordinate and round" in said, said
    jobs = wait_done(store_url, "spread4")
    assert sorted(j.group for j in jobs) == [f"clients=1 round {r}" for r in range(1, 5)]
    assert all(j.status == "succeeded" for j in jobs)
    runs = runs_of(store_url, "spread4")
    assert len(runs) == 8 and all(r.ok for r in runs)
    by_round: dict[int, set[str]] = {}
    for r in runs:
        by_round.setdefault(r.repeat, set()).add(r.fingerprint["fleet_worker"])
    assert all(len(w) == 1 for w in by_round.values()), by_round  # a round on one host
    assert main(["show", "spread4", "--store", store_url]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "Δ%: 1 paired (within-round ratios" in shown, shown  # one comparison: its own
    assert len(set().union(*by_round.values())) == 2  # the rounds ran on both workers at once
    assert "rounds ran on 2 machines (s1, s2), each round on one" in shown, shown


def test_a_job_carries_the_files_its_campaign_names(workers, store_url, tmp_path, capsys):
    """A custom script given by a relative path, gone from where it was submitted: the job
    carries it (by content, in the store), the worker writes it back where the campaign named
    it and runs it; a worker holding another file at that path refuses the job, naming it."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    script = scripts / "one.sql"
    script.write_text("\\set aid random(1, 100000 * :scale)\n"
                      "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")  # fmt: skip
    path = campaign(tmp_path, "carried", clients=(1,), repeats=1, duration=1)
    path.write_text(path.read_text().replace('script = "select-only"',
                                             'script = "scripts/one.sql"'))  # fmt: skip
    assert submit(path, store_url) == 0
    assert "1 file(s) it names go with them" in capsys.readouterr().out
    text = script.read_bytes()
    script.unlink()
    scripts.rmdir()
    workers.start("c1")
    (job,) = wait_done(store_url, "carried")
    assert job.status == "succeeded", workers.log("c1")
    assert f"wrote {script} (the job carries it)" in workers.log("c1")
    assert script.read_bytes() == text
    runs = runs_of(store_url, "carried")
    assert len(runs) == 2 and all(r.ok and r.phases[0].transactions > 0 for r in runs)
    # the same path holding another script on the worker: refused, nothing run
    workers.stop_all()
    other = path.with_name("carried2.toml")
    other.write_text(path.read_text().replace('"carried"', '"carried2"'))
    assert submit(other, store_url) == 0
    script.write_text("SELECT 2;\n")
    workers.start("c2")
    (job,) = wait_done(store_url, "carried2")
    assert job.status == "failed" and runs_of(store_url, "carried2") == []
    assert f"{script} on this worker is not the file the campaign was submitted with" in (
        workers.log("c2")
    )


def test_a_worker_reaches_an_existing_server_with_its_own_password_file(
    workers, store_url, tmp_path, outside_server, monkeypatch
):
    """The job holds no password (the dsn has none, a given one is masked): the worker takes
    it from the file named by --passfile, as libpq does from ~/.pgpass."""
    from helpers.existing_server import BENCH_PASSWORD

    path = tmp_path / "secret.toml"
    path.write_text(f"""
name = "secret"
[server]
dsn = "{outside_server.dsn()}"
[dataset]
scale = 1
[workload]
script = "select-only"
duration = 1
""")  # fmt: skip
    monkeypatch.setenv("PGPASSWORD", BENCH_PASSWORD)  # the submitter's own checks connect
    assert submit(path, store_url) == 0
    monkeypatch.delenv("PGPASSWORD")  # not for the workers
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{outside_server.port}:*:bench:{BENCH_PASSWORD}\n")
    passfile.chmod(0o644)
    with pytest.raises(AssertionError, match="group or others may read it"):
        workers.start("p0", "--passfile", str(passfile))  # libpq would ignore it: refused
    passfile.chmod(0o600)
    workers.start("p1", "--passfile", str(passfile))
    (job,) = wait_done(store_url, "secret")
    assert job.status == "succeeded", workers.log("p1")
    (run,) = runs_of(store_url, "secret")
    assert run.ok and run.phases[0].transactions > 0
    assert BENCH_PASSWORD not in str(fleet.jobs_of(store_url, "secret")) + workers.log("p1")


def test_a_schedule_s_executions_are_queued_by_the_workers_and_run(workers, store_url, tmp_path,
                                                                   capsys):  # fmt: skip
    """``pglab schedule`` with a cron every 10 seconds (a sixth field): the worker's periodic
    tick queues the executions NAME@TIME, each run as a fleet job; ``--list`` says the last one,
    ``--remove`` stops it, and ``pglab history`` reads the executions as a series."""
    path = campaign(tmp_path, "nightly", clients=(1,), repeats=1, duration=1)
    assert main(["schedule", str(path), "--cron", "bad cron", "--store", store_url]) != 0
    assert "'bad cron' is not a cron expression" in capsys.readouterr().err
    sqlite = str(tmp_path / "r.sqlite")
    assert main(["schedule", str(path), "--cron", "0 2 * * *", "--store", sqlite]) != 0
    assert "PostgreSQL results store" in capsys.readouterr().err
    assert main(["schedule", str(path), "--cron", "* * * * * */10", "--store", store_url]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "campaign nightly scheduled (* * * * * */10, UTC) on queue pglab: next" in said, said
    workers.start("w1")
    deadline = time.monotonic() + 120
    while len(executions := _queued(workers.log("w1"))) < 2:
        assert time.monotonic() < deadline, workers.log("w1")
        time.sleep(0.5)
    capsys.readouterr()
    assert main(["schedule", "--list", "--store", store_url]) == 0
    listed = capsys.readouterr().out
    assert "nightly" in listed and "* * * * * */10" in listed and "nightly@" in listed, listed
    assert main(["schedule", "--remove", "nightly", "--store", store_url]) == 0
    first, second = executions[:2]
    assert first.startswith("nightly@") and first.endswith("0Z") and first < second  # due times
    for name in (first, second):
        jobs = wait_done(store_url, name)
        assert [j.status for j in jobs] == ["succeeded"]
        assert len(runs := runs_of(store_url, name)) == 2 and all(r.ok for r in runs)
        with open_store(store_url) as s:  # the file's order of variants, through the schedule
            stored = s.get_campaign(name)
        assert stored is not None and list(stored["spec"]["variants"]) == ["wm4", "b"]
    capsys.readouterr()
    assert main(["schedule", "--list", "--store", store_url]) == 0
    assert "no schedules" in capsys.readouterr().out
    assert main(["history", "nightly", "--store", store_url]) == 0
    shown = capsys.readouterr().out
    assert first.split("@")[1] in shown and second.split("@")[1] in shown, shown


def _queued(log: str) -> list[str]:
    """The executions a worker's ticks queued, in order."""
    return [line.split(": ")[1].split()[0] for line in log.splitlines()
            if line.startswith("schedule nightly: ") and " queued, " in line]  # fmt: skip
