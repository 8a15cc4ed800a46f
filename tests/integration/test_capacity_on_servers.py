"""What a campaign needs of the servers and the machine, checked before anything starts, on real
servers: 100 clients on a default max_connections run (raised, said, recorded), a
max_connections the campaign sets too low and a dataset too large for its tmpfs are refused
before any server of the campaign starts, and a run that still fails is summed up by the FATAL
line, not pgbench's first line of output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import lab_processes
from helpers.storage_helpers import NOTHING, made_under, need_root_and_tools, undo_storage  # noqa: F401

from pglab.campaign import parse as campaign
from pglab.cli import main
from pglab.lab import Lab
from pglab.planning.plan import make_plan
from pglab.store import open_store

pytestmark = pytest.mark.integration


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


HUNDRED = """
name = "hundred"
[dataset]
scale = 1
[workload]
script = "select-only"
clients = 100
duration = 1
latency_log = "off"
"""


def test_100_clients_on_the_default_max_connections_run_with_it_raised(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    store = tmp_path / "r.sqlite"
    path = write(tmp_path, HUNDRED)
    assert cli("run", str(path), "--dry-run", lab=lab, store=store) == 0
    plan_text = " ".join(capsys.readouterr().out.split())
    assert 'max_connections raised to 107 for point "base": 104 connections at most' in plan_text
    assert "100 clients + 3 telemetry sessions of pglab + 1 pgbench setup session" in plan_text
    assert "default of 100" in plan_text
    assert cli("run", str(path), lab=lab, store=store) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "max_connections raised to 107" in out
    with open_store(str(store)) as s:
        (row,) = s.list_runs("hundred")
        run = s.get_run(row.id)
    assert run.status == "ok" and run.tps > 0, run.error
    assert run.spec["lab_settings"] == {"max_connections": "107"}
    setting = run.fingerprint["settings"]["max_connections"]
    assert setting["setting"] == "107" and setting["source"] == "configuration file"
    # not part of the point's identity: the same point as the file says, raise or not
    (point,) = make_plan(campaign.load(path)).points
    assert run.point_key == point.point_key and point.lab_settings == ()
    assert cli("show", str(row.id), lab=lab, store=store) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "max_connections=107" in shown and "of which pglab chose" in shown


EXACT = """
name = "{name}"
[server.settings]
max_connections = 20
[dataset]
scale = 1
[workload]
script = "select-only"
clients = {clients}
duration = 1
latency_log = "off"
"""


def test_a_max_connections_set_exactly_to_the_need_runs(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    """16 clients + 3 telemetry sessions + pgbench's setup session = 20: it runs, as counted."""
    store = tmp_path / "r.sqlite"
    assert cli("run", str(write(tmp_path, EXACT.format(name="exact", clients=16))),
               lab=lab, store=store) == 0  # fmt: skip
    with open_store(str(store)) as s:
        (row,) = s.list_runs("exact")
    assert row.status == "ok"
    capsys.readouterr()


def test_a_max_connections_set_too_low_is_refused_before_any_server_starts(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    store = tmp_path / "r.sqlite"
    datasets_before = sorted(p.name for p in lab.datasets.iterdir())
    path = write(tmp_path, EXACT.format(name="too-low", clients=100).replace("= 20", "= 50"))
    for dry in ((), ("--dry-run",)):
        assert cli("run", str(path), *dry, lab=lab, store=store) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert "the servers would refuse connections" in err
        assert (
            "point \"base\", phase 'main': 100 clients + 3 telemetry sessions of pglab + 1 "
            "pgbench setup session = 104 connections, but max_connections = 50: set "
            "max_connections = 104 or more in [server.settings]"
        ) in err, err
        assert lab_processes(lab.home) == []
    assert sorted(p.name for p in lab.datasets.iterdir()) == datasets_before
    with open_store(str(store)) as s:
        assert s.list_runs("too-low") == []


TOO_SMALL = """
name = "too-small"
[targets.small]
kind = "tmpfs"
size = "64MB"
[storage]
data = "small"
[dataset]
scale = 5
fillfactor = 97
[workload]
clients = 1
duration = 1
"""


@pytest.mark.usefixtures("undo_storage")
def test_a_dataset_too_large_for_its_tmpfs_is_refused_before_init(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    need_root_and_tools()
    store = tmp_path / "r.sqlite"
    datasets_before = sorted(p.name for p in lab.datasets.iterdir())
    assert cli("run", str(write(tmp_path, TOO_SMALL)), lab=lab, store=store) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "not enough disk space for the datasets" in err, err
    assert 'storage target "small" (tmpfs, size 64 MiB): about 1.1 GiB needed' in err, err
    assert "a copy of the dataset scale 5 (estimated): 184.3 MiB" in err, err
    assert "for pg_wal to grow to max_wal_size (1 GiB)), but 64 MiB usable" in err, err
    assert "give the storage target a larger size" in err
    assert sorted(p.name for p in lab.datasets.iterdir()) == datasets_before  # no pgbench -i
    assert made_under(lab.home) == NOTHING  # nothing mounted either
    assert lab_processes(lab.home) == []


KILLED = """
name = "killed"
[dataset]
scale = 1
[workload]
script = "{script}"
clients = 1
duration = 2
latency_log = "off"
"""


def test_a_run_that_still_fails_is_summed_up_by_the_fatal_line(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    """Each transaction ends its own session: PostgreSQL says FATAL, pgbench gives up after
    'starting vacuum...end.', and every summary says the FATAL."""
    script = tmp_path / "suicide.sql"
    script.write_text("SELECT pg_terminate_backend(pg_backend_pid());\n")
    store = tmp_path / "r.sqlite"
    path = write(tmp_path, KILLED.format(script=script))
    assert cli("run", str(path), lab=lab, store=store) == 1
    fatal = "FATAL: terminating connection due to administrator command"
    out = " ".join(capsys.readouterr().out.split())
    assert f"✗ base #1: {fatal}" in out, out  # the progress line
    assert "! failed: base: run " in out and f"failed: {fatal}" in out  # the warnings
    with open_store(str(store)) as s:
        (row,) = s.list_runs("killed")
        error = s.get_run(row.id).error
    assert error.splitlines()[0] == "pgbench failed in phase 'main': starting vacuum...end."
    assert cli("ls", "--campaign", "killed", "--json", lab=lab, store=store) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["reason"] == fatal
    assert cli("show", str(row.id), lab=lab, store=store) == 0
    shown = capsys.readouterr().out
    assert shown.splitlines()[0].endswith(f"— failed: {fatal}")
    assert "starting vacuum...end." in shown  # the whole text is still there
