"""[os] memory for real (root, this machine's memory cgroup): a campaign on a loop ext4 target
whose data set (scale 3, ~52 MiB) fits in the default shared_buffers, run free and with the
server limited to 32 MiB (shared_buffers 8 MiB). While the limited run's phase goes, the
postmaster and every backend are in the run's group; its fingerprint says the limit the kernel
reads back and what the group used; its cache regime is *larger than its memory limit*, so the
*in-memory* warning the free run gets is off, and the OS telemetry shows its reads reaching the
loop device where the free run reads nothing. After the campaign the group and its journal are
gone and pglab's own groups are as before."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers.storage_helpers import NOTHING, made_under, need_root_and_tools, undo_storage  # noqa: F401

from pglab.analysis import run_facts, run_warnings
from pglab.campaign import cgroups
from pglab.campaign import parse as campaign
from pglab.lab import Lab
from pglab.pgbench.output import ProgressSample
from pglab.run import campaign_run
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("undo_storage")]

CAMPAIGN = """
name = "memory-axis"
order = "sequential"
[targets.disk]
kind = "loop"
fstype = "ext4"
size = "300MB"
[storage]
data = "disk"
[server.settings]
max_wal_size = "64MB"
[dataset]
scale = 3
[workload]
script = "select-only"
clients = 2
duration = 3
latency_log = "off"
[variants.free]
[variants.limited]
settings = { shared_buffers = "8MB" }
os = { memory = "32MB" }
"""


class Groups(QuietEvents):
    """Reads, each second of a phase, the memory cgroup of every process of the server."""

    def __init__(self) -> None:
        self.executor: Executor | None = None
        self.variant = ""
        self.seen: dict[str, set[str]] = {}

    def run_started(self, run, index: int, total: int) -> None:  # type: ignore[no-untyped-def]
        self.variant = run.variant

    def progress(self, sample: ProgressSample) -> None:
        assert self.executor is not None and self.executor.cluster is not None
        proc = self.executor.cluster.proc
        assert proc is not None
        postmaster = psutil.Process(proc.pid)
        for p in [postmaster, *postmaster.children(recursive=True)]:
            try:
                text = Path(f"/proc/{p.pid}/cgroup").read_text()
            except OSError:
                continue  # a backend that ended since
            group = next(ln.split(":", 2)[2] for ln in text.splitlines()
                         if ":memory:" in ln or ln.startswith("0::"))  # fmt: skip
            if group == "/":  # cgroup v1 moves an exiting task to the root group: CI saw a
                time.sleep(0.2)  # backend so once, between its read and its end
            if _exiting(p):
                continue
            self.seen.setdefault(self.variant, set()).add(group)


def _exiting(p: psutil.Process) -> bool:
    try:
        return p.status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.NoSuchProcess:
        return True


def _reads_mb(run) -> float:  # type: ignore[no-untyped-def]
    disk = run.series["0"]["os.disk"]
    col = disk["columns"].index("read_mb_s")
    return float(sum(row[col] or 0 for row in disk["rows"]))


def test_a_limit_below_the_data_set_reaches_storage_and_leaves_no_group(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    need_root_and_tools("mkfs.ext4")
    place = cgroups.place()
    assert isinstance(place, cgroups.Place), f"no memory cgroup can be made here: {place}"
    own = Path("/proc/self/cgroup").read_text()
    out, runs, events = _run(lab, tmp_path, CAMPAIGN)
    assert out.ok == 2, [r.error for r in runs.values()]
    free, limited = runs["free"], runs["limited"]
    mem = limited.fingerprint["memory_limit"]
    group = Path(mem["cgroup"])
    assert group.parent == place.parent and group.name.startswith("pglab-"), mem
    assert mem["bytes"] == mem["read"] == 32 * 2**20, mem
    assert mem["cgroup_version"] == place.version
    assert mem["server_processes"] >= 4, mem  # postmaster, checkpointer, walwriter, ...
    assert mem["evicted_files"] > 100, mem  # the data directory's files, dropped
    # at the limit, give or take the pages the kernel charges before it reclaims (cgroup v1's
    # max_usage_in_bytes was seen one 4 KiB page over 32 MiB)
    assert 8 * 2**20 < mem["peak_bytes"] <= 32 * 2**20 + 16 * 4096, mem
    assert "memory_limit" not in free.fingerprint
    # while the phase went: every process of the server in the run's group, none when free
    assert {g.rsplit("/", 1)[-1] for g in events.seen["limited"]} == {group.name}, events.seen
    assert group.name not in "".join(events.seen["free"]), events.seen
    # the cache regime reads the limit: the in-memory warning is the free run's alone
    assert run_facts.cache_regime(free).regime == "in shared_buffers"
    assert "in-memory" in [n.kind for n in run_warnings.run_notices(free)]
    regime = run_facts.cache_regime(limited)
    assert regime.regime == "larger than its memory limit", regime
    assert "in-memory" not in [n.kind for n in run_warnings.run_notices(limited)]
    # the limited run's reads reach the loop device; the free run's stay in memory
    assert _reads_mb(limited) > 20 and _reads_mb(limited) > 10 * _reads_mb(free), (
        _reads_mb(limited), _reads_mb(free))  # fmt: skip
    # afterwards: the group and its journal gone, pglab's own groups as they were
    assert not group.exists()
    assert not list((lab.home / "cgroups").glob("*.json"))
    assert Path("/proc/self/cgroup").read_text() == own
    assert made_under(lab.home) == NOTHING


KEPT = """
name = "memory-kept"
order = "sequential"
[server.settings]
shared_buffers = "16MB"
[dataset]
scale = 1
reset = "never"
[workload]
script = "select-only"
clients = 1
duration = 1
latency_log = "off"
[variants.a]
os = { memory = "96MB" }
[variants.b]
[variants.c]
os = { memory = "128MB" }
"""


def test_a_server_kept_between_points_moves_in_and_out_of_each_runs_group(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    """One server for the three points (the same settings, reset = "never"): in a group of
    96 MiB for a's run, in pglab's own group for b's, in a new one of 128 MiB for c's."""
    out, runs, events = _run(lab, tmp_path, KEPT)
    assert out.ok == 3, [r.error for r in runs.values()]
    assert [runs[v].timings["restarted"] for v in "abc"] == [1.0, 0.0, 0.0]  # one server
    a, c = runs["a"].fingerprint["memory_limit"], runs["c"].fingerprint["memory_limit"]
    assert (a["read"], c["read"]) == (96 * 2**20, 128 * 2**20)
    assert a["cgroup"] == c["cgroup"]  # the same name, made again: the first was removed
    name = Path(a["cgroup"]).name
    assert {g.rsplit("/", 1)[-1] for g in events.seen["a"]} == {name}, events.seen
    assert {g.rsplit("/", 1)[-1] for g in events.seen["c"]} == {name}, events.seen
    assert name not in "".join(events.seen["b"]), events.seen  # given back to pglab's group
    assert "memory_limit" not in runs["b"].fingerprint
    assert not Path(a["cgroup"]).exists()


def _run(lab: Lab, tmp_path: Path, text: str) -> tuple[Any, dict[str, Any], Groups]:
    """The campaign ``text`` run, its server processes' groups read by ``Groups`` as it goes:
    (the outcome, the runs by variant, what the events saw)."""
    path = tmp_path / "c.toml"
    path.write_text(text)
    events = Groups()
    with open_store(str(tmp_path / "r.sqlite")) as store:
        executor = Executor(lab, store, events)
        events.executor = executor
        out = campaign_run.run_campaign(executor, campaign.load(path))
        runs = {r.variant: r for r in (store.get_run(i) for i in out.run_ids)}
    return out, runs, events
