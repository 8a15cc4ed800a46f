"""Maintenance operations as phases (VACUUM, ANALYZE, CREATE INDEX, VACUUM FULL, CLUSTER,
REINDEX, pg_dump, pg_restore, pg_basebackup) on the embedded PostgreSQL 18: each stores its
elapsed time, bytes, MB/s, WAL and a progress series, through `pglab run` and the SQLite
store."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.existing_server import BENCH_PASSWORD
from helpers.storage_helpers import need_root_and_tools

from pglab.campaign import parse as campaign
from pglab.cli import main
from pglab.lab import Lab
from pglab.postgres import dataset
from pglab.run import campaign_run
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store
from pglab.telemetry.pg_stats import io_phase_delta
from pglab.telemetry.summary import tables_of
from pglab.workloads.maintenance import clients
from pglab.workloads.maintenance.figures import OPERATION_KIND, OperationFigures

pytestmark = pytest.mark.integration
PG15 = Path("/usr/lib/postgresql/15/bin")  # Debian's postgresql-15 (in .ci/run's packages)

# scale 10: pgbench_accounts' heap is ~130 MB, each operation takes about a second here
CAMPAIGN = """
name = "maint"
{server}
[dataset]
scale = 10
[[phases]]
name = "vacuum"
operation = "vacuum"
dirty = 0.1
[[phases]]
name = "analyze"
operation = "analyze"
[[phases]]
name = "index"
operation = "create_index"
[matrix]
parallel = {parallel}
"""


def server_table(version: str, request) -> str:
    """The [server] table of a campaign on 18 (embedded), 16 (the pgserver wheel) or 15."""
    if version == "16":
        return f'[server]\nbindir = "{request.getfixturevalue("pg16_bindir")}"'
    if version == "15":
        if not (PG15 / "pgbench").exists():
            pytest.skip("no PostgreSQL 15 installed (apt-get install postgresql-15)")
        return f'[server]\nbindir = "{PG15}"'
    return ""


@pytest.mark.parametrize("version", ["18", "16", "15"])
def test_every_operation_stores_its_figures_and_progress(
    version: str, tmp_path: Path, lab: Lab, no_leftovers, capsys, request
) -> None:
    # 18 (embedded) with 0 and 1 workers; 16 (the pgserver wheel) and Debian's 15 with 1
    server = server_table(version, request)
    parallels = [0, 1] if version == "18" else [1]
    path = tmp_path / "m.toml"
    path.write_text(CAMPAIGN.format(server=server, parallel=parallels))
    store_path = tmp_path / "r.sqlite"
    args = ["--lab-dir", str(lab.home), "--store", str(store_path)]
    assert main(["run", str(path), *args]) == 0
    with open_store(str(store_path)) as store:
        runs = store.list_runs("maint")
        assert len(runs) == len(parallels) and all(r.status == "ok" for r in runs)
        for r in runs:
            run = store.get_run(r.id)
            parallel = r.axes["parallel"]
            assert run.fingerprint["server_version"].startswith(version)
            for ph in run.phases:
                tables = run.series[str(ph.idx)]
                figs = OperationFigures.from_table(tables[OPERATION_KIND])
                assert figs.operation == {"vacuum": "vacuum", "analyze": "analyze",
                                          "index": "create_index"}[ph.name]  # fmt: skip
                # the heap of 1,000,000 accounts (and 10% more tuples after the dirtying)
                assert 120e6 < figs.bytes < 160e6
                assert figs.elapsed_s == pytest.approx(ph.elapsed_s)
                # MB/s is the relation's size over the elapsed time, and the phase's figure
                assert figs.mb_s == pytest.approx(figs.bytes / 1e6 / figs.elapsed_s, rel=0.1)
                # stored as MB/s, not as a TPS (issue 52)
                assert ph.figure == "MB/s" and ph.tps is None
                assert ph.value == pytest.approx(figs.mb_s)
                assert run.metrics[f"phase.{ph.name}.mb_s"] == pytest.approx(figs.mb_s)
                read_mb_s = run.metrics.get(f"phase.{ph.name}.io_read_mb_s")
                if version == "15":  # no pg_stat_io before 16
                    assert figs.io_read_bytes is None and read_mb_s is None
                else:
                    # what shared_buffers did not hold: some of the heap, not twice it; and
                    # what the phase's telemetry saw of pg_stat_io, its closing snapshot taken
                    # once every session (parallel workers too) had flushed its statistics
                    assert 0 < figs.io_read_bytes < 2 * figs.bytes, ph.name
                    assert read_mb_s == pytest.approx(figs.io_read_bytes / 1e6 / figs.elapsed_s)
                    seen = sum(
                        r["read_bytes"]
                        for r in io_phase_delta(tables_of(tables))
                        if r["backend_type"] in ("client backend", "background worker")
                        and r["object"] == "relation"
                    )
                    if ph.name == "vacuum":  # the telemetry's also has the dirtying's reads,
                        # flushed by the operation's session after its opening snapshot
                        assert figs.io_read_bytes <= seen
                    else:
                        assert figs.io_read_bytes == pytest.approx(seen, rel=0.05), ph.name
                progress = tables[f"progress.{figs.operation}"]
                assert progress["columns"] == [
                    "t", "phase", "done", "total", "pct", "unit", "rate", "eta_s", "eta_by",
                    "eta_all_s",
                ]  # fmt: skip
                if ph.name != "analyze":  # ANALYZE samples: it can end within 50 ms
                    assert progress["rows"], ph.name
                for t, phase, done, total, *_ in progress["rows"]:
                    assert ph.started_at - 1 <= t <= ph.started_at + ph.elapsed_s + 1
                    assert phase and 0 <= done <= max(total, done)
                    if total and phase in ("scanning heap", "building index: scanning table"):
                        assert total * 8192 == figs.bytes  # the server's count of the heap
            index = next(ph for ph in run.phases if ph.name == "index")
            figs = OperationFigures.from_table(run.series[str(index.idx)][OPERATION_KIND])
            assert figs.parallel == parallel
            # 2 cores: a leader and one worker with parallel = 1
            assert figs.workers_launched == parallel
            # the CPU of the operation's backend, and of its worker when it has one
            assert 0 < figs.leader_cpu_s <= figs.elapsed_s + 0.05
            assert (figs.workers_cpu_s > 0) == (parallel == 1)
            assert run.metrics["phase.index.leader_cpu_pct"] == pytest.approx(
                100 * figs.leader_cpu_s / figs.elapsed_s
            )
            vacuum = next(ph for ph in run.phases if ph.name == "vacuum")
            # VERBOSE's report: the dirtying left 10% of the accounts dead (fixed rows, ± hash)
            removed = int(re.search(r"tuples: (\d+) removed", vacuum.output).group(1))
            assert 90_000 < removed < 110_000
            # and its own time: the MB/s agrees with the heap's size over the server's time
            said = float(re.search(r"elapsed: ([0-9.]+) s", vacuum.output).group(1))
            figs = OperationFigures.from_table(run.series[str(vacuum.idx)][OPERATION_KIND])
            assert figs.mb_s == pytest.approx(figs.bytes / 1e6 / said, rel=0.1)
            # the run's headline figure is the MB/s of its measured operations
            mean = sum(ph.value for ph in run.phases) / len(run.phases)
            assert r.tps is None and "tps" not in run.metrics
            assert run.metrics["mb_s"] == pytest.approx(mean)
    capsys.readouterr()
    assert main(["show", "maint", *args]) == 0
    out = capsys.readouterr().out
    assert "median MB/s" in out and "median tps" not in out
    # the tidy export names the operation where a pgbench run has its script
    assert main(["export", "maint", "--format", "csv", *args]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    column = header.split(",").index("script")
    assert [line.split(",")[column] for line in lines] == ["vacuum"] * len(parallels)
    html = tmp_path / "r.html"
    assert main(["report", "maint", "-o", str(html), *args]) == 0
    page = html.read_text()
    assert "<th>MB/s</th>" in page and "<th>TPS</th>" not in page


def test_more_workers_than_the_server_allows_is_refused_before_anything_runs(
    tmp_path: Path, lab: Lab, capsys
) -> None:
    path = tmp_path / "p.toml"
    # the second point of the axis asks for more: each point is checked, not each settings
    path.write_text('[workload]\noperation = "create_index"\n[matrix]\nparallel = [0, 9]\n')
    args = ["--lab-dir", str(lab.home), "--store", str(tmp_path / "r.sqlite")]
    assert main(["run", str(path), "--dry-run", *args]) == 2
    err = capsys.readouterr().err
    assert "parallel = 9 is more than max_worker_processes = 8 allows" in err


def test_a_parallel_brin_build_before_17_is_refused_naming_the_version(
    tmp_path: Path, lab: Lab, capsys, pg16_bindir: Path
) -> None:
    path = tmp_path / "b.toml"
    path.write_text(f'[server]\nbindir = "{pg16_bindir}"\n[workload]\noperation = '
                    '"create_index"\nmethod = "brin"\nparallel = 1\n')  # fmt: skip
    args = ["--lab-dir", str(lab.home), "--store", str(tmp_path / "r.sqlite")]
    assert main(["run", str(path), "--dry-run", *args]) == 2
    err = capsys.readouterr().err
    assert "parallel brin index builds came in PostgreSQL 17; 16." in err
    assert "give parallel = 0, or PostgreSQL 17 or later" in err


EXISTING = """
name = "{name}"
[server]
dsn = "{dsn}"
[server.settings]
maintenance_work_mem = "96MB"  # per session: the operation's session has it
[dataset]
scale = 1
{phases}
"""


def test_operations_on_an_existing_server_leave_its_table_as_it_was(
    outside_server, lab: Lab, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("PGPASSWORD", BENCH_PASSWORD)
    args = ["--lab-dir", str(lab.home), "--store", str(tmp_path / "r.sqlite")]
    phases = (
        '[[phases]]\nname = "index"\noperation = "create_index"\nparallel = 1\n'
        # the client programs over TCP with the role's password (the environment pglab gives)
        '[[phases]]\nname = "dump"\noperation = "dump"\njobs = 2\n'
        '[[phases]]\nname = "restore"\noperation = "restore"\n'
    )
    path = tmp_path / "e.toml"
    path.write_text(EXISTING.format(name="maint-e", dsn=outside_server.dsn(), phases=phases))
    assert main(["run", str(path), *args]) == 0
    # a role without pg_checkpoint cannot dirty for a vacuum: the run fails, saying what to do
    phases = '[workload]\noperation = "vacuum"\ndirty = 0.01\n'
    path.write_text(EXISTING.format(name="maint-v", dsn=outside_server.dsn(), phases=phases))
    assert main(["run", str(path), *args]) == 1
    with open_store(str(tmp_path / "r.sqlite")) as store:
        (ok,) = [store.get_run(r.id) for r in store.list_runs("maint-e")]
        (failed,) = store.list_runs("maint-v")
    figs = OperationFigures.from_table(ok.series["0"][OPERATION_KIND])
    assert figs.maintenance_work_mem_kb == 96 * 1024 and figs.bytes > 10e6
    assert figs.leader_cpu_s is None  # not a server pglab runs: its processes are not read
    dump, restore = (OperationFigures.from_table(ok.series[i][OPERATION_KIND]) for i in "12")
    # (a dump of scale 1 lasts about 0.1 s: its jobs' sessions are not always seen)
    assert dump.bytes > 10e6 and restore.bytes == pytest.approx(dump.bytes, rel=0.01)
    assert "CHECKPOINT" in failed.error and "pg_checkpoint" in failed.error
    with outside_server.admin("pglab_bench") as conn:  # the index dropped, autovacuum as before
        assert conn.execute(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'pglab_operation_idx'"
        ).fetchone() == (0,)
        assert conn.execute(  # and the restored database
            "SELECT count(*) FROM pg_database WHERE datname = 'pglab_restore'"
        ).fetchone() == (0,)
        (options,) = conn.execute(
            "SELECT reloptions FROM pg_class WHERE relname = 'pgbench_accounts'"
        ).fetchone()
        assert not any("autovacuum" in o for o in options or [])


class Recorded(QuietEvents):
    def __init__(self) -> None:
        self.said: list[str] = []
        self.statuses: list[str] = []

    def operation(self, text: str) -> None:
        self.said.append(text)

    def status(self, message: str) -> None:
        self.statuses.append(message)


def test_an_operation_tells_its_progress_as_it_runs(tmp_path: Path, lab: Lab) -> None:
    path = tmp_path / "p.toml"
    # a vacuum of every tuple (FREEZE after a full dirtying) runs for a second or more
    path.write_text(
        'name = "said"\n[dataset]\nscale = 10\n[workload]\noperation = "vacuum"\n'
        "dirty = 1.0\nfreeze = true\n"
    )
    events = Recorded()
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store, events), campaign.load(path))
    assert out.ok == 1
    assert events.said and all(t.startswith("vacuum: ") for t in events.said)
    assert any(re.fullmatch(r"vacuum: scanning heap \d+%", t) for t in events.said), events.said


CLIENTS = """
name = "clients"
{server}
[dataset]
scale = 10
[[phases]]
name = "backup"  # first: the tiny target's run fails here, at once
operation = "basebackup"
[[phases]]
name = "dump"
operation = "dump"
jobs = 2
compress = false
[[phases]]
name = "restore"
operation = "restore"
jobs = 2
[[phases]]
name = "full"
operation = "vacuum_full"
[[phases]]
name = "cluster"
operation = "cluster"
[[phases]]
name = "reindex"
operation = "reindex"
parallel = 1
{methods}[variants.roomy]
[variants.tiny]
workload = {{ target = "{tiny}" }}
"""


# another index method (hash builds take seconds more here: its statement has a unit test)
METHODS = """
[[phases]]
name = "brin"
operation = "create_index"
method = "brin"
"""


@pytest.fixture
def tiny_dir(tmp_path: Path) -> Iterator[Path]:
    """A 16 MB tmpfs: no room for a base backup of scale 10."""
    need_root_and_tools()
    path = tmp_path / "tiny"
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


@pytest.mark.parametrize("version", ["18", "16", "15"])
def test_dump_restore_basebackup_and_rewrites_store_their_figures(
    version: str, tmp_path: Path, lab: Lab, tiny_dir: Path, no_leftovers, capsys, request
) -> None:
    path = tmp_path / "c.toml"
    methods = METHODS if version == "18" else ""  # on 18 only
    path.write_text(
        CLIENTS.format(tiny=tiny_dir, server=server_table(version, request), methods=methods)
    )
    store_path = tmp_path / "r.sqlite"
    args = ["--lab-dir", str(lab.home), "--store", str(store_path)]
    # the tiny target's run fails, the campaign goes on: exit 1 with one run of each
    assert main(["run", str(path), *args]) == 1
    with open_store(str(store_path)) as store:
        runs = {r.variant: r for r in store.list_runs("clients")}
        roomy, tiny = store.get_run(runs["roomy"].id), runs["tiny"]
    assert roomy.status == "ok" and tiny.status == "failed"
    assert "the basebackup target" in tiny.error and "No space left on device" in tiny.error
    assert "ran out of room" in tiny.error and str(tiny_dir) in tiny.error
    assert not list(tiny_dir.iterdir())  # its partial copy removed
    figs = {
        ph.name: OperationFigures.from_table(roomy.series[str(ph.idx)][OPERATION_KIND])
        for ph in roomy.phases
    }
    progress = {ph.name: roomy.series[str(ph.idx)] for ph in roomy.phases}
    for name, f in figs.items():
        assert f.mb_s == pytest.approx(f.bytes / 1e6 / f.elapsed_s), name
        assert f.wal_bytes is not None and f.wal_bytes >= 0, name
    # dump and restore: the database's size (its tables and indexes, ~160 MB); -j 2: two jobs
    assert 140e6 < figs["dump"].bytes < 200e6 and figs["restore"].bytes == pytest.approx(
        figs["dump"].bytes, rel=0.01
    )
    assert figs["dump"].workers_launched == 2 and figs["restore"].workers_launched == 2
    assert figs["dump"].leader_cpu_s is None and figs["full"].leader_cpu_s > 0
    assert figs["dump"].wal_bytes < 5e6 < 100e6 < figs["restore"].wal_bytes
    # the restore's COPY seen in pg_stat_progress_copy, against the uncompressed dump's bytes
    rows = progress["restore"]["progress.restore"]["rows"]
    assert rows and all(r[1] == "COPY FROM" and r[5] == "bytes" and r[3] > 90e6 for r in rows)
    # the base backup: every file it wrote (more than the database: the others, WAL)
    assert figs["backup"].bytes > figs["dump"].bytes and figs["backup"].workers_launched is None
    assert progress["backup"]["progress.basebackup"]["rows"]
    # the rewrites: the heap (~130 MB) and its 1,000,000 tuples, and WAL of the new heap
    for name in ("full", "cluster", "reindex"):
        f = figs[name]
        assert 120e6 < f.bytes < 160e6 and f.tuples == 1_000_000, name
        assert f.tuples_s == pytest.approx(f.tuples / f.elapsed_s), name
    assert figs["full"].wal_bytes > 100e6 and figs["cluster"].wal_bytes > 100e6
    assert figs["reindex"].workers_launched == 1
    for name in ("brin",) if version == "18" else ():  # the same heap, a serial build
        assert figs[name].bytes == figs["full"].bytes and figs[name].workers_launched == 0
    assert roomy.metrics["phase.restore.wal_bytes"] == figs["restore"].wal_bytes
    # nothing left of the run: no dump, no base backup, no restored database
    assert not list((lab.home / "work").glob(f"*/{clients.DUMP_DIR}"))
    assert not list((lab.home / "work").glob(f"*/{clients.BACKUP_DIR}"))
    capsys.readouterr()
    assert main(["show", str(roomy.id), *args]) == 0
    out = capsys.readouterr().out
    assert "phase.restore.wal_bytes" in out and "phase.full.tuples_s" in out


def test_a_dataset_init_tells_its_progress_and_keeps_its_steps_times(
    tmp_path: Path, lab: Lab, monkeypatch
) -> None:
    # told from the start (not after 5 s): scale 3 is made (and copied) in under a second
    monkeypatch.setattr(dataset, "SAID_AFTER_S", 0.0)
    monkeypatch.setattr(dataset, "COPY_TICK_S", 0.01)
    path = tmp_path / "i.toml"
    # fillfactor 95: a dataset of its own, made now
    path.write_text('name = "init"\n[dataset]\nscale = 3\nfillfactor = 95\n'
                    '[workload]\noperation = "analyze"\n')  # fmt: skip
    events = Recorded()
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store, events), campaign.load(path))
        assert out.ok == 1
        (run,) = [store.get_run(r.id) for r in store.list_runs("init")]
    told = [m.removeprefix("initializing dataset: ") for m in events.statuses
            if m.startswith("initializing dataset: ")]  # fmt: skip
    assert told[:3] == ["dropping old tables", "creating tables", "generating data (client-side)"]
    assert told[-2:] == ["vacuuming", "creating primary keys"]
    tuples = [t for t in told if " tuples), ETA " in t]
    assert tuples[0].startswith("pgbench_accounts 33% (100,000 of 300,000 tuples), ETA 0:0")
    assert tuples[-1].startswith("pgbench_accounts 100% (300,000 of 300,000 tuples)")
    # the run's copy of the dataset: its bytes as it goes, then its total and rate
    copying = [m for m in events.statuses if m.startswith("resetting dataset: ")]
    assert copying and all(re.fullmatch(r"resetting dataset: [0-9,]+ of [0-9,]+ MiB \(\d+%\)"
                                        r"(, [0-9,]+ MB/s, ETA \d+:\d\d)?", m)
                           for m in copying), copying  # fmt: skip
    copied = [m for m in events.statuses if m.startswith("dataset copied: ")]
    assert len(copied) == 1, events.statuses
    found = re.fullmatch(r"dataset copied: ([0-9,]+) MiB in [0-9.]+ s \([0-9,]+ MB/s\)", copied[0])
    assert found and int(found[1].replace(",", "")) >= 30, copied  # scale 3: ~45 MiB
    # pgbench's own time per step, with the dataset and in the run's timings
    steps = run.timings
    assert run.timings["dataset_made_now"] == 1.0
    assert {"dataset_init.client-side_generate_s", "dataset_init.vacuum_s",
            "dataset_init.primary_keys_s"} <= set(steps)  # fmt: skip
    total = sum(v for k, v in steps.items() if k.startswith("dataset_init."))
    assert 0 < total <= steps["dataset_init_s"]
