"""A captured workload replayed by Debian's pgreplay (``workloads/replay/engine``), on real servers:
pgbench's simple-update load captured live with its dump on a server outside pglab, the dump
restored on two targets that differ in ``synchronous_commit`` (fsync on, on disk), the same
workload replayed on each: the statements all replayed, the total execution time from
``pg_stat_statements`` higher with synchronous commits (COMMIT waits for the WAL flush); a
table dropped on a target makes statements fail in the replay only: the divergence is
counted per class, marked and said."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import pglab_in_background, wait_for

from pglab.campaign.spec import ServerSpec
from pglab.lab import Lab
from pglab.postgres.sources import resolve
from pglab.workloads.replay import engine, workload_file
from pglab.workloads.replay.workload_file import Workload

pytestmark = pytest.mark.integration


def _admin_dsn(server: Any) -> str:
    return f"host={server.sock} port={server.port} user=admin dbname=postgres"


@pytest.fixture(scope="module")
def captured(lab: Lab, lab_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Workload:
    from helpers.existing_server import OutsideServer

    tmp = tmp_path_factory.mktemp("capture")
    source = OutsideServer(lab).start()
    try:
        source.pgbench("-i", "-s", "1", "-q")
        out, err = tmp / "w.json.gz", tmp / "err"
        argv = [sys.executable, "-m", "pglab", "capture", "--lab-dir", str(lab_home),
                _admin_dsn(source), "--log", str(source.log), "--for", "5s",
                "--with-dump", str(tmp / "dump"), "-o", str(out)]  # fmt: skip
        with pglab_in_background(argv, err) as proc:
            wait_for(lambda: "window open" in err.read_text(), proc, err, "the window", 60)
            # at a rate pgreplay keeps up with on a busy 2-core machine (unthrottled, 24,000
            # statements in 2 s took it over a minute to replay)
            source.pgbench("-N", "-c", "2", "-T", "2", "-R", "150")
            # fails in the capture, and so in every replay
            with source.admin() as conn, pytest.raises(psycopg.errors.UndefinedTable):
                conn.execute("SELECT * FROM not_there")
            assert proc.wait(60) == 0, err.read_text()
        if os.environ.get("PGLAB_UPDATE_GOLDEN"):  # examples/replay.toml's workload and dump
            _keep_as_example(out, tmp / "dump")
        return workload_file.read(out)
    finally:
        source.stop()


EXAMPLE = Path(__file__).parents[2] / "examples" / "replay"


def _keep_as_example(out: Path, dump: Path) -> None:
    """The captured workload and its dump as examples/replay/ (the dump's path relative)."""
    import shutil

    shutil.rmtree(EXAMPLE, ignore_errors=True)
    EXAMPLE.mkdir()
    shutil.copytree(dump, EXAMPLE / "pgbench-dump")
    workload = workload_file.read(out)
    data = {**workload.data, "dump": "pgbench-dump", "source": "a server the tests started"}
    workload_file.write(Workload(None, data), EXAMPLE / "pgbench-simple-update.json.gz")
    for path in [EXAMPLE, *EXAMPLE.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # in git: mode 0644 as every file


class Target:
    """A server outside pglab made from the capture's dump, with these settings."""

    def __init__(self, lab: Lab, workload: Workload, settings: dict[str, str]) -> None:
        from helpers.existing_server import OutsideServer

        self.server = OutsideServer(lab).start()
        conf = "".join(f"{k} = '{v}'\n" for k, v in settings.items())
        with open(self.server.data / "postgresql.conf", "a") as f:
            f.write("fsync = on\nshared_preload_libraries = 'pg_stat_statements'\n" + conf)
        self.server.restart()
        binaries = resolve(ServerSpec(), lab)
        assert workload.data["dump"] is not None
        subprocess.run([binaries.exe("pg_restore"), "-d", _admin_dsn(self.server),
                        workload.data["dump"]], check=True)  # fmt: skip

    def connect(self, db: str) -> psycopg.Connection:
        return self.server.admin(db)

    def log_since(self) -> Callable[[], str]:
        offset = self.server.log.stat().st_size
        return lambda: self.server.log.read_bytes()[offset:].decode(errors="replace")

    def replay(self, workload: Workload, workdir: Path) -> engine.ReplayResult:
        s = self.server
        return engine.replay(workload, self.connect, str(s.sock), s.port, workdir,
                             self.log_since())  # fmt: skip


@pytest.fixture(scope="module")
def targets(lab: Lab, captured: Workload) -> Iterator[dict[str, Target]]:
    made: dict[str, Target] = {}
    try:
        for value in ("on", "off"):
            made[value] = Target(lab, captured, {"synchronous_commit": value})
        yield made
    finally:
        for t in made.values():
            t.server.stop()


def test_replayed_on_two_variants_with_a_real_difference(
    captured: Workload, targets: dict[str, Target], tmp_path: Path
) -> None:
    s = captured.data["summary"]
    assert s["by_kind"]["UPDATE"] > 50 and s["errors"] == 1
    results = {v: t.replay(captured, tmp_path / v) for v, t in targets.items()}
    for r in results.values():
        assert r.statements == s["statements"]
        assert r.errors == 1  # the capture's own failed statement, failed again
        assert r.divergence.count == 0 and not r.divergence.marked, r.divergence.said()
        assert r.replay_s >= 0.8 * r.captured_s and r.statements_s > 0, r.output
        assert any("UPDATE pgbench_accounts" in c.statement for c in r.classes)
    on, off = results["on"], results["off"]
    for v, r in results.items():  # what the guide quotes (pytest -s shows it)
        print(f"synchronous_commit={v}: {r.statements} statements in {r.replay_s:.2f} s "
              f"(captured {r.captured_s:.2f} s), exec {r.exec_ms:.0f} ms, active "
              f"{r.active_ms:.0f} ms")  # fmt: skip
    # a COMMIT (pgbench's END) waits for the WAL flush only with synchronous_commit = on:
    # in the sessions' active time, not in pg_stat_statements (the commit comes after the
    # statement it times), whose totals stay alike
    assert on.active_ms > 2 * off.active_ms, (on.active_ms, off.active_ms)
    assert on.exec_ms < 2 * off.exec_ms and off.exec_ms < 2 * on.exec_ms


def test_a_replay_at_twice_the_speed_takes_half_the_time(
    captured: Workload, targets: dict[str, Target], tmp_path: Path
) -> None:
    """speed = 2 (pgreplay -s 2): the captured times halved, while the load is light enough
    for pgreplay to keep up (150 transactions/s here)."""
    s = targets["off"].server
    r = engine.replay(captured, targets["off"].connect, str(s.sock), s.port, tmp_path,
                      targets["off"].log_since(), speed=2.0)  # fmt: skip
    print(f"speed 2: {r.replay_s:.2f} s for a window of {r.captured_s:.2f} s")
    assert r.statements == captured.data["summary"]["statements"]
    assert 0.35 * r.captured_s < r.replay_s < 0.75 * r.captured_s, (r.replay_s, r.captured_s)


def test_divergence_counted_per_class_marked_and_said(
    captured: Workload, targets: dict[str, Target], tmp_path: Path
) -> None:
    target = targets["off"]
    with target.connect("postgres") as conn:
        conn.execute("DROP TABLE pgbench_history")
    result = target.replay(captured, tmp_path / "dropped")
    d = result.divergence
    inserts = captured.data["summary"]["by_kind"]["INSERT"]
    assert [c["statement"][:24] for c in d.failed_in_replay_only][:1] == [
        "INSERT INTO pgbench_hist"
    ]
    assert d.failed_in_replay_only[0]["count"] == inserts
    assert d.failed_in_capture_only == []
    assert d.marked and "not comparable" in d.said()


CAMPAIGN = """\
name = "replay-sync"
repeats = 1

[targets.disk]
path = "{disk}"

[storage]
data = "disk"

[server.settings]
shared_preload_libraries = "pg_stat_statements"

[workload]
replay = "{workload}"

[variants.sync-on]

[variants.sync-off]
settings = {{ synchronous_commit = "off" }}
"""


def test_a_campaign_replays_on_each_variant(
    captured: Workload, lab_home: Path, tmp_path: Path
) -> None:
    """``[workload] replay``: the dump restored once as the dataset and copied per run, the
    workload replayed on each variant, its figures stored."""
    import json
    import tempfile

    assert captured.path is not None
    disk = Path(tempfile.mkdtemp(prefix="pglab-replay-disk-", dir="/var/tmp"))
    disk.chmod(0o777)
    try:
        campaign = tmp_path / "replay.toml"
        campaign.write_text(CAMPAIGN.format(disk=disk, workload=captured.path))
        store = tmp_path / "store.sqlite"
        done = subprocess.run(
            [sys.executable, "-m", "pglab", "run", str(campaign), "--lab-dir", str(lab_home),
             "--store", str(store)], capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        shown = subprocess.run(
            [sys.executable, "-m", "pglab", "show", "replay-sync", "--json", "--store",
             str(store)], capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert shown.returncode == 0, shown.stderr
        points = {p["variant"]: p for p in json.loads(shown.stdout)["points"]}
        on, off = points["sync-on"]["derived"], points["sync-off"]["derived"]
        for figures in (on, off):
            assert figures["replay.divergence_pct"] == 0.0
            assert figures["replay.exec_ms"] > 0 and figures["replay.lag_s"] < 30
        # the commits' WAL flush on a disk, with synchronous_commit = on only
        assert on["replay.active_ms"] > 2 * off["replay.active_ms"], (on, off)
        assert points["sync-on"]["runs"] == 1 and points["sync-on"]["failed"] == 0
        # the run's figure: statements per second of active time, higher without the flushes
        assert points["sync-off"]["tps_median"] > 2 * points["sync-on"]["tps_median"]
        text = subprocess.run(
            [sys.executable, "-m", "pglab", "show", "replay-sync", "--store", str(store)],
            capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "160"},
        ).stdout  # fmt: skip
        assert "replay.active_ms" in text and "replay.lag_s" in text, text
    finally:
        import shutil

        shutil.rmtree(disk, ignore_errors=True)


def test_a_workload_file_of_a_newer_pglab_refused_and_nothing_stored(
    lab_home: Path, tmp_path: Path
) -> None:
    import gzip
    import json

    example = Path(__file__).parents[2] / "examples" / "replay"
    data = json.loads(gzip.decompress((example / "pgbench-simple-update.json.gz").read_bytes()))
    data.update(version=workload_file.VERSION + 1, pglab="9.0", dump=str(example / "pgbench-dump"))
    (tmp_path / "newer.json.gz").write_bytes(gzip.compress(json.dumps(data).encode()))
    campaign = tmp_path / "c.toml"
    campaign.write_text('name = "newer"\n[workload]\nreplay = "newer.json.gz"\n')
    store = tmp_path / "s.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "pglab", "run", str(campaign), "--lab-dir", str(lab_home),
         "--store", str(store)], capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "format version 2 (written by pglab 9.0)" in done.stderr
    from pglab.store import open_store

    assert not store.exists() or open_store(str(store)).list_runs("newer") == []
