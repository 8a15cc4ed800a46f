"""The comparability guard (analysis/comparable.py) on made-up stored runs: what differs between
a compared point and its baseline that the campaign did not vary is said by name; what it varied
(the storage) is not; a server built with assertions is flagged in every run."""

from __future__ import annotations

from typing import Any

from pglab.analysis.run_warnings import notices_of
from pglab.rows import StoredRun

BASE_FP: dict[str, Any] = {
    "kernel": "Linux 6.1.0",
    "pgbench_version": "18.1",
    "governor": "performance",
    "thp": "always [madvise] never",
    "server_build": {
        "data_checksums": "on",
        "block_size": "8192",
        "wal_segment_size": "16777216",
        "assertions": "off",
    },  # fmt: skip
    "pgdata_mount": {"fstype": "ext4", "mount_options": "rw,relatime"},
}


def run(i: int, variant: str, tps: float, fp: dict[str, Any] | None = None,
        storage: Any = None) -> StoredRun:  # fmt: skip
    return StoredRun(
        id=i, campaign="c", run_key=f"{variant}/{i}", point_key=variant, variant=variant,
        label=variant, repeat=i, status="ok", tps=tps, started_at=float(i),
        finished_at=float(i) + 1, error=None, metrics={"tps": tps},
        spec={"storage": storage, "server": {"settings": []}},
        fingerprint={**BASE_FP, **(fp or {})},
    )  # fmt: skip


def campaign(b_fp: dict[str, Any] | None = None, b_storage: Any = None) -> list[StoredRun]:
    runs = []
    for i in range(4):  # interleaved rounds, a then b
        runs.append(run(2 * i + 1, "a", 1000.0 + i))
        runs.append(run(2 * i + 2, "b", 1010.0 + i, b_fp, b_storage))
    return runs


def differs(runs: list[StoredRun]) -> list[str]:
    return [n.message for n in notices_of(runs, baseline="a") if n.kind == "differs"]


def test_a_difference_the_campaign_did_not_vary_is_named() -> None:
    built = {**BASE_FP["server_build"], "data_checksums": "off"}
    (said,) = differs(campaign({"server_build": built, "kernel": "Linux 6.12.0"}))
    assert said.startswith("compared with a, it also differs in what the campaign did not vary")
    assert "kernel Linux 6.12.0 here, Linux 6.1.0 in a" in said
    assert "data_checksums off here, on in a" in said
    assert "block_size" not in said and "pgbench" not in said


def test_nothing_is_said_when_only_what_was_varied_differs() -> None:
    assert differs(campaign()) == []
    # the storage was varied: its filesystem differing is what was asked for
    xfs = {"pgdata_mount": {"fstype": "xfs", "mount_options": "rw,noatime"}}
    assert differs(campaign(xfs, b_storage={"data": {"kind": "loop", "fs": "xfs"}})) == []
    # the same filesystem change with the same storage spec is not
    (said,) = differs(campaign(xfs))
    assert "PGDATA's filesystem xfs (rw,noatime) here, ext4 (rw,relatime) in a" in said


def test_runs_stored_before_a_fact_was_recorded_are_not_compared_on_it() -> None:
    old = {"server_build": None, "governor": None}
    assert differs(campaign(old)) == []


def test_a_server_built_with_assertions_is_flagged_in_every_run() -> None:
    built = {**BASE_FP["server_build"], "assertions": "on"}
    notices = notices_of(campaign({"server_build": built}), baseline="a", verbose=True)
    (flag,) = [n for n in notices if n.kind == "assertions"]
    assert (
        flag.point == "b" and "--enable-cassert" in flag.message and "(4 of 4 runs)" in flag.message
    )
    (said,) = [n.message for n in notices if n.kind == "differs"]
    assert "assertions on here, off in a" in said


def test_pglab_compare_lists_the_server_build_among_the_differences() -> None:
    from pglab.analysis.compare import settings_diff

    built = {**BASE_FP["server_build"], "data_checksums": "off"}
    rows = settings_diff([run(1, "a", 1000.0)], [run(2, "b", 990.0, {"server_build": built})])
    assert {"name": "data_checksums", "a": "on", "b": "off"} in rows
    assert not [r for r in rows if r["name"] == "block_size"]


def test_an_os_difference_not_asked_for_is_named_and_one_asked_for_is_not() -> None:
    """[os] (issue 39): every run records the scheduler and sysctls under it (os_state); one
    changed under the campaign is said, one a point asked for in [os] is not."""
    state = {"loop3.scheduler": "none", "loop3.read_ahead_kb": "128", "vm.swappiness": "60"}
    moved = {"loop5.scheduler": "mq-deadline", "loop5.read_ahead_kb": "128",
             "vm.swappiness": "10"}  # fmt: skip
    runs = campaign({"os_state": moved})
    for r in runs:
        if r.variant == "a":
            r.fingerprint["os_state"] = state
    (said,) = differs(runs)
    assert "I/O scheduler mq-deadline here, none in a" in said
    assert "kernel settings vm.swappiness=10 here, vm.swappiness=60 in a" in said
    assert "read-ahead" not in said  # the device's name is no part of it
    for r in runs:
        if r.variant == "b":
            r.spec["os"] = {"io_scheduler": "mq-deadline", "sysctl": {"vm.swappiness": "10"}}
    assert differs(runs) == []
