"""One description of a run's environment (``analysis.environment``): what it says of a
fingerprint, and that ``show RUN`` and the report's environment table say the same facts."""

from __future__ import annotations

import html
import itertools
import re
import shutil
from pathlib import Path

import pytest

from pglab.analysis.environment import facts
from pglab.cli import main
from pglab.report import model, render
from pglab.store import open_store

STORE = Path(__file__).resolve().parents[1] / "data" / "stores" / "before-shape.sqlite"

FP = {
    "server_version": "18.6", "source": "embedded", "pgbench_version": "18.6", "cpus": 2,
    "ram_bytes": 24 * 2**30, "kernel": "Linux 6.1", "hostname": "lab",
    "pgdata_mount": {"mountpoint": "/", "fstype": "ext4", "device": "/dev/vda",
                     "options": "rw,noatime", "scheduler": "mq-deadline"},
}  # fmt: skip


def test_the_wal_is_said_when_it_lies_on_another_mount() -> None:
    same = {**FP, "pg_wal_mount": {**FP["pgdata_mount"], "options": "rw"}}  # read differently
    assert "pg_wal" not in dict(facts(same))  # one mount point: one file system
    other = {**FP, "pg_wal_mount": {"mountpoint": "/wal", "fstype": "tmpfs", "device": "tmpfs",
                                    "options": "rw", "scheduler": None}}  # fmt: skip
    assert dict(facts(other))["pg_wal"] == "tmpfs on tmpfs (rw), scheduler ?"


def test_the_load_generator_is_named_as_it_is() -> None:
    assert dict(facts(FP))["load generator"] == "pgbench 18.6"
    said = dict(facts({**FP, "pgbench_from": "bindir:/usr/lib/postgresql/18/bin"}))
    assert said["load generator"] == "pgbench 18.6 (from bindir:/usr/lib/postgresql/18/bin)"
    assert dict(facts({**FP, "sysbench_version": "1.0.20"}))["load generator"] == "sysbench 1.0.20"


def test_an_existing_server_says_whose_machine_was_read() -> None:
    fp = {**FP, "server_kind": "existing", "server": "bench@db:5432", "role": "bench",
          "database": "app", "client": "local: round trip 0.05 ms"}  # fmt: skip
    said = dict(facts(fp))
    assert said["server"] == "existing bench@db:5432, role bench, database app; pglab did not "\
        "start it"  # fmt: skip
    assert said["load generator ran"] == "local: round trip 0.05 ms"
    assert "pgbench's machine" in said and "machine" not in said


def test_show_and_the_report_say_the_same_facts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "r.sqlite"
    shutil.copy(STORE, store)
    assert main(["show", "2", "--store", str(store)]) == 0
    shown = capsys.readouterr().out
    after = shown.split("\nenvironment\n", 1)[1].splitlines()
    said = itertools.takewhile(lambda x: re.match(r"  \S[^:]*: ", x) is not None, after)
    lines = [line.strip() for line in said]
    assert lines[0] == "PostgreSQL: 18.6 (embedded)" and lines[-1] == "host: lab", lines
    with open_store(str(store)) as s:
        rep = model.gather(s, "before-shape")
    page = render(rep, [], {})
    cells = re.findall(r"<tr><th>([^<]*)</th><td>([^<]*)</td></tr>", page)
    table = [f"{html.unescape(k)}: {html.unescape(v)}" for k, v in cells]
    # every fact show prints is a row of the report's environment table, in the same words
    assert lines and all(line in table for line in lines), (lines, table)
