"""Load generators on other hosts (sshd in network namespaces, ``netns_hosts.py``) against an
existing server the test starts, listening on the hosts' network: clients split between them,
started together, results merged (TPS the sum of the pgbench totals, close to the server's own
commit count; latency from every host's transaction log), each host's figures and clock offset
stored; nothing left running on the hosts, also after a SIGKILL of pglab."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from conftest import pglab_run_in_background, wait_for
from helpers.existing_server import BENCH_PASSWORD

from pglab.cli import main
from pglab.lab import Lab
from pglab.store import open_store
from pglab.telemetry.summary import phase_summary

pytestmark = pytest.mark.integration


@pytest.fixture
def password(monkeypatch):
    monkeypatch.setenv("PGPASSWORD", BENCH_PASSWORD)


def campaign(tmp_path: Path, ns_hosts, server, name: str, duration: int = 3,
             clients: int = 4, script: str = 'script = "select-only"') -> Path:  # fmt: skip
    known = ns_hosts.known_hosts(tmp_path / "known_hosts")
    bindir = server.binaries.bindir
    hosts = "".join(
        f'[hosts.{h.name}]\nssh = "root@{h.address}"\nidentity = "{ns_hosts.key}"\n'
        f'known_hosts = "{known}"\nbindir = "{bindir}"\n'
        for h in ns_hosts.hosts
    )
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f"""
name = "{name}"
[server]
dsn = "{server.dsn()}"
[dataset]
scale = 1
[workload]
{script}
clients = {clients}
duration = {duration}
generators = ["gen1", "gen2"]
{hosts}"""
    )
    return path


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


@pytest.mark.usefixtures("password")
def test_two_generators_merged_as_one_run(ns_hosts, net_server, lab: Lab, tmp_path: Path,
                                           capsys):  # fmt: skip
    store = tmp_path / "r.sqlite"
    mix = 'scripts = ["select-only", {builtin = "simple-update", weight = 3}]'
    path = campaign(tmp_path, ns_hosts, net_server, "two", script=mix)
    assert cli("run", str(path), lab=lab, store=store) == 0, capsys.readouterr()
    with open_store(str(store)) as s:
        (row,) = s.list_runs("two")
        run = s.get_run(row.id)
    assert run is not None and run.ok
    (phase,) = run.phases
    gens = run.series["0"]["generators"]
    cols = gens["columns"]
    per_host = [dict(zip(cols, r, strict=True)) for r in gens["rows"]]
    assert [h["host"] for h in per_host] == ["gen1", "gen2"]
    assert [h["clients"] for h in per_host] == [2, 2]
    assert phase.tps == sum(h["tps"] for h in per_host)  # exactly the sum of their totals
    assert phase.transactions == sum(h["transactions"] for h in per_host)
    # one machine, one clock: the offset measured is 0 within the uncertainty it states
    assert all(abs(h["clock_offset_ms"]) <= h["clock_uncertainty_ms"] + 1 for h in per_host)
    assert all(h["clock_uncertainty_ms"] < 1000 for h in per_host)
    # measured again after the phase: one clock, no drift beyond what the two measures allow
    assert all(abs(h["clock_drift_ms"]) <= 2 * h["clock_uncertainty_ms"] + 50 for h in per_host)
    # the server's own count of commits in the phase agrees with the generators' (2%)
    summary = phase_summary(run.series["0"], phase.elapsed_s)
    commits = summary["figures"]["xact_commit"]
    assert abs(commits - phase.transactions) <= 0.02 * phase.transactions, (commits, phase)
    # latency from both hosts' transaction logs: every transaction counted once
    latency = run.series["0"]["latency"]
    count = latency["columns"].index("count")
    assert sum(r[count] for r in latency["rows"]) == phase.transactions
    assert run.series["0"]["progress"]["rows"]  # the seconds where both ran
    # each script of the mix merged as the phase is: TPS and transactions the hosts' sums
    select, update = phase.report.scripts
    assert select.weight == 1 and update.weight == 3
    assert select.tps is not None and update.tps is not None
    assert select.tps + update.tps == pytest.approx(phase.tps, rel=0.01)
    # pgbench's per-script counters are shared by its threads without a lock ("XXX could use
    # a mutex here, but we choose not to"): an increment can be lost, never gained
    lost = phase.transactions - (select.transactions + update.transactions)
    assert 0 <= lost <= 0.005 * phase.transactions, (select, update, phase.transactions)
    assert update.share_pct is not None and abs(update.share_pct - 75) <= 5
    assert update.latency_avg_ms is not None and update.latency_avg_ms > 0
    fp = run.fingerprint
    assert set(fp["generators"]) == {"gen1", "gen2"}
    assert fp["generators"]["gen1"]["pgbench"].startswith("pgbench")
    state = fp["generators"]["gen2"]["os_state"]  # its OS facts, read over SSH
    assert state["vm.dirty_ratio"] == Path("/proc/sys/vm/dirty_ratio").read_text().strip()
    assert state["transparent_hugepages"] in ("always", "madvise", "never"), state
    assert fp["client"].startswith("on gen1, gen2")
    assert BENCH_PASSWORD not in phase.output and BENCH_PASSWORD not in " ".join(phase.argv)
    for h in ns_hosts.hosts:
        assert not h.processes("pgbench")
    assert cli("show", str(run.id), lab=lab, store=store) == 0
    assert "load generator ran: on gen1, gen2" in capsys.readouterr().out


# a custom script beside the campaign file: each transaction an update and a select, and the
# pipeline's \syncpipeline, which pgbench has only from 17 on
UPDATE_SQL = """\\set aid random(1, 100000 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
END;
"""
PIPELINED_SQL = """\\set aid random(1, 100000 * :scale)
\\startpipeline
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
\\syncpipeline
SELECT 1;
\\endpipeline
"""


@pytest.mark.usefixtures("password")
def test_a_custom_script_reaches_hosts_that_lack_it(ns_hosts, net_server, lab: Lab,
                                                    tmp_path: Path, capsys):  # fmt: skip
    """The script exists only on this machine (the hosts have their own /tmp): pglab copies it
    to each generator by content, the report names it as the campaign did, and the copies go
    with the campaign."""
    (tmp_path / "update.sql").write_text(UPDATE_SQL)
    assert not any(h.has(tmp_path / "update.sql") for h in ns_hosts.hosts)
    store = tmp_path / "r.sqlite"
    mix = 'scripts = [{file = "update.sql", weight = 1}, "select-only"]'
    path = campaign(tmp_path, ns_hosts, net_server, "custom", script=mix)
    assert cli("run", str(path), "--dry-run", lab=lab, store=store) == 0, capsys.readouterr()
    assert cli("run", str(path), lab=lab, store=store) == 0, capsys.readouterr()
    with open_store(str(store)) as s:
        (row,) = s.list_runs("custom")
        run = s.get_run(row.id)
    assert run is not None and run.ok, row.error
    (phase,) = run.phases
    update, select = phase.report.scripts
    assert update.name == str(tmp_path / "update.sql") and update.transactions > 0
    assert select.name == "<builtin: select only>" and select.transactions > 0
    gens = run.series["0"]["generators"]
    assert all(r[gens["columns"].index("transactions")] > 0 for r in gens["rows"])
    for h in ns_hosts.hosts[:2]:  # the copies removed when the campaign ended
        assert not h.glob("/tmp/pglab-*/*/update.sql"), h.glob("/tmp/pglab-*/*/*")


@pytest.mark.usefixtures("password")
def test_the_dry_run_checks_a_script_with_each_generator_s_own_pgbench(
    ns_hosts, net_server, lab: Lab, tmp_path: Path, capsys
):
    """A script this machine's pgbench (18) takes but gen1's (Debian's 15) does not: refused
    before anything runs, naming gen1 and its pgbench."""
    pg15 = Path("/usr/lib/postgresql/15/bin")
    assert (pg15 / "pgbench").exists(), "apt-get install postgresql-15 (.ci/run does)"
    (tmp_path / "pipelined.sql").write_text(PIPELINED_SQL)
    path = campaign(tmp_path, ns_hosts, net_server, "pipelined",
                    script='script = "pipelined.sql"')  # fmt: skip
    text = path.read_text()
    bindir = f'bindir = "{net_server.binaries.bindir}"'
    first = text.index(bindir)  # gen1's
    path.write_text(text[:first] + f'bindir = "{pg15}"' + text[first + len(bindir) :])
    capsys.readouterr()
    assert cli("run", str(path), "--dry-run", lab=lab, store=tmp_path / "r.sqlite") == 2
    err = capsys.readouterr().err
    assert "custom script" in err and "pipelined.sql" in err, err
    assert "pgbench (PostgreSQL) 15" in err and "on gen1" in err, err
    assert "syncpipeline" in err, err
    assert "gen2" not in err.split("custom script")[1].split("\n")[0], err  # gen2's is 18


@pytest.mark.usefixtures("password")
def test_a_generator_host_short_of_cpu_is_flagged_client_bound(
    ns_hosts, net_server, lab: Lab, tmp_path: Path, capsys
):
    """gen1's sessions get a tenth of a CPU (a cgroup quota, as a container's): its pgbench uses
    all of it, and gen1 is said to be client-bound with its CPU share; gen2 is not."""
    gen1 = ns_hosts.hosts[0]
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, ns_hosts, net_server, "cpu-bound", duration=4, clients=8)
    with gen1.cpu_quota(0.1):
        assert cli("run", str(path), lab=lab, store=store) == 0, capsys.readouterr()
    with open_store(str(store)) as s:
        (row,) = s.list_runs("cpu-bound")
        run = s.get_run(row.id)
    assert run is not None and run.ok
    gens = run.series["0"]["generators"]
    g1, g2 = (dict(zip(gens["columns"], r, strict=True)) for r in gens["rows"])
    assert g1["cpus_available"] == 0.1 and g2["cpus_available"] == os.cpu_count()
    # the quota held gen1's session back in most periods; pgbench had most of the tenth (sshd's
    # session and pglab's probes share it)
    assert g1["client_bound"] == 1 and g1["cpu_throttled_pct"] >= 50, g1
    assert 5 <= g1["pgbench_cpu_pct"] <= 12, g1
    assert g2["client_bound"] == 0 and g2["pgbench_cpu_pct"] > g1["pgbench_cpu_pct"], g2
    seconds = run.series["0"]["generators.cpu"]
    hosts = [r[seconds["columns"].index("host")] for r in seconds["rows"]]
    assert hosts.count("gen1") >= 2 and hosts.count("gen2") >= 2
    capsys.readouterr()
    assert cli("show", str(run.id), lab=lab, store=store) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "pgbench on generator gen1 used" in out and "0.1 CPU(s)" in out, out
    assert "held it back in" in out, out
    assert "generator gen2 used" not in out


@pytest.mark.usefixtures("password")
def test_a_sigkilled_pglab_leaves_nothing_running_on_the_hosts(
    ns_hosts, net_server, lab: Lab, tmp_path: Path
):
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, ns_hosts, net_server, "killed", duration=8)
    err = tmp_path / "err.txt"
    with pglab_run_in_background(path, lab.home, store, err) as proc:
        wait_for(lambda: all(h.processes("pgbench") for h in ns_hosts.hosts[:2]), proc, err,
                 "pgbench on both hosts")  # fmt: skip
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    deadline = time.monotonic() + 10
    while any(h.processes("pgbench") for h in ns_hosts.hosts) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(h.processes("pgbench") for h in ns_hosts.hosts)
    # the next start completes the campaign
    assert cli("run", str(path), lab=lab, store=store) == 0
    with open_store(str(store)) as s:
        assert [r.status for r in s.list_runs("killed")] == ["ok"]


@pytest.mark.usefixtures("password")
def test_os_limits_are_pgbench_s_on_the_hosts_soft_and_hard(
    ns_hosts, net_server, lab: Lab, tmp_path: Path
):
    """[os] limits with a server elsewhere: pgbench's alone, set on each generator host by its
    prlimit, soft and hard (read from /proc while it runs there)."""
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, ns_hosts, net_server, "limited", duration=6)
    path.write_text(path.read_text() + "[os]\nlimits = { nofile = 1234, nproc = 2345 }\n")
    err = tmp_path / "err.txt"
    seen: dict[str, set[tuple[str, ...]]] = {}
    with pglab_run_in_background(path, lab.home, store, err) as proc:
        wait_for(lambda: all(h.processes("pgbench") for h in ns_hosts.hosts[:2]), proc, err,
                 "pgbench on both hosts")  # fmt: skip
        for h in ns_hosts.hosts[:2]:
            for pid in h.processes("pgbench"):
                lines = Path(f"/proc/{pid}/limits").read_text().splitlines()
                files = next(ln.split()[3:5] for ln in lines if ln.startswith("Max open files"))
                procs = next(ln.split()[2:4] for ln in lines if ln.startswith("Max processes"))
                seen.setdefault(h.name, set()).add((*files, *procs))
        assert proc.wait(120) == 0, err.read_text()
    assert seen == {h.name: {("1234", "1234", "2345", "2345")} for h in ns_hosts.hosts[:2]}
    with open_store(str(store)) as s:
        assert [r.status for r in s.list_runs("limited")] == ["ok"]


@pytest.mark.usefixtures("password")
def test_a_generator_s_pgbench_killed_fails_the_run_naming_the_host(
    ns_hosts, net_server, lab: Lab, tmp_path: Path
):
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, ns_hosts, net_server, "pgbench-killed", duration=20)
    err = tmp_path / "err.txt"
    with pglab_run_in_background(path, lab.home, store, err) as proc:
        gen2 = ns_hosts.hosts[1]
        wait_for(lambda: bool(gen2.processes("pgbench")), proc, err, "pgbench on gen2")
        time.sleep(1)
        for pid in gen2.processes("pgbench"):
            os.kill(pid, signal.SIGKILL)
        assert proc.wait(120) == 1, err.read_text()
    with open_store(str(store)) as s:
        (row,) = s.list_runs("pgbench-killed")
    assert row.status == "failed"
    assert "pgbench failed on gen2" in (row.error or ""), row.error
    assert not any(h.processes("pgbench") for h in ns_hosts.hosts)


def run_with_gen1_ahead(ns_hosts, server, lab: Lab, tmp_path: Path, name: str,
                        script: str = 'script = "select-only"'):  # fmt: skip
    """A 4 s campaign on both generators with gen1's clock 30 s ahead: its stored run."""
    gen1 = ns_hosts.hosts[0]
    ns_hosts.shift_clock(gen1, 30)
    try:
        store = tmp_path / "r.sqlite"
        path = campaign(tmp_path, ns_hosts, server, name, duration=4, script=script)
        assert cli("run", str(path), lab=lab, store=store) == 0
    finally:
        ns_hosts.shift_clock(gen1, None)
    with open_store(str(store)) as s:
        (row,) = s.list_runs(name)
        run = s.get_run(row.id)
    assert run is not None and run.ok
    return run


@pytest.mark.usefixtures("password")
def test_a_generator_whose_clock_is_ahead_is_measured_and_put_back_in_step(
    ns_hosts, net_server, lab: Lab, tmp_path: Path
):
    run = run_with_gen1_ahead(ns_hosts, net_server, lab, tmp_path, "shifted")
    gens = run.series["0"]["generators"]
    offsets = {r[0]: r[gens["columns"].index("clock_offset_ms")] for r in gens["rows"]}
    assert 29_500 < offsets["gen1"] < 30_500 and abs(offsets["gen2"]) < 500
    after = {r[0]: r[gens["columns"].index("clock_offset_after_ms")] for r in gens["rows"]}
    assert 29_500 < after["gen1"] < 30_500  # still ahead after the phase, by as much
    # without the correction no second would have both hosts in it
    progress = run.series["0"]["progress"]["rows"]
    assert len(progress) >= 2
    # every transaction of both logs on pglab's clock: inside the phase, none 30 s ahead
    (phase,) = run.phases
    latency = run.series["0"]["latency"]
    epoch, count = latency["columns"].index("epoch"), latency["columns"].index("count")
    assert sum(r[count] for r in latency["rows"]) == phase.transactions
    assert all(phase.started_at - 2 <= r[epoch] <= phase.started_at + phase.elapsed_s + 2
               for r in latency["rows"])  # fmt: skip


@pytest.mark.usefixtures("password")
def test_without_progress_the_hosts_aggregate_logs_make_the_seconds(
    ns_hosts, net_server, lab: Lab, tmp_path: Path
):
    # gen1's clock ahead: its log's seconds must be put back in step too
    lines = 'script = "select-only"\nlatency_log = "aggregate"\nprogress = false'
    run = run_with_gen1_ahead(ns_hosts, net_server, lab, tmp_path, "no-progress", lines)
    (phase,) = run.phases
    assert "-P" not in phase.argv and "--progress-timestamp" not in phase.argv
    latency = run.series["0"]["latency"]
    epoch = latency["columns"].index("epoch")
    assert all(phase.started_at - 2 <= r[epoch] <= phase.started_at + phase.elapsed_s + 2
               for r in latency["rows"])  # fmt: skip
    # each second a whole one of both hosts, read from their logs: the phase's TPS, not half
    # of it (a host's part-second, or seconds left out of step)
    progress = run.series["0"]["progress"]
    tps = progress["columns"].index("tps")
    rows = progress["rows"]
    assert len(rows) >= 2, rows
    assert all(0.6 * phase.tps < r[tps] < 1.6 * phase.tps for r in rows), (rows, phase.tps)


@pytest.mark.usefixtures("password")
def test_a_link_taken_down_fails_the_run_and_nothing_stays_on_the_host(
    ns_hosts, net_server, lab: Lab, tmp_path: Path
):
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, ns_hosts, net_server, "link-down", duration=30)
    err = tmp_path / "err.txt"
    gen2 = ns_hosts.hosts[1]
    try:
        with pglab_run_in_background(path, lab.home, store, err) as proc:
            wait_for(lambda: bool(gen2.processes("pgbench")), proc, err, "pgbench on gen2")
            time.sleep(1)
            ns_hosts.link(gen2, up=False)
            assert proc.wait(120) == 1, err.read_text()
            # sshd gives the lost link up (ClientAliveInterval 2 x 3), and its pgbench with it
            deadline = time.monotonic() + 15
            while gen2.processes("pgbench") and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not gen2.processes("pgbench"), (gen2.dir / "sshd.log").read_text()[-2000:]
    finally:
        ns_hosts.link(gen2, up=True)
    with open_store(str(store)) as s:
        (row,) = s.list_runs("link-down")
    assert row.status == "failed" and "gen2" in (row.error or ""), row.error
    assert not any(h.processes("pgbench") for h in ns_hosts.hosts)
