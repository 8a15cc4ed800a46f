"""[os] for real (root): one short campaign on a loop ext4 target, four variants (a warm one on
scheduler none, a cold one on mq-deadline with drop_caches, huge_pages = on without a
reservation and [os] huge_pages, its reservation sized by the server's own
shared_memory_size_in_huge_pages) over base sysctls and a read-ahead.
During each run the kernel reads back what was asked; the cold run's first seconds read from
the device where the warm one does not; afterwards every file is byte for byte as before.
Bad input (a scheduler the device lacks) stops before anything runs and changes nothing."""

from __future__ import annotations

import resource
from pathlib import Path

import psutil
import pytest
from helpers.os_helpers import kernel_state
from helpers.storage_helpers import NOTHING, made_under, need_root_and_tools, undo_storage  # noqa: F401

from pglab.campaign import parse as campaign
from pglab.errors import CampaignError
from pglab.lab import Lab
from pglab.pgbench.output import ProgressSample
from pglab.run import campaign_run
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("undo_storage")]

CAMPAIGN = """
name = "os-axis"
order = "sequential"
[targets.disk]
kind = "loop"
fstype = "ext4"
size = "300MB"
[storage]
data = "disk"
[os]
sysctl = { "vm.dirty_background_bytes" = "32MB", "vm.dirty_bytes" = "96MB" }
read_ahead_kb = 64
[server.settings]
max_wal_size = "64MB"  # pg_wal's room on the 300 MB target
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 2
duration = 2
latency_log = "off"
[variants.warm]
os = { io_scheduler = "none", limits = { nofile = 4321, nproc = 5432 } }
[variants.cold]
os = { io_scheduler = "mq-deadline", drop_caches = true }
[variants.unreserved]
settings = { huge_pages = "on" }
[variants.huge]
os = { huge_pages = true }
"""


class PgbenchLimits(QuietEvents):
    """Reads, each second of a phase, the open-file and process limits of this test's pgbench
    ("soft hard" as /proc/PID/limits says them), per variant."""

    def __init__(self) -> None:
        self.variant = ""
        self.seen: dict[str, set[tuple[str, str]]] = {}

    def run_started(self, run, index: int, total: int) -> None:  # type: ignore[no-untyped-def]
        self.variant = run.variant

    def progress(self, sample: ProgressSample) -> None:
        for p in psutil.Process().children(recursive=True):
            try:  # a child may end between being listed and being read
                if p.name() != "pgbench":
                    continue
                lines = Path(f"/proc/{p.pid}/limits").read_text().splitlines()
            except (psutil.NoSuchProcess, FileNotFoundError, ProcessLookupError):
                continue
            said = [" ".join(ln.split()[3:5]) for ln in lines if ln.startswith("Max open files")]
            said += [" ".join(ln.split()[2:4]) for ln in lines if ln.startswith("Max processes")]
            self.seen.setdefault(self.variant, set()).add((said[0], said[1]))


def _reads(run) -> float:
    disk = run.series["0"]["os.disk"]
    col = disk["columns"].index("read_mb_s")
    return sum(row[col] or 0 for row in disk["rows"])


@pytest.mark.alone  # the huge pages it reserves: a server the other worker starts would take them
def test_os_values_read_back_during_runs_and_put_back_after(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    need_root_and_tools("mkfs.ext4")
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN)
    before = kernel_state()
    limits_before = (resource.getrlimit(resource.RLIMIT_NOFILE),
                     resource.getrlimit(resource.RLIMIT_NPROC))  # fmt: skip
    with open_store(str(tmp_path / "r.sqlite")) as store:
        events = PgbenchLimits()
        out = campaign_run.run_campaign(Executor(lab, store, events), campaign.load(path))
        runs = {r.variant: r for r in (store.get_run(i) for i in out.run_ids)}
    assert kernel_state() == before  # every file byte for byte, loop devices' queues too
    assert not list((lab.home / "os").glob("*.json"))  # the journal is gone
    assert made_under(lab.home) == NOTHING
    for variant, scheduler in (("warm", "none"), ("cold", "mq-deadline")):
        run = runs[variant]
        assert run.status == "ok", run.error
        fp = run.fingerprint["os"]
        (dev,) = fp["devices"]
        assert dev.startswith("loop"), fp
        assert fp["read"] == {
            f"/sys/block/{dev}/queue/scheduler": scheduler,
            f"/sys/block/{dev}/queue/read_ahead_kb": "64",
            "/proc/sys/vm/dirty_background_bytes": str(32 * 2**20),
            "/proc/sys/vm/dirty_bytes": str(96 * 2**20),
        }, fp
        assert fp["asked"]["io_scheduler"] == scheduler
        state = run.fingerprint["os_state"]  # what any run records, asked or not
        assert state[f"{dev}.scheduler"] == scheduler and state["vm.dirty_ratio"] == "0"
    # huge_pages = on without a reservation: PostgreSQL's reason in the run's error
    assert runs["unreserved"].status == "failed"
    assert "could not map anonymous shared memory" in runs["unreserved"].error, runs[
        "unreserved"
    ].error
    huge = runs["huge"]  # vm.nr_hugepages sized by the server itself (PostgreSQL 18): it runs
    assert huge.status == "ok", huge.error
    assert huge.spec["server"]["settings"] == [["huge_pages", "on"], ["max_wal_size", "64MB"]]
    estimate = int(huge.fingerprint["os"]["read"]["/proc/sys/vm/nr_hugepages"])  # the plan's
    assert 70 <= estimate <= 128, estimate  # at most 256 MB reserved on a shared machine
    sized = huge.fingerprint["huge_pages"]  # postgres -C shared_memory_size_in_huge_pages
    assert sized["source"] == "shared_memory_size_in_huge_pages", sized
    assert 64 <= sized["pages"] < estimate and sized["reserved"] == sized["pages"], sized
    assert runs["warm"].fingerprint["server_limits"] == {  # root: hard limits, the server's too
        "nofile": "4321 4321", "nproc": "5432 5432"}  # fmt: skip
    assert events.seen["warm"] == {("4321 4321", "5432 5432")}, events.seen  # pgbench's too
    assert ("4321 4321", "5432 5432") not in events.seen["cold"], events.seen
    assert "server_limits" not in runs["cold"].fingerprint
    assert (resource.getrlimit(resource.RLIMIT_NOFILE),  # pglab's own put back, hard ones too
            resource.getrlimit(resource.RLIMIT_NPROC)) == limits_before  # fmt: skip
    assert "dropped_caches" in runs["cold"].fingerprint
    assert "dropped_caches" not in runs["warm"].fingerprint
    assert _reads(runs["cold"]) > 0 and _reads(runs["cold"]) > _reads(runs["warm"]), (
        _reads(runs["cold"]), _reads(runs["warm"]))  # fmt: skip


def test_a_scheduler_the_device_lacks_stops_before_anything(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    need_root_and_tools("mkfs.ext4")
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN.replace('"mq-deadline"', '"cfq"'))
    before = kernel_state()
    with open_store(str(tmp_path / "r.sqlite")) as store:
        with pytest.raises(CampaignError) as err:
            campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        assert store.list_runs("os-axis") == []
    assert "io_scheduler = 'cfq': loop" in err.value.message, err.value.message
    assert "offers none, mq-deadline" in err.value.message
    assert "nothing was changed" in (err.value.hint or "")
    assert kernel_state() == before
    assert made_under(lab.home) == NOTHING
