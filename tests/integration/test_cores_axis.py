"""[os] cpus for real: a campaign of ``[matrix.os] cpus = [1, 2]`` on this machine's servers.
While each run's phase goes, the test reads (psutil) the affinity of the postmaster, of every
backend and of pgbench (each of its threads): with cpus = 1 the server is on CPU 0 alone and
pgbench on the other CPU; with cpus = 2 both have every CPU. Each run's fingerprint records
them; afterwards pglab's own affinity is every CPU, after a failed run too; the report shows
TPS per core count with the waits."""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

import psutil
import pytest
from conftest import lab_processes, pgbench_measuring, pglab_run_in_background, wait_for

from pglab import report
from pglab.campaign import parse as campaign
from pglab.cli import show
from pglab.lab import Lab
from pglab.pgbench.output import ProgressSample
from pglab.run import campaign_run
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store

pytestmark = pytest.mark.integration

CAMPAIGN = """
name = "cores"
order = "sequential"
[dataset]
scale = 1
[workload]
script = "tpcb-like"
duration = 2
latency_log = "off"
[matrix]
clients = [1, 2]
[matrix.os]
cpus = [1, 2]
"""

ALL = set(range(psutil.cpu_count()))


class Sampling(QuietEvents):
    """Reads, each second of a phase, the CPUs of the server's processes and of pgbench."""

    def __init__(self, client: str = "pgbench") -> None:
        self.client = client  # the load generator's process name
        self.executor: Executor | None = None
        self.label = ""
        self.seen: dict[str, dict[str, set[frozenset[int]]]] = {}

    def run_started(self, run, index: int, total: int) -> None:  # type: ignore[no-untyped-def]
        self.label = run.label

    def progress(self, sample: ProgressSample) -> None:
        assert self.executor is not None and self.executor.cluster is not None
        proc = self.executor.cluster.proc
        assert proc is not None
        seen = self.seen.setdefault(self.label, {"server": set(), "pgbench": set()})
        postmaster = psutil.Process(proc.pid)
        backends = postmaster.children(recursive=True)
        assert len(backends) >= 3, backends  # checkpointer, walwriter, a client's backend, ...
        for p in [postmaster, *backends]:
            with contextlib.suppress(ProcessLookupError):  # a backend that ended since
                seen["server"].add(frozenset(os.sched_getaffinity(p.pid)))
        mine = psutil.Process().children(recursive=True)
        pgbench = [p for p in mine if p.name() == self.client]
        assert pgbench, mine
        for p in pgbench:
            for thread in p.threads():  # -j: each thread's own affinity
                seen["pgbench"].add(frozenset(os.sched_getaffinity(thread.id)))


@pytest.mark.skipif(len(ALL) < 2, reason="needs two CPUs")
def test_cores_confine_server_and_pgbench_and_leave_nothing(
    tmp_path: Path, lab: Lab, no_leftovers, capsys: pytest.CaptureFixture[str]
) -> None:
    before = os.sched_getaffinity(0)
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN)
    events = Sampling()
    with open_store(str(tmp_path / "r.sqlite")) as store:
        executor = Executor(lab, store, events)
        events.executor = executor
        out = campaign_run.run_campaign(executor, campaign.load(path))
        runs = [store.get_run(i) for i in out.run_ids]
        assert out.ok == 4, [r.error for r in runs]
        show.print_points(store, "cores", wide=True)
        written = report.write(store, "cores", tmp_path / "report.html", lab.home)
    assert os.sched_getaffinity(0) == before == ALL  # pglab's own: every CPU
    one, two = {0}, ALL
    for label, seen in events.seen.items():
        server, client = (one, ALL - one) if "os.cpus=1" in label else (two, two)
        assert seen["server"] == {frozenset(server)}, (label, seen)
        assert seen["pgbench"] == {frozenset(client)}, (label, seen)
    assert len(events.seen) == 4
    for r in runs:
        aff = r.fingerprint["cpu_affinity"]
        if "os.cpus=1" in r.label:
            assert aff == {"server": [0], "client": sorted(ALL - one), "shared": False}, aff
        else:
            assert aff == {"server": sorted(ALL), "client": sorted(ALL), "shared": True}, aff
    shown = capsys.readouterr().out
    assert "TPS against cores (the server's CPUs)" in shown, shown
    lines = [ln for ln in shown.splitlines() if re.search(r"clients=\d+ +. +[12] ", ln)]
    assert len(lines) == 4, shown  # a line per series and core count
    html = written.html.read_text()
    assert "tps-vs-cores.png" in {p.name for p in written.pngs}
    table = html[html.index('<table id="cores-table">') :]
    table = table[: table.index("</table>")]
    rows = [r for r in table.split("<tr>")[2:]]
    assert len(rows) == 4, table  # clients=1 and clients=2, each at 1 and 2 cores
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in rows]
    assert [(c[0], c[1]) for c in cells] == [
        ("clients=1", "1"),
        ("clients=1", "2"),
        ("clients=2", "1"),
        ("clients=2", "2"),
    ], cells
    for c in cells:
        assert float(c[2].replace(",", "")) > 0  # TPS
        assert "%" in c[6] or c[6] == "none sampled", c  # the top waits
    assert any("%" in c[6] for c in cells), cells  # two clients on one core wait on something


SYSBENCH = """
name = "cores-sysbench"
[dataset]
tables = 2
table_size = 5000
[os]
cpus = 1
[workload]
generator = "sysbench"
test = "oltp_read_write"
clients = 2
duration = 2
"""


@pytest.mark.skipif(len(ALL) < 2, reason="needs two CPUs")
def test_sysbench_on_the_cpus_the_server_lacks(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    path = tmp_path / "c.toml"
    path.write_text(SYSBENCH)
    events = Sampling("sysbench")
    with open_store(str(tmp_path / "r.sqlite")) as store:
        executor = Executor(lab, store, events)
        events.executor = executor
        out = campaign_run.run_campaign(executor, campaign.load(path))
        (run,) = [store.get_run(i) for i in out.run_ids]
    assert run.status == "ok", run.error
    ((label, seen),) = events.seen.items()
    assert seen == {"server": {frozenset({0})}, "pgbench": {frozenset(ALL - {0})}}, seen
    assert run.fingerprint["cpu_affinity"]["client"] == sorted(ALL - {0})


FAILING = """
name = "cores-fail"
[dataset]
scale = 1
[os]
cpus = 1
[workload]
script = "/nonexistent/script.sql"
duration = 1
"""


def test_a_failed_run_leaves_pglab_on_every_cpu(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    before = os.sched_getaffinity(0)
    path = tmp_path / "c.toml"
    path.write_text(FAILING.replace("/nonexistent/script.sql", str(tmp_path / "bad.sql")))
    (tmp_path / "bad.sql").write_text("select no_such_function();\n")
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        (run,) = [store.get_run(i) for i in out.run_ids]
    assert run.status == "failed", run.error
    assert run.fingerprint["cpu_affinity"]["server"] == [0]
    assert os.sched_getaffinity(0) == before


LONG = """
name = "cores-killed"
[dataset]
scale = 1
[os]
cpus = 1
[workload]
script = "select-only"
clients = 2
duration = 60
latency_log = "off"
"""


@pytest.mark.skipif(len(ALL) < 2, reason="needs two CPUs")
def test_a_killed_pglab_leaves_nothing_confined(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    """SIGKILL while pgbench measures: the server and pgbench end with it, and no process is
    left on fewer CPUs than it had (this one, and every other on the machine as before)."""
    path = tmp_path / "c.toml"
    path.write_text(LONG)
    err = tmp_path / "err"
    before = {p.pid: frozenset(os.sched_getaffinity(p.pid)) for p in psutil.process_iter()
              if _readable(p.pid)}  # fmt: skip
    with pglab_run_in_background(path, lab.home, tmp_path / "r.sqlite", err) as proc:
        wait_for(lambda: pgbench_measuring(lab.home), proc, err, "pgbench")
        mine = lab_processes(lab.home)
        server = [p for p in mine if p.name() == "postgres"]
        pgbench = [p for p in mine if p.name() == "pgbench"]
        assert server and pgbench, mine
        assert {frozenset(os.sched_getaffinity(p.pid)) for p in server} == {frozenset({0})}
        assert {frozenset(os.sched_getaffinity(p.pid)) for p in pgbench} == {frozenset(ALL - {0})}
        assert os.sched_getaffinity(proc.pid) == ALL  # pglab itself: every CPU
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and [p for p in lab_processes(lab.home) if _alive(p)]:
        time.sleep(0.2)
    assert not [p for p in lab_processes(lab.home) if _alive(p)]
    after = {pid: frozenset(os.sched_getaffinity(pid)) for pid in before if _readable(pid)}
    assert after == {pid: cpus for pid, cpus in before.items() if pid in after}
    assert os.sched_getaffinity(0) == ALL


def _readable(pid: int) -> bool:
    try:
        os.sched_getaffinity(pid)
    except OSError:
        return False
    return True


def _alive(p: psutil.Process) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
