"""``[server] host`` in campaign files: a host of the file, not with a dsn nor storage targets,
reset by pgbench -i only; what is stored of it; the watcher's stop signal."""

from __future__ import annotations

import shlex

import pytest

from pglab.campaign import parse
from pglab.errors import CampaignError
from pglab.hosts.ssh import Remote, watcher

HOSTS = {"db1": {"ssh": "bench@10.0.0.5"}, "gen1": {"ssh": "root@10.0.0.6"}}


def test_a_server_on_a_host_is_parsed_and_stored_with_its_host() -> None:
    camp = parse.parse(
        {"hosts": HOSTS, "server": {"host": "db1"}, "workload": {"generators": ["gen1"]}}, "t"
    )
    (variant,) = camp.variants
    assert variant.server.host == "db1" and variant.server.over_network
    assert variant.server.server_label == "host:db1:embedded"
    assert variant.dataset.reset == "never"  # no files here to copy
    ident = variant.server.identity()
    assert ident["host"] == "db1" and ident["database"] == "pglab_bench" and "dsn" not in ident
    # a server on this machine keeps the keys it always had (its points' keys do not change)
    assert set(parse.parse({}, "t").variants[0].server.identity()) == {
        "source", "bindir", "settings"
    }  # fmt: skip


def test_a_variant_may_put_its_server_on_this_machine_or_a_host() -> None:
    camp = parse.parse(
        {
            "hosts": HOSTS,
            "server": {"host": "db1"},
            "variants": {"there": {}, "here": {"server": {"host": "local"}}},
        },
        "t",
    )
    hosts = {v.name: v.server.host for v in camp.variants}
    assert hosts == {"there": "db1", "here": None}


@pytest.mark.parametrize(
    ("doc", "said"),
    [
        ({"server": {"host": "db2"}}, 'host = "db2" is not a [hosts.NAME] of the file (hosts: '),
        ({"server": {"host": "db1", "dsn": "host=x"}}, "host and dsn together"),
        ({"server": {"host": 5}}, "host = 5: expected the name of a [hosts.NAME] table"),
        (
            {"server": {"dsn": "host=db1"}, "dataset": {"reset": "run"}},
            'for an existing server (dsn) use "reinit"',
        ),
        (
            {
                "server": {"host": "db1"},
                "storage": {"data": "fast"},
                "targets": {"fast": {"kind": "tmpfs", "size": "1GB"}},
            },
            'storage target "fast" is a tmpfs: on host "db1" pglab mounts nothing',
        ),  # fmt: skip
        ({"server": {"host": "db1", "manage": "reload"}}, "manage is for an existing server"),
    ],
)
def test_bad_server_hosts_are_named(doc: dict, said: str) -> None:
    with pytest.raises(CampaignError) as err:
        parse.parse({"hosts": HOSTS, **doc}, "t")
    assert said in err.value.message, err.value.message


@pytest.mark.parametrize("reset", ["reinit", "run", "point"])
def test_reinit_and_copy_resets_are_allowed_on_a_host(reset: str) -> None:
    camp = parse.parse({"hosts": HOSTS, "server": {"host": "db1"}, "dataset": {"reset": reset}},
                       "t")  # fmt: skip
    assert camp.variants[0].dataset.reset == reset


def test_a_path_target_is_a_directory_on_the_server_s_host() -> None:
    doc = {"server": {"host": "db1"}, "storage": {"data": "fast"},
           "targets": {"fast": {"path": "/srv/fast"}}}  # fmt: skip
    camp = parse.parse({"hosts": HOSTS, **doc}, "t")
    assert camp.variants[0].storage.data is not None
    assert camp.variants[0].storage.data.path == "/srv/fast"


def test_a_server_on_a_host_is_never_reset_unless_the_file_says() -> None:
    camp = parse.parse({"hosts": HOSTS, "server": {"host": "db1"}}, "t")
    assert camp.variants[0].dataset.reset == "never"


def test_a_server_s_watcher_stops_it_with_the_signal_asked_for() -> None:
    words = shlex.split(Remote.command(["postgres", "-D", "d"], stop_signal="INT"))
    assert words[2] == watcher("INT") and "kill -INT $c" in words[2]
    assert "kill -TERM $c" in watcher()


def test_this_machine_s_facts_have_every_key_a_host_s_facts_have() -> None:
    """``LocalHost.facts`` and ``Remote.facts`` give one shape (``HostFacts``), what a run's
    fingerprint keeps of its generator hosts."""
    import sys

    from pglab.hosts.facts import HostFacts
    from pglab.hosts.local import LocalHost

    facts = LocalHost().facts(sys.executable)  # "Python 3.x": not pgbench
    assert list(facts) == list(HostFacts.__annotations__)
    assert facts["host"] == "local" and facts["cpus"] and facts["ram_bytes"]
    assert facts["pgbench"] is not None and facts["pgbench"].startswith("Python")
