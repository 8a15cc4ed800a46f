"""A server pglab makes on another host over SSH (``[server] host``), with load generators on two
more hosts (sshd in network namespaces, ``netns_hosts.py``): the embedded binaries copied there,
a cluster made as the host's unprivileged user, TCP only for pglab and the generators with a
password, settings changed by reload and restart, the run's numbers checked against the
server's own commit count; nothing of it left on the host after the campaign, after a SIGKILL of
pglab, or after its sshd stopped."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from conftest import pglab_run_in_background, wait_for
from helpers.netns_hosts import LOGIN_USER

from pglab.cli import main
from pglab.lab import Lab
from pglab.postgres.sources import embedded_bindir
from pglab.store import open_store
from pglab.telemetry.summary import phase_summary

pytestmark = pytest.mark.integration


def campaign(tmp_path: Path, ns_hosts, name: str, duration: int = 3, generators=("gen1", "gen2"),
             extra: str = "") -> Path:  # fmt: skip
    known = ns_hosts.known_hosts(tmp_path / "known_hosts")
    bindir = embedded_bindir()
    hosts = ""
    for h in ns_hosts.hosts:
        user = LOGIN_USER if h.name == "gen3" else "root"
        hosts += (
            f'[hosts.{h.name}]\nssh = "{user}@{h.address}"\nidentity = "{ns_hosts.key}"\n'
            f'known_hosts = "{known}"\n' + (f'bindir = "{bindir}"\n' if h.name != "gen3" else "")
        )
    gens = ", ".join(f'"{g}"' for g in generators)
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f"""
name = "{name}"
[server]
host = "gen3"
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 4
duration = {duration}
generators = [{gens}]
{extra}
{hosts}"""
    )
    return path


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


def nothing_left(host, timeout: float = 10) -> bool:
    """No postgres or pgbench in the host's namespace, and no cluster directory of pglab's."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not host.processes("postgres") and not host.processes("pgbench"):
            return True
        time.sleep(0.2)
    return False


def pglab_dirs(host) -> set[str]:
    """The cluster directories of pglab's in the host's own /tmp."""
    return {p for p in host.glob("/tmp/pglab-*") if host.has(f"{p}/pgdata")}


def test_server_on_a_host_with_two_generators(ns_hosts, lab: Lab, tmp_path: Path, capsys):
    store = tmp_path / "r.sqlite"
    db = ns_hosts.hosts[2]
    before = pglab_dirs(db)
    extra = (
        '[variants.small]\nsettings = { work_mem = "1MB" }\n'
        '[variants.reloaded]\nsettings = { work_mem = "8MB" }\n'
        '[variants.restarted]\nsettings = { shared_buffers = "64MB", work_mem = "8MB" }\n'
    )
    path = campaign(tmp_path, ns_hosts, "on-host", extra=extra)
    assert cli("run", str(path), lab=lab, store=store) == 0, capsys.readouterr()
    out = capsys.readouterr()
    assert "making the PostgreSQL server on gen3" in out.out + out.err
    with open_store(str(store)) as s:
        rows = s.list_runs("on-host")
        runs = {r.variant: s.get_run(r.id) for r in rows}
    assert len(runs) == 3 and all(r is not None and r.ok for r in runs.values()), rows
    for variant, run in runs.items():
        assert run is not None
        (phase,) = run.phases
        gens = run.series["0"]["generators"]
        per_host = [dict(zip(gens["columns"], r, strict=True)) for r in gens["rows"]]
        assert [h["host"] for h in per_host] == ["gen1", "gen2"]
        assert phase.tps == sum(h["tps"] for h in per_host)  # exactly the sum of their totals
        summary = phase_summary(run.series["0"], phase.elapsed_s)
        commits = summary["figures"]["xact_commit"]
        assert abs(commits - phase.transactions) <= 0.02 * phase.transactions, (commits, phase)
        # the per-second series of pgbench and the server's statistics on one clock
        progress = run.series["0"]["progress"]
        stats = run.series["0"]["pg.database"]
        t_progress = [r[progress["columns"].index("t")] for r in progress["rows"]]
        t_stats = [r[stats["columns"].index("t")] for r in stats["rows"]]
        assert t_progress and t_stats
        # progress is in seconds since the phase began; the server's samples in epoch seconds,
        # around the same window (the samplers start before pgbench and stop after; their first
        # row comes a sampling interval after they start, which can be just after pgbench's
        # first second: once 0.05 s after it)
        begin = phase.started_at
        assert min(t_stats) - 1.0 <= begin + min(t_progress) <= max(t_stats), (begin, t_stats)
        assert begin + max(t_progress) - 1.5 <= max(t_stats) <= begin + phase.elapsed_s + 3
        # the host's OS, read over SSH every second: its CPU busy, postgres using some of it
        notes = run.series["0"].get("telemetry.notes")
        assert "os.cpu" in run.series["0"], (variant, notes, sorted(run.series["0"]))
        cpu, procs = run.series["0"]["os.cpu"], run.series["0"]["os.procs"]
        assert len(cpu["rows"]) >= 2 and len(procs["rows"]) == len(cpu["rows"])
        idle = [r[cpu["columns"].index("idle_pct")] for r in cpu["rows"]]
        assert all(0 <= x <= 100 for x in idle) and min(idle) < 95, idle
        pg_cpu = [r[procs["columns"].index("postgres_cpu_pct")] for r in procs["rows"]]
        assert max(pg_cpu) > 5, pg_cpu
        assert run.series["0"]["os.mem"]["rows"]
        fp = run.fingerprint
        assert fp["server_kind"] == "host" and fp["server_host"] == "gen3"
        assert (
            fp["settings"]["work_mem"]["shown"]
            == dict(small="1MB", reloaded="8MB", restarted="8MB")[variant]
        )
        assert set(fp["generators"]) == {"gen1", "gen2"}
        # every host's OS facts, read over SSH (one kernel here: this machine's values)
        swappiness = Path("/proc/sys/vm/swappiness").read_text().strip()
        for state in (fp["os_state"], *(g["os_state"] for g in fp["generators"].values())):
            assert state["vm.swappiness"] == swappiness and "transparent_hugepages" in state
    # the variants in the campaign's order: work_mem by reload, shared_buffers by restart
    timings = {v: r.timings for v, r in runs.items() if r is not None}
    assert timings["restarted"].get("restarted") == 1.0
    assert runs["restarted"].fingerprint["settings"]["shared_buffers"]["shown"] == "64MB"
    assert nothing_left(ns_hosts.hosts[2]) and pglab_dirs(db) == before
    assert cli("show", str(rows[0].id), lab=lab, store=store) == 0
    shown = capsys.readouterr().out
    assert "server: made by pglab on gen3" in shown and "load generator ran: on gen1, gen2" in shown
    assert cli("report", "on-host", "-o", str(tmp_path / "r.html"), lab=lab, store=store) == 0
    page = (tmp_path / "r.html").read_text()
    assert "made by pglab on gen3" in page and "the server&#39;s machine" in page
    assert "None" not in page.split("Environment", 1)[1].split("Settings", 1)[0]


def test_a_server_on_a_host_is_checked_against_that_host_s_memory(ns_hosts, lab, tmp_path,
                                                                   capsys):  # fmt: skip
    """gen3 reports 256 MiB of RAM (this machine has far more): shared_buffers = 512MB on it is
    refused before anything runs, naming gen3's memory; the same point fits once it reports
    its real memory."""
    extra = '[variants.big]\nsettings = { shared_buffers = "512MB" }\n'
    path = campaign(tmp_path, ns_hosts, "small-host", extra=extra)
    db = ns_hosts.hosts[2]
    with db.memory(256 * 1024):
        assert db.run("grep", "MemTotal", "/proc/meminfo").stdout.split()[1] == "262144"
        capsys.readouterr()
        assert cli("run", str(path), "--dry-run", lab=lab, store=tmp_path / "r.sqlite") == 2
        err = capsys.readouterr().err
    assert "shared_buffers = 512 MiB is more than gen3's 256 MiB of RAM" in err, err
    assert "the machine's" not in err, err
    assert cli("run", str(path), "--dry-run", lab=lab, store=tmp_path / "r.sqlite") == 0


def test_a_server_on_a_host_is_checked_against_that_host_s_free_space(ns_hosts, lab, tmp_path,
                                                                       capsys):  # fmt: skip
    """A dataset larger than the free space of gen3's /tmp (where its cluster goes) is refused
    before anything runs, naming that place and what the host has free there."""
    path = campaign(tmp_path, ns_hosts, "full-host")
    free = int(ns_hosts.hosts[2].run("df", "-B1", "--output=avail", "/tmp").stdout.split()[-1])
    scale = int(free / (15 * 2**20)) + 100  # pgbench: about 15 MB per scale unit
    path.write_text(path.read_text().replace("scale = 1\n", f"scale = {scale}\n"))
    capsys.readouterr()
    assert cli("run", str(path), "--dry-run", lab=lab, store=tmp_path / "r.sqlite") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "not enough disk space for the datasets: /tmp on gen3: about" in err, err
    assert f"scale {scale}" in err and "free" in err, err
    assert "hint: free space there on the host" in err and "storage target" not in err, err


def test_only_pglab_and_the_generators_may_connect_with_the_password(ns_hosts, lab, tmp_path):
    """The server listens on the host's address; pg_hba lets in pglab's address and the
    generators' by scram-sha-256 only: a password is needed, and another host is refused."""
    import psycopg

    from pglab.campaign.parse import load as load_campaign
    from pglab.hosts.ssh import Remote
    from pglab.postgres.on_host import HostServer
    from pglab.postgres.sources import resolve

    camp = load_campaign(campaign(tmp_path, ns_hosts, "hba"))
    specs = {h.name: h for h in camp.hosts}
    remote = Remote(specs["gen3"]).open()
    server = camp.variants[0].server
    srv = HostServer(server, lab, remote, resolve(server, lab), [specs["gen1"].address])
    try:
        with srv.connect(admin=True) as conn:
            assert conn.execute("SELECT current_setting('listen_addresses')").fetchone() == (
                ns_hosts.hosts[2].address,
            )
            hba = conn.execute(
                "SELECT type, address, auth_method FROM pg_hba_file_rules ORDER BY line_number"
            ).fetchall()
        assert hba[0] == ("local", None, "trust")
        assert {r[2] for r in hba[1:]} == {"scram-sha-256"}
        assert {r[1] for r in hba[1:]} == {ns_hosts.gateway, ns_hosts.hosts[0].address}
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(host=srv.listen, port=srv.port, user="postgres", dbname="postgres",
                            password="wrong", connect_timeout=5)  # fmt: skip
        # gen2 is no generator here: refused even with the right password
        gen2 = Remote(specs["gen2"]).open()
        try:
            said = gen2.run(
                [f"{embedded_bindir()}/psql", "-At", "-c", "SELECT 1",
                 srv.reach.conninfo("postgres")],
                env={"PGPASSWORD": str(srv.reach.password)}, check=False,
            )  # fmt: skip
        finally:
            gen2.close()
        assert said.returncode != 0 and "no pg_hba.conf entry" in said.stderr, said
    finally:
        srv.close()
        remote.close()
    assert nothing_left(ns_hosts.hosts[2])


def test_a_sigkilled_pglab_stops_the_server_on_the_host(ns_hosts, lab: Lab, tmp_path: Path):
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, ns_hosts, "on-host-killed", duration=20)
    err = tmp_path / "err.txt"
    db = ns_hosts.hosts[2]
    before = pglab_dirs(db)
    with pglab_run_in_background(path, lab.home, store, err) as proc:
        wait_for(lambda: all(h.processes("pgbench") for h in ns_hosts.hosts[:2]), proc, err,
                 "pgbench on both generators")  # fmt: skip
        assert db.processes("postgres")
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert all(nothing_left(h) for h in ns_hosts.hosts)
    left = pglab_dirs(db) - before
    assert len(left) == 1, "the killed pglab's cluster directory should still be there"
    # the next start removes it, and completes the campaign
    assert cli("run", str(path), lab=lab, store=store) == 0
    with open_store(str(store)) as s:
        assert [r.status for r in s.list_runs("on-host-killed")] == ["ok"]
    assert not (left & pglab_dirs(db))


def test_sshd_stopped_on_the_server_host_fails_the_run_clearly(ns_hosts, lab, tmp_path):
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, ns_hosts, "sshd-gone", duration=8)
    err = tmp_path / "err.txt"
    db = ns_hosts.hosts[2]
    before = pglab_dirs(db)
    try:
        with pglab_run_in_background(path, lab.home, store, err) as proc:
            wait_for(lambda: all(h.processes("pgbench") for h in ns_hosts.hosts[:2]), proc, err,
                     "pgbench on both generators")  # fmt: skip
            time.sleep(1)
            db.stop_sshd()
            # stopping sshd leaves its sessions; the link itself goes with them: kill them too
            for pid in db.processes("sshd"):
                os.kill(pid, signal.SIGKILL)
            assert proc.wait(120) == 1, err.read_text()
        assert all(nothing_left(h) for h in ns_hosts.hosts)
    finally:
        db.start_sshd()
    with open_store(str(store)) as s:
        (row,) = s.list_runs("sshd-gone")
    assert row.status == "failed" and row.error, row
    assert "the SSH link to gen3 was lost, and the server there stopped" in row.error, row.error
    # its directory could not be removed over the lost link: the next start does, and completes
    assert len(pglab_dirs(db) - before) == 1
    assert cli("run", str(path), lab=lab, store=store) == 0
    with open_store(str(store)) as s:
        assert [r.status for r in s.list_runs("sshd-gone")] == ["ok"]  # the failed one redone
    assert pglab_dirs(db) == before


def test_this_machine_as_a_generator_beside_a_host(ns_hosts, lab: Lab, tmp_path: Path):
    """generators = ["local", "gen1"]: pgbench here and on gen1, started together, merged."""
    store = tmp_path / "r.sqlite"
    path = campaign(tmp_path, ns_hosts, "local-and-gen1", generators=("local", "gen1"))
    assert cli("run", str(path), lab=lab, store=store) == 0
    with open_store(str(store)) as s:
        (row,) = s.list_runs("local-and-gen1")
        run = s.get_run(row.id)
    assert run is not None and run.ok, row.error
    (phase,) = run.phases
    gens = run.series["0"]["generators"]
    per_host = [dict(zip(gens["columns"], r, strict=True)) for r in gens["rows"]]
    assert [h["host"] for h in per_host] == ["local", "gen1"]
    assert [h["clients"] for h in per_host] == [2, 2]
    assert phase.tps == sum(h["tps"] for h in per_host) and all(h["tps"] > 0 for h in per_host)
    assert per_host[0]["clock_offset_ms"] == 0
    assert set(run.fingerprint["generators"]) == {"local", "gen1"}
    assert nothing_left(ns_hosts.hosts[2])


def test_a_server_on_a_host_on_its_storage_targets_reset_by_copying_its_files_there(
    ns_hosts, lab, tmp_path, capsys
):
    """Storage targets for a server pglab made on a host are paths there (PGDATA under one,
    pg_wal under another), and ``reset = "run"``: the dataset's files kept once on the host,
    each later run on a fresh copy of them (its pg_wal too, where the wal target has it), so a
    write load's runs all start from the same database (its size as each run starts, byte for
    byte); nothing of it left afterwards. An existing server (dsn) still refuses copy resets; a
    tmpfs target is refused for a host (pglab mounts nothing there)."""
    store = tmp_path / "r.sqlite"
    db = ns_hosts.hosts[2]
    before = pglab_dirs(db)
    made = db.run("install", "-d", "-o", LOGIN_USER, "/var/tmp/fast", "/var/tmp/wal")
    assert made.returncode == 0, made.stderr
    targets = (
        '[targets.fast]\npath = "/var/tmp/fast"\n[targets.wal]\npath = "/var/tmp/wal"\n'
        '[storage]\ndata = "fast"\nwal = "wal"\n'
    )
    path = campaign(tmp_path, ns_hosts, "host-reset", duration=2, generators=("gen1",))
    text = path.read_text().replace('name = "host-reset"\n', 'name = "host-reset"\nrepeats = 3\n')
    text = text.replace("[server]", targets + "[server]", 1)
    text = text.replace("scale = 1\n", 'scale = 1\nreset = "run"\n', 1)
    path.write_text(text.replace('script = "select-only"', 'script = "tpcb-like"'))
    assert cli("run", str(path), lab=lab, store=store) == 0, capsys.readouterr()
    said = capsys.readouterr()
    assert "keeping the dataset's files on gen3 for resets" in said.out + said.err
    with open_store(str(store)) as s:
        runs = [s.get_run(r.id) for r in s.list_runs("host-reset")]
    assert len(runs) == 3 and all(r is not None and r.ok for r in runs)
    sizes = {r.fingerprint["database_bytes"] for r in runs if r is not None}
    assert len(sizes) == 1, sizes  # each run started from the files as the dataset was made
    first, *later = [r.timings for r in runs if r is not None]
    assert first.get("keep_s", 0) > 0 and "reset_s" not in first
    assert all(t.get("reset_s", 0) > 0 and "keep_s" not in t for t in later), later
    for run in runs:
        assert run is not None
        fp = run.fingerprint
        assert fp["pgdata"].startswith("/var/tmp/fast/pglab-"), fp["pgdata"]
        assert fp["pg_wal"].startswith("/var/tmp/wal/pglab-"), fp["pg_wal"]
        assert fp["storage"]["data"]["name"] == "fast" and fp["storage"]["wal"]["kind"] == "path"
    assert {r.fingerprint["pg_wal"] for r in runs if r is not None} != {
        runs[0].fingerprint["pg_wal"]
    }
    assert nothing_left(db) and pglab_dirs(db) == before
    assert db.glob("/var/tmp/fast/*") == [] and db.glob("/var/tmp/wal/*") == []
    tmpfs = path.read_text().replace('path = "/var/tmp/fast"', 'kind = "tmpfs"\nsize = "1GB"')
    path.write_text(tmpfs)
    assert cli("run", str(path), "--dry-run", lab=lab, store=store) != 0
    assert 'on host "gen3" pglab mounts nothing' in " ".join(capsys.readouterr().err.split())
    refused = tmp_path / "dsn.toml"
    refused.write_text('name = "x"\n[server]\ndsn = "host=127.0.0.1"\n[dataset]\nreset = "run"\n')
    assert cli("run", str(refused), "--dry-run", lab=lab, store=store) != 0
    assert 'for an existing server (dsn) use "reinit"' in " ".join(capsys.readouterr().err.split())


def test_a_host_s_own_postgresql_is_checked_against_its_own_catalog(ns_hosts, lab, tmp_path,
                                                                     capsys):  # fmt: skip
    """gen3 with ``bindir`` Debian's PostgreSQL 15: a setting only 17 and later have
    (io_combine_limit), which this machine's PostgreSQL 18 knows, is refused before anything
    runs, by the catalog of a scratch server made on gen3 (then kept in the lab home)."""
    store = tmp_path / "r.sqlite"
    db = ns_hosts.hosts[2]
    before = pglab_dirs(db)
    path = campaign(tmp_path, ns_hosts, "host-catalog", generators=("gen1",))
    text = path.read_text().replace(
        '[server]\nhost = "gen3"\n',
        '[server]\nhost = "gen3"\nsettings = { io_combine_limit = "128kB", work_mem = "4MB" }\n',
    )
    gen3 = text.index("[hosts.gen3]")
    text = text[:gen3] + text[gen3:].replace(
        "known_hosts = ", 'bindir = "/usr/lib/postgresql/15/bin"\nknown_hosts = ', 1
    )
    path.write_text(text)
    assert cli("run", str(path), "--dry-run", lab=lab, store=store) != 0
    err = " ".join(capsys.readouterr().err.split())
    assert 'point "base" (PostgreSQL on gen3): unknown setting "io_combine_limit"' in err, err
    assert "work_mem" not in err
    assert list((lab.home / "catalog").glob("host-*-15.*.json"))  # kept for the next check
    assert nothing_left(db) and pglab_dirs(db) == before
