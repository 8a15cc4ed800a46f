"""Maintenance operations as phases (VACUUM, ANALYZE, CREATE INDEX) on the embedded
PostgreSQL 18: each stores its elapsed time, bytes, MB/s and a progress series, through
`pglab run` and the SQLite store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from existing_server import BENCH_PASSWORD

from pglab.campaign import parse as campaign
from pglab.cli import main
from pglab.lab import Lab
from pglab.maintenance.figures import OPERATION_KIND, OperationFigures
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store

pytestmark = pytest.mark.integration

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


@pytest.mark.parametrize("version", ["18", "16"])
def test_every_operation_stores_its_figures_and_progress(
    version: str, tmp_path: Path, lab: Lab, no_leftovers, capsys, request
) -> None:
    # 18 (embedded) with 0 and 1 workers; 16 (the pgserver wheel) with 1
    server = f'[server]\nbindir = "{request.getfixturevalue("pg16_bindir")}"'
    parallels = [0, 1] if version == "18" else [1]
    path = tmp_path / "m.toml"
    path.write_text(CAMPAIGN.format(server=server if version == "16" else "", parallel=parallels))
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
                assert ph.tps == pytest.approx(figs.mb_s)
                assert run.metrics[f"phase.{ph.name}.mb_s"] == pytest.approx(figs.mb_s)
                progress = tables[f"progress.{figs.operation}"]
                assert progress["columns"] == ["t", "phase", "done", "total", "pct"]
                if ph.name != "analyze":  # ANALYZE samples: it can end within 50 ms
                    assert progress["rows"], ph.name
                for t, phase, done, total, _ in progress["rows"]:
                    assert ph.started_at - 1 <= t <= ph.started_at + ph.elapsed_s + 1
                    assert phase and 0 <= done <= max(total, done)
                    if total and phase in ("scanning heap", "building index: scanning table"):
                        assert total * 8192 == figs.bytes  # the server's count of the heap
            index = next(ph for ph in run.phases if ph.name == "index")
            figs = OperationFigures.from_table(run.series[str(index.idx)][OPERATION_KIND])
            assert figs.parallel == parallel
            # 2 cores: a leader and one worker with parallel = 1
            assert figs.workers_launched == parallel
            vacuum = next(ph for ph in run.phases if ph.name == "vacuum")
            # VERBOSE's report: the dirtying left 10% of the accounts dead (fixed rows, ± hash)
            removed = int(re.search(r"tuples: (\d+) removed", vacuum.output).group(1))
            assert 90_000 < removed < 110_000
            # and its own time: the MB/s agrees with the heap's size over the server's time
            said = float(re.search(r"elapsed: ([0-9.]+) s", vacuum.output).group(1))
            figs = OperationFigures.from_table(run.series[str(vacuum.idx)][OPERATION_KIND])
            assert figs.mb_s == pytest.approx(figs.bytes / 1e6 / said, rel=0.1)
            # the run's headline figure is the MB/s of its measured operations
            mean = sum(ph.tps for ph in run.phases) / len(run.phases)
            assert r.tps == pytest.approx(mean)
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
    path.write_text('[workload]\noperation = "create_index"\nparallel = 9\n')
    args = ["--lab-dir", str(lab.home), "--store", str(tmp_path / "r.sqlite")]
    assert main(["run", str(path), "--dry-run", *args]) == 2
    err = capsys.readouterr().err
    assert "parallel = 9 is more than max_worker_processes = 8 allows" in err


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
    phases = '[[phases]]\nname = "index"\noperation = "create_index"\nparallel = 1\n'
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
    assert "CHECKPOINT" in failed.error and "pg_checkpoint" in failed.error
    with outside_server.admin("pglab_bench") as conn:  # the index dropped, autovacuum as before
        assert conn.execute(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'pglab_operation_idx'"
        ).fetchone() == (0,)
        (options,) = conn.execute(
            "SELECT reloptions FROM pg_class WHERE relname = 'pgbench_accounts'"
        ).fetchone()
        assert not any("autovacuum" in o for o in options or [])


class Recorded(QuietEvents):
    def __init__(self) -> None:
        self.said: list[str] = []

    def operation(self, text: str) -> None:
        self.said.append(text)


def test_an_operation_tells_its_progress_as_it_runs(tmp_path: Path, lab: Lab) -> None:
    path = tmp_path / "p.toml"
    # a vacuum of every tuple (FREEZE after a full dirtying) runs for a second or more
    path.write_text(
        'name = "said"\n[dataset]\nscale = 10\n[workload]\noperation = "vacuum"\n'
        "dirty = 1.0\nfreeze = true\n"
    )
    events = Recorded()
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = Executor(lab, store, events).run_campaign(campaign.load(path))
    assert out.ok == 1
    assert events.said and all(t.startswith("vacuum: ") for t in events.said)
    assert any(re.fullmatch(r"vacuum: scanning heap \d+%", t) for t in events.said), events.said
