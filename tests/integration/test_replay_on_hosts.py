"""A captured workload replayed from two generator hosts at once (SSH hosts in network
namespaces, ``netns_hosts.py``, with Debian's openssh-server and pgreplay): the workload of
``examples/replay.toml`` split by session (each whole, balanced by statements) between them,
each host's pgreplay replaying its set against a server the test starts outside pglab,
listening on the hosts' network; every statement replayed once, the lag the slowest's, and
nothing left on the hosts; and "local" among the generators, this machine's pgreplay beside a
host's."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from pglab.campaign.spec import HostSpec, ServerSpec
from pglab.hosts.ssh import Remote
from pglab.lab import Lab
from pglab.postgres.sources import resolve
from pglab.workloads.replay import engine, on_hosts, workload_file
from pglab.workloads.replay.workload_file import Workload

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).parents[2] / "examples" / "replay" / "pgbench-simple-update.json.gz"
SECRET = "replay-secret"


@pytest.fixture(scope="module")
def restored(net_server: Any, lab: Lab) -> Workload:
    """The example's workload, its dump restored on the server the hosts reach, the captured
    user given a password (over TCP)."""
    workload = workload_file.read(EXAMPLE)
    dump = str((EXAMPLE.parent / str(workload.data["dump"])).resolve())
    with net_server.admin() as conn:  # the captured user, with a password over TCP
        conn.execute(f"ALTER ROLE admin PASSWORD '{SECRET}'")
        conn.execute("DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, "
                     "pgbench_tellers, pgbench_history")  # fmt: skip
    conn_str = f"host={net_server.sock} port={net_server.port} user=admin dbname=postgres"
    subprocess.run([resolve(ServerSpec(), lab).exe("pg_restore"), "-d", conn_str, dump],
                   check=True, timeout=120)  # fmt: skip
    with open(net_server.data / "postgresql.conf", "a") as f:
        f.write("shared_preload_libraries = 'pg_stat_statements'\n")
    net_server.restart()
    return workload


def remotes_of(ns_hosts: Any, tmp_path: Path, n: int) -> list[Remote]:
    known = ns_hosts.known_hosts(tmp_path / "known_hosts")
    return [
        Remote(
            HostSpec(
                name=h.name,
                address=h.address,
                user="root",
                identity=str(ns_hosts.key),
                known_hosts=str(known),
            )
        ).open()  # fmt: skip
        for h in ns_hosts.hosts[:n]
    ]


def replayed(
    workload: Workload, net_server: Any, host: str, tmp_path: Path, players: list[engine.Player]
) -> engine.ReplayResult:
    """The workload replayed by ``players`` against the server (at ``host``, as they reach it)."""
    offset = net_server.log.stat().st_size
    return engine.replay(
        workload,
        lambda db: net_server.admin(db),
        host,
        net_server.port,
        tmp_path,
        lambda: net_server.log.read_bytes()[offset:].decode(errors="replace"),
        players=players,
    )


def test_two_hosts_replay_disjoint_sessions(ns_hosts: Any, net_server: Any, restored: Workload,
                                            tmp_path: Path) -> None:  # fmt: skip
    workload = restored
    remotes = remotes_of(ns_hosts, tmp_path, 2)
    env = {"PGPASSWORD": SECRET}
    try:
        players = [on_hosts.player(r, ns_hosts.gateway, net_server.port, env=env) for r in remotes]
        result = replayed(workload, net_server, ns_hosts.gateway, tmp_path, players)
    finally:
        for r in remotes:
            r.close()
    print(result.output)
    sets = workload_file.split(workload, 2)
    counts = [p.data["summary"]["statements"] for p in sets]
    assert sum(counts) == workload.data["summary"]["statements"] and min(counts) > 0
    ids = [{s["id"] for s in p.data["sessions"]} for p in sets]
    assert not ids[0] & ids[1]  # disjoint, every session in one set
    # every statement replayed once, from both hosts (each printed its own statistics)
    assert result.statements == workload.data["summary"]["statements"], result.output
    assert result.output.count("Replay statistics") == 2
    for n in (1, 2):
        assert f"--- set {n} of 2:" in result.output
    assert result.errors == 1  # the capture's own failed statement, failed again
    assert result.divergence.count == 0, result.divergence.said()
    assert result.replay_s >= 0.8 * result.captured_s
    for h in ns_hosts.hosts[:2]:
        assert not h.processes("pgreplay")
        assert not h.glob("/tmp/pglab-*/replay.log")


def test_this_machine_and_a_host_replay_together(
    ns_hosts: Any, net_server: Any, restored: Workload, tmp_path: Path
) -> None:
    """A replay's generators "local" and gen1: this machine's pgreplay replays one set
    against the server's address as it reaches it, gen1's the other."""
    (remote,) = remotes_of(ns_hosts, tmp_path, 1)
    env = {"PGPASSWORD": SECRET}
    try:
        players = [
            on_hosts.here(ns_hosts.gateway, net_server.port, env=env),
            on_hosts.player(remote, ns_hosts.gateway, net_server.port, env=env),
        ]
        result = replayed(restored, net_server, ns_hosts.gateway, tmp_path, players)
    finally:
        remote.close()
    assert result.statements == restored.data["summary"]["statements"], result.output
    assert result.output.count("Replay statistics") == 2
    assert result.divergence.count == 0, result.divergence.said()
    assert not list(tmp_path.rglob("replay.log"))  # this machine's copy of its set, removed
    assert not ns_hosts.hosts[0].processes("pgreplay")
