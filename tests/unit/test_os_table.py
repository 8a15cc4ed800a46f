"""[os] in campaign files: base, per variant and [matrix.os] axes into each point's OsSpec;
every problem in one message before anything runs; the point's identity holds what it asks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pglab.campaign.os_checks import cpu_list
from pglab.campaign.os_spec import OsSpec, huge_pages_for
from pglab.campaign.parse import parse
from pglab.errors import CampaignError
from pglab.planning import devices
from pglab.planning.plan import make_plan
from pglab.run import os_state

ROOT = os.geteuid() == 0


def _problems(doc: dict) -> str:
    with pytest.raises(CampaignError) as err:
        parse(doc, "c")
    return err.value.message


@pytest.mark.skipif(not ROOT, reason="[os] needs root; the refusal is tested below")
def test_base_variant_and_matrix_axes_make_each_points_os() -> None:
    doc = {
        "os": {"sysctl": {"vm.dirty_background_bytes": "64MB"}, "read_ahead_kb": 128},
        "variants": {"a": {}, "b": {"os": {"transparent_hugepages": "never",
                                           "drop_caches": True}}},
        "matrix": {"os": {"io_scheduler": ["none", "mq-deadline"],
                          "sysctl": {"vm.dirty_bytes": ["128MB"]}}},
    }  # fmt: skip
    points = make_plan(parse(doc, "c")).points
    assert [p.label for p in points][:2] == [
        "a os.io_scheduler=none os.sysctl.vm.dirty_bytes=128MB",
        "a os.io_scheduler=mq-deadline os.sysctl.vm.dirty_bytes=128MB",
    ]
    b = points[3].os
    assert b == OsSpec(
        sysctl=(("vm.dirty_background_bytes", str(64 * 2**20)),
                ("vm.dirty_bytes", str(128 * 2**20))),
        io_scheduler="mq-deadline", read_ahead_kb=128, transparent_hugepages="never",
        drop_caches=True,
    )  # fmt: skip
    assert b.queue() == {"scheduler": "mq-deadline", "read_ahead_kb": "128"}
    assert points[3].point_dict()["os"]["transparent_hugepages"] == "never"
    assert len({p.point_key for p in points}) == 4


def test_a_point_without_os_keeps_its_key() -> None:
    (pt,) = make_plan(parse({}, "c")).points
    assert "os" not in pt.point_dict()


@pytest.mark.skipif(not ROOT, reason="the checks past the root check")
def test_every_problem_in_one_message() -> None:
    text = _problems({
        "os": {"sysctl": {"vm.swapiness": 10, "vm.dirty_bytes": "lots"},
               "transparent_hugepages": "sometimes", "read_ahead_kb": -1, "io_schedular": "x"},
        "matrix": {"os": {"nr_requests": [0]}},
        "variants": {"a": {"os": {"limits": {"nofile": 0, "nfiles": 2}}}},
    })  # fmt: skip
    assert (
        'sysctl "vm.swapiness" does not exist in /proc/sys — did you mean "vm.swappiness"?' in text
    )
    assert "vm.dirty_bytes = 'lots': not a value the kernel takes" in text
    assert 'transparent_hugepages = "sometimes": use one of always, madvise, never' in text
    assert "read_ahead_kb = -1: expected a whole number from 0" in text
    assert 'unknown key "io_schedular" — did you mean "io_scheduler"?' in text
    assert "[matrix.os] nr_requests: nr_requests = 0: expected a whole number from 1" in text
    assert "[variants.a] os: limits nofile = 0: expected a whole number from 1 to" in text
    assert 'limits: unknown key "nfiles" — did you mean "nofile"?' in text


@pytest.mark.skipif(not ROOT, reason="root is what lets it past the root check")
def test_a_server_elsewhere_is_refused() -> None:
    text = _problems(
        {"server": {"dsn": "postgresql://u@db.example/x"}, "os": {"drop_caches": True}}
    )
    assert "runs elsewhere: an existing server's (dsn) machine is not pglab's" in text, text
    hosts = {"db1": {"ssh": "lab@db1.example", "sudo": True}}
    thp = {"transparent_hugepages": "never", "drop_caches": True}
    text = _problems({"hosts": hosts, "server": {"host": "db1"}, "os": thp})
    assert ('[os] sets transparent_hugepages only under a server on this machine; on host "db1" '
            "pglab applies sysctl, limits and drop_caches (through sudo) and cpus"
            ) in " ".join(text.split()), text  # fmt: skip
    hosts["db1"]["sudo"] = False  # a cold run there: as root too
    text = _problems({"hosts": hosts, "server": {"host": "db1"}, "os": {"drop_caches": True}})
    assert "give sudo = true there" in " ".join(text.split()), text


def _on_hosts(sudo: dict[str, bool], os_table: dict, generators: tuple[str, ...] = ()) -> dict:
    """A campaign with its server on host db1 (and pgbench on ``generators``)."""
    hosts = {n: {"ssh": f"lab@{n}.example", "sudo": s} for n, s in sudo.items()}
    work = {"generators": list(generators), "clients": 2} if generators else {}
    return {"hosts": hosts, "server": {"host": "db1"}, "workload": work, "os": os_table}


@pytest.mark.skipif(not ROOT, reason="root is what lets it past the root check")
def test_os_on_hosts_takes_sysctl_and_limits_where_sudo_is_allowed() -> None:
    sysctl = {"sysctl": {"net.core.somaxconn": 1024}, "limits": {"nofile": 1000}}
    c = parse(_on_hosts({"db1": True, "gen1": True}, sysctl, ("gen1",)), "c")
    (pt,) = make_plan(c).points
    assert pt.os.sysctl == (("net.core.somaxconn", "1024"),)
    assert [h.sudo for h in c.hosts] == [True, True]
    # limits alone need no sudo (pgbench's, as before)
    parse(_on_hosts({"db1": False, "gen1": False}, {"limits": {"nofile": 1000}}, ("gen1",)), "c")


@pytest.mark.skipif(not ROOT, reason="root is what lets it past the root check")
def test_os_on_a_host_without_sudo_is_refused_naming_it() -> None:
    sysctl = {"sysctl": {"net.core.somaxconn": 1024}}
    text = " ".join(_problems(_on_hosts({"db1": False}, sysctl)).split())
    assert ('[os] sets the kernel of host "db1" (the server\'s host) through sudo, which '
            "[hosts.db1] does not allow: give sudo = true there") in text, text  # fmt: skip
    # a generator host of the same runs needs it too
    text = " ".join(_problems(_on_hosts({"db1": True, "gen1": False}, sysctl, ("gen1",))).split())
    assert '[os] sets the kernel of host "gen1" (a load generator) through sudo' in text, text
    assert '"db1"' not in text
    # as an axis too
    doc = _on_hosts({"db1": False}, {})
    doc["matrix"] = {"os": {"sysctl": {"net.core.somaxconn": [1024, 2048]}}}
    assert "give sudo = true there" in " ".join(_problems(doc).split())


def test_not_root_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pglab.campaign.os_checks.os.geteuid", lambda: 1000)
    text = _problems({"os": {"drop_caches": True}})
    assert text.endswith("[os]: writing kernel settings needs root: run pglab as root, or leave "
                         "[os] out")  # fmt: skip
    # a host's kernel is written there through sudo: pglab itself need not be root
    parse(_on_hosts({"db1": True}, {"sysctl": {"net.core.somaxconn": 1024},
                                    "drop_caches": True}), "c")  # fmt: skip


def test_device_of_a_tmpfs_is_none(tmp_path: Path) -> None:
    assert devices.device_of(Path("/dev/shm")) is None


def test_readings_of_bracketed_lines(tmp_path: Path) -> None:
    sched = tmp_path / "scheduler"
    sched.write_text("none [mq-deadline] kyber bfq\n")
    other = tmp_path / "read_ahead_kb"
    other.write_text("128\n")
    assert os_state.reading(sched) == "mq-deadline"
    assert os_state.reading(other) == "128"


def test_the_plan_shows_what_a_point_asks_but_its_axes() -> None:
    spec = OsSpec(sysctl=(("vm.dirty_bytes", "1"), ("vm.swappiness", "5")),
                  io_scheduler="none", read_ahead_kb=64, drop_caches=True)  # fmt: skip
    assert spec.label() == (
        "vm.dirty_bytes=1, vm.swappiness=5, io_scheduler=none, read_ahead_kb=64, drop_caches"
    )
    assert spec.label(["os.io_scheduler", "os.sysctl.vm.dirty_bytes", "clients"]) == (
        "vm.swappiness=5, read_ahead_kb=64, drop_caches"
    )
    assert OsSpec().label() == ""


@pytest.mark.skipif(not ROOT, reason="[os] needs root")
def test_huge_pages_reserve_for_shared_buffers_and_turn_them_on() -> None:
    doc = {"os": {"huge_pages": True}, "server": {"settings": {"shared_buffers": "256MB"}}}
    (pt,) = make_plan(parse(doc, "c")).points
    assert dict(pt.server.settings)["huge_pages"] == "on"
    pages = int(dict(pt.os.sysctl)["vm.nr_hugepages"])
    assert pages * 2 * 2**20 >= 256 * 2**20 * 1.1 + 64 * 2**20
    assert huge_pages_for("16384") == huge_pages_for("128MB")  # 8 kB pages


def test_cpus_refused_at_zero_beyond_the_machine_and_on_a_server_elsewhere() -> None:
    usable = len(os.sched_getaffinity(0))
    text = _problems({"os": {"cpus": 0, "client_cpus": usable + 1}})
    assert "[os]: cpus = 0: expected a whole number ≥ 1" in text, text
    many = "CPUs" if usable > 1 else "CPU"
    cpus = cpu_list(os.sched_getaffinity(0))
    assert (
        f"[os]: client_cpus = {usable + 1}: the kernel lets pglab use {usable} {many} here "
        f"({cpus}): ask for 1 to {usable}"
    ) in text, text
    text = _problems({"matrix": {"os": {"cpus": [1, usable + 1]}}})
    assert f"[matrix.os] cpus: cpus = {usable + 1}: the kernel lets pglab use" in text, text
    said = (
        "[os] sets the CPUs and memory of the processes pglab starts on this machine, and this "
        "server runs elsewhere: leave cpus, client_cpus and memory out for it (confine it there "
        "yourself: taskset, a cgroup)"
    )
    text = _problems({"server": {"dsn": "postgresql://u@db.example/x"}, "os": {"cpus": 1}})
    assert text.endswith(f"[os]: {said}"), text
    hosts = {"db1": {"ssh": "lab@db1.example"}}
    doc = {"hosts": hosts, "server": {"host": "db1"}, "matrix": {"os": {"cpus": [1, 2]}}}
    parse(doc, "c")  # a server on a host is confined there (run/os_hosts), with no sudo
    doc["matrix"] = {"os": {"client_cpus": [1]}}
    assert "[os] sets client_cpus only under a server on this machine" in _problems(doc)


def test_cpus_need_no_root_and_label_the_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pglab.campaign.os_checks.os.geteuid", lambda: 1000)
    doc = {"os": {"client_cpus": 1}, "matrix": {"os": {"cpus": [1]}, "clients": [1, 2]}}
    points = make_plan(parse(doc, "c")).points
    assert [p.label for p in points] == ["os.cpus=1 clients=1", "os.cpus=1 clients=2"]
    assert points[0].os == OsSpec(cpus=1, client_cpus=1)
    assert points[0].point_dict()["os"] == {"cpus": 1, "client_cpus": 1}
    assert points[0].os.label(["os.cpus"]) == "client_cpus=1"
    assert not points[0].os.changes_kernel


@pytest.mark.skipif(not ROOT, reason="a memory cgroup is made by root; the refusal is below")
def test_memory_labels_points_and_is_kept_in_their_identity() -> None:
    doc = {"os": {"memory": "512MB"}, "variants": {"a": {}, "b": {"os": {"memory": 2**30}}},
           "matrix": {"os": {"memory": ["64MB", "1GB"]}}}  # fmt: skip
    points = make_plan(parse(doc, "c")).points
    assert [p.label for p in points] == [
        "a os.memory=64MB", "a os.memory=1GB", "b os.memory=64MB", "b os.memory=1GB"]  # fmt: skip
    assert [p.os.memory for p in points] == [64 * 2**20, 2**30] * 2
    assert points[0].os.identity() == {"memory": 64 * 2**20}
    assert not points[0].os.changes_kernel  # its own cgroup: no kernel file written
    assert OsSpec(memory=3 * 2**29).label() == "memory=1.5 GiB"
    assert make_plan(parse({"os": {"memory": "512MB"}}, "c")).points[0].os.label() == (
        "memory=512 MiB"
    )


def test_memory_refused_below_a_server_nowhere_to_put_it_and_on_a_server_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = _problems({"os": {"memory": "lots"}})
    assert "[os]: memory = 'lots': expected a size such as \"300MB\"" in text, text
    text = _problems({"os": {"memory": "16MB"}})
    assert "[os]: memory = 16 MiB is too small for a server: give it 32MB at least" in text, text
    text = _problems({"server": {"dsn": "postgresql://u@db.example/x"}, "os": {"memory": "1GB"}})
    assert "leave cpus, client_cpus and memory out for it" in text, text
    monkeypatch.setattr("pglab.campaign.cgroups.place", lambda: "no memory cgroup here")
    text = _problems({"matrix": {"os": {"memory": ["1GB"]}}})
    assert (
        "[matrix.os] memory: memory: the kernel offers no memory cgroup for the server here: "
        "no memory cgroup here"
    ) in text, text
