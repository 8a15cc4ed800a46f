"""[os] cpus as an axis, on pure functions: which CPUs the server and pgbench get (and what the
plan says of them), and TPS against cores from synthetic stored rows with known answers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pglab.analysis.cores import cores_key, over_cores
from pglab.campaign.os_checks import cpu_list
from pglab.campaign.os_spec import OsSpec
from pglab.rows import RunRow
from pglab.run import affinity


def _row(i: int, cpus: int, clients: int, tps: float | None, ok: bool = True) -> RunRow:
    axes = {"os.cpus": cpus, "clients": clients}
    label = f"os.cpus={cpus} clients={clients}"
    return RunRow(i, "c", f"r{i}", label, "base", label, 1, "ok" if ok else "failed", tps,
                  0.0, 1.0, None, axes=dict(axes))  # fmt: skip


def test_tps_against_cores_per_series_with_efficiency() -> None:
    rows = [_row(1, 1, 8, 100.0), _row(2, 1, 8, 120.0), _row(3, 2, 8, 200.0),
            _row(4, 4, 8, 300.0), _row(5, 4, 8, None, ok=False), _row(6, 1, 16, 150.0)]  # fmt: skip
    curves = over_cores(rows)
    assert list(curves) == ["clients=8"]  # clients=16 has one core count: no curve
    one, two, four = curves["clients=8"]
    assert (one.cpus, one.n, one.tps, one.tps_per_core, one.efficiency) == (1, 2, 110.0, 110.0, 1.0)
    assert (two.tps_per_core, round(two.efficiency, 4)) == (100.0, round(200 / 220, 4))
    assert (four.n, four.tps, four.tps_per_core) == (1, 300.0, 75.0)
    assert round(four.efficiency, 4) == round(300 / 440, 4)


def test_a_point_without_the_axis_is_on_no_curve() -> None:
    assert cores_key({"clients": 4}, "base", "clients=4") is None
    assert cores_key({"os.cpus": 2}, "fast", "fast os.cpus=2") == ("fast", 2)
    assert cores_key({"os.cpus": 2, "clients": 4}, "b", "os.cpus=2 clients=4") == ("clients=4", 2)


def test_cpu_lists_as_the_kernel_writes_them() -> None:
    assert cpu_list([3, 0, 1, 2, 6, 8, 9]) == "0-3,6,8-9"
    assert cpu_list([1]) == "1"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_server_from_the_first_cpus_pgbench_on_the_others_or_shared() -> None:
    usable = sorted(os.sched_getaffinity(0))
    spec = OsSpec(cpus=1)
    assert affinity.server_cpus(spec) == {usable[0]}
    assert affinity.client_cpus(spec) == set(usable[1:])
    assert not affinity.shares(spec)
    every = OsSpec(cpus=len(usable))
    assert affinity.server_cpus(every) == set(usable)
    assert affinity.client_cpus(every) is None and affinity.shares(every)
    assert affinity.plan_words(every).endswith("pgbench shares them (no CPU left over)")
    both = OsSpec(cpus=len(usable), client_cpus=1)  # the last CPU, the server's too
    assert affinity.client_cpus(both) == {usable[-1]} and affinity.shares(both)
    assert affinity.plan_words(both).endswith(f"pgbench on CPU {usable[-1]} (shared)")
    assert affinity.plan_words(OsSpec()) == ""
    assert affinity.server_cpus(OsSpec(client_cpus=1)) is None


def test_a_child_confined_and_given_back() -> None:
    """A real child process (sleep) confined, then given every CPU again: what the executor
    does to a server kept for a point that asks no cores."""
    import subprocess

    usable = frozenset(os.sched_getaffinity(0))
    child = subprocess.Popen(["sleep", "30"])
    try:
        cpus = affinity.ServerCpus()
        facts = cpus.set(child.pid, OsSpec(cpus=1))
        assert facts is not None and facts["server"] == [min(usable)]
        assert os.sched_getaffinity(child.pid) == {min(usable)}
        assert cpus.set(child.pid, OsSpec()) is not None  # given back
        assert os.sched_getaffinity(child.pid) == usable
        assert cpus.set(child.pid, OsSpec()) is None  # nothing to give back now
    finally:
        child.kill()
        child.wait()
    assert os.sched_getaffinity(0) == usable


def test_a_child_started_on_cpus_runs_under_taskset() -> None:
    """pgbench's and sysbench's way: the CPUs set before the program starts (a real child)."""
    from pglab import procs

    usable = sorted(os.sched_getaffinity(0))
    argv = procs._wrap(["true"], None, cpus=[usable[-1]])
    at = next(i for i, a in enumerate(argv) if a.endswith("taskset"))  # after setpriv
    assert argv[at + 1 :] == ["--cpu-list", str(usable[-1]), "true"], argv
    done = procs.run(["grep", "Cpus_allowed_list", "/proc/self/status"], timeout=30)
    assert done.stdout.split()[-1] == cpu_list(usable)  # without cpus: every CPU
    child = procs.spawn(["sleep", "30"], cpus=[usable[-1]])
    try:
        comm = Path(f"/proc/{child.pid}/comm")
        assert procs.wait_until(lambda: comm.read_text().strip() == "sleep", 10)
        assert os.sched_getaffinity(child.pid) == {usable[-1]}
    finally:
        procs.terminate(child)
