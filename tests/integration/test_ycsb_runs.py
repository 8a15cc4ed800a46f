"""``kit = "ycsb"``: YCSB's workloads A (update-heavy, zipfian) and E (short ranges, inserts,
latest) on 20,000 records, on PostgreSQL 18 (embedded) and Debian's 15 and on an existing
server: the operation mix from pgbench's per-script counts, each operation's latency, and the
inserts landing in the table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.campaign_runs import run_alone

from pglab.analysis import scripts
from pglab.cli import main
from pglab.lab import Lab
from pglab.store import open_store
from pglab.workloads.kits.work.kits import script_stem

pytestmark = pytest.mark.integration

PG15 = Path("/usr/lib/postgresql/15/bin")
# one thread, a fixed seed and a count of transactions: the same operations run after run
WORKLOAD = """
[dataset]
scale = 20000
[workload]
kit = "ycsb"
clients = 4
threads = 1
transactions = 1000
random_seed = 11
[variants.a.workload]
mode = "a"
[variants.e.workload]
mode = "e"
distribution = "latest"
"""
MIX = {"a": {"read": 50, "update": 50}, "e": {"scan": 95, "insert": 5}}


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


def check_ycsb_run(run: Any) -> None:
    assert run is not None and run.ok, run and run.error
    (phase,) = run.phases
    assert phase.transactions == 4000 and not phase.failed
    found = {script_stem(s.script): s for s in scripts.phase_scripts(phase)}
    mode = run.variant.split("-")[-1]
    assert set(found) == set(MIX[mode])
    for name, pct in MIX[mode].items():  # within 3 points of the weights (4,000 draws)
        assert abs(100 * (found[name].transactions or 0) / 4000 - pct) <= 3.0, (name, pct)
        assert (found[name].latency_avg_ms or 0) > 0  # each operation's own latency
    argv = phase.argv
    told = [argv[i + 1] for i, a in enumerate(argv) if a == "-D"]
    assert "records=20000" in told and "clients=4" in told
    assert f"distribution={2 if mode == 'e' else 0}" in told


def run_campaign(lab: Lab, tmp_path: Path, head: str) -> list[Any]:
    path = tmp_path / "ycsb.toml"
    path.write_text(head + WORKLOAD)
    store = tmp_path / "r.sqlite"
    assert cli("run", str(path), lab=lab, store=store) == 0
    with open_store(str(store)) as s:
        return [s.get_run(row.id) for row in s.list_runs("ycsb")]


def test_workloads_a_and_e_on_18_and_15(lab: Lab, tmp_path: Path) -> None:
    if not PG15.exists():
        pytest.skip("Debian's postgresql-15 is not installed")
    (tmp_path / "18").mkdir()
    (tmp_path / "15").mkdir()
    runs18 = run_campaign(lab, tmp_path / "18", 'name = "ycsb"\n')
    runs15 = run_campaign(lab, tmp_path / "15", 'name = "ycsb"\n[server]\nsource = "bindir"\n'
                          f'bindir = "{PG15}"\n')  # fmt: skip
    for runs, version in ((runs18, "18"), (runs15, "15")):
        assert sorted(r.variant for r in runs) == ["a", "e"]
        for run in runs:
            check_ycsb_run(run)
            assert run.fingerprint["server_version"].startswith(version)


@pytest.mark.usefixtures("password")
def test_ycsb_on_an_existing_server(outside_server, lab: Lab, tmp_path: Path) -> None:
    head = f'name = "ycsb"\n[server]\ndsn = "{outside_server.dsn()}"\ndatabase = "pglab_ycsb"\n'
    try:
        runs = run_campaign(lab, tmp_path, head)
        assert sorted(r.variant for r in runs) == ["a", "e"]
        for run in runs:
            check_ycsb_run(run)
        e = next(r for r in runs if r.variant == "e")
        inserts = next(s for s in scripts.phase_scripts(e.phases[0])
                       if s.script.endswith("/insert.sql"))  # fmt: skip
        with outside_server.admin("pglab_ycsb") as conn:  # its inserts are in the table
            (n,) = conn.execute("SELECT count(*) FROM usertable WHERE ycsb_key > 20000").fetchone()
        assert n == inserts.transactions and n > 0
    finally:
        outside_server.drop_database("pglab_ycsb")


SHAPED = """name = "ycsb-shape"
[server]
dsn = "{dsn}"
database = "pglab_ycsb_shape"
[dataset]
scale = 2000
fields = 3
field_length = 50
[workload]
kit = "ycsb"
mode = "f"
clients = 2
transactions = 200
"""


@pytest.mark.usefixtures("password")
def test_records_of_3_fields_of_50_characters(outside_server, lab: Lab, tmp_path: Path) -> None:
    """``[dataset] fields`` and ``field_length`` (YCSB's fieldcount, fieldlength): the table has
    those columns, every value (loaded, or written by workload F's read-modify-writes) that
    length, and the scripts update only the fields there are."""
    try:
        run = run_alone(tmp_path / "shape.toml", SHAPED.format(dsn=outside_server.dsn()),
                        "ycsb-shape", lab, tmp_path / "r.sqlite")  # fmt: skip
        assert run.phases[0].transactions == 400
        rmw = next(s for s in scripts.phase_scripts(run.phases[0])
                   if s.script.endswith("/read_modify_write.sql"))  # fmt: skip
        assert rmw.transactions and "field3" not in Path(rmw.script).read_text()
        with outside_server.admin("pglab_ycsb_shape") as conn:
            columns = [r[0] for r in conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = 'usertable'::regclass "
                "AND attnum > 0 AND NOT attisdropped ORDER BY attnum")]  # fmt: skip
            lengths = conn.execute("SELECT DISTINCT length(field0), length(field1), "
                                   "length(field2) FROM usertable").fetchall()  # fmt: skip
        assert columns == ["ycsb_key", "field0", "field1", "field2"]
        assert lengths == [(50, 50, 50)]
    finally:
        outside_server.drop_database("pglab_ycsb_shape")


@pytest.fixture
def password(monkeypatch):
    from helpers.existing_server import BENCH_PASSWORD

    monkeypatch.setenv("PGPASSWORD", BENCH_PASSWORD)
