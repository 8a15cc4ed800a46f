"""Checks every results-store backend must pass, shared by the SQLite and PostgreSQL tests.

A test module subclasses :class:`StoreContract` and provides a ``store_url`` fixture that
names an empty store; each check opens it with ``open_store``.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pglab.errors import StoreError
from pglab.records import (
    LatencySecond,
    PgbenchReport,
    PhaseResult,
    ProgressSample,
    RunResult,
    StorageResult,
    Timings,
)
from pglab.rows import RunRow
from pglab.store import Store, open_store, schema
from pglab.store.base import Store as BaseStore
from pglab.store.numbers import metrics_json, metrics_of

TESTS_DIR = Path(__file__).resolve().parents[1]  # on the path of a started Python, as pytest's


# -- sample data ---------------------------------------------------------------------------


TPCB = "<builtin: TPC-B (sort of)>"


def sample_phase(
    name: str = "main",
    iteration: int = 1,
    measured: bool = True,
    tps: float = 1234.5678,
    seconds: int = 3,
    t0: float = 1_700_000_000.25,
) -> PhaseResult:
    report = PgbenchReport(
        tps=tps, transactions=int(tps * seconds), failed=0, latency_avg_ms=0.81,
        latency_stddev_ms=0.123456789, initial_connection_ms=2.5, transaction_type=TPCB,
        scaling_factor=10, query_mode="simple", clients=8, threads=2, duration_s=float(seconds),
        max_tries=1, pgbench_version="18.0",
    )  # fmt: skip
    progress = tuple(
        ProgressSample(t=float(i + 1), tps=tps + i, latency_avg_ms=0.8 + i / 100,
                       latency_stddev_ms=0.1, failed=0 if i else None)
        for i in range(seconds)
    )  # fmt: skip
    latency = tuple(
        LatencySecond(epoch=int(t0) + i, count=1000 + i, failed=i % 2, mean_ms=0.8, max_ms=9.75,
                      p50_ms=0.7, p95_ms=1.9, p99_ms=3.1,
                      histogram=((0, 3), (17, 900 + i), (23, 97)))
        for i in range(seconds)
    )  # fmt: skip
    return PhaseResult(
        name=name, iteration=iteration, measured=measured, started_at=t0, elapsed_s=seconds + 0.01,
        argv=("pgbench", "-c", "8", "-j", "2", "-T", str(seconds), "-P", "1"), report=report,
        progress=progress, latency=latency,
        output=f"transaction type: {TPCB}\ntps = {tps} (without initial connection)\nünïcode ✓\n",
        tables={
            "waits": {"columns": ["t", "samples", "wait_event_type", "wait_event", "count"],
                      "rows": [[t0, 10, "LWLock", "WALWrite", 7], [t0, 10, "CPU", "running", 3]]},
            "telemetry.notes": {"columns": ["sampler", "note"],
                                "rows": [["buffers", "off (start): no pg_buffercache"]]},
        } if measured else {},
    )  # fmt: skip


def sample_run(
    campaign: str = "camp",
    point: str = "p1",
    repeat: int = 1,
    status: str = "ok",
    phases: tuple[PhaseResult, ...] | None = None,
    **changes: Any,
) -> RunResult:
    if phases is None:
        phases = (
            sample_phase("warm", measured=False, tps=10.0),
            sample_phase("main", 1, tps=1000.0),
            sample_phase("main", 2, tps=1100.0, seconds=2),
        )
    fields: dict[str, Any] = dict(
        campaign=campaign, run_key=f"{point}/{repeat}", point_key=point, repeat=repeat,
        variant="base", label=f"base clients={repeat}",
        spec={"variant": "base", "axes": [["clients", 8]], "server": {"settings": [["a", "1"]]},
              "phases": [{"name": "main", "duration": 3}], "repeat": repeat},
        status=status, started_at=1_700_000_000.5, finished_at=1_700_000_042.75,
        error=None if status == "ok" else "pgbench: connection refused",
        fingerprint={"server_version": "18.0", "cpus": 2, "pgdata_mount": {"fstype": "ext4"},
                     "settings": {"shared_buffers": {"setting": "16384", "unit": "8kB"}}},
        phases=phases, metrics={"tps": 1050.0, "phase.main.tps": 1050.0, "ratio": 0.1 + 0.2},
        timings=Timings(reset_s=1.25, dataset_made_now=False, dataset_init_steps={"vacuum": 0.25},
                        other={"start_s": 0.5}),  # an older pglab's name, kept
        server_log="LOG:  database system is ready to accept connections\n",
    )  # fmt: skip
    fields.update(changes)
    if isinstance(fields["metrics"], dict):  # as stored: the store's edge makes them typed
        fields["metrics"] = metrics_of(fields["metrics"])
    return RunResult(**fields)


# -- helpers -------------------------------------------------------------------------------


def count(store: Store, table: str) -> int:
    row = store._one(f"SELECT COUNT(*) AS n FROM {table}", shape=dict)
    assert row is not None
    return int(row["n"])


def counts(store: Store) -> dict[str, int]:
    return {t: count(store, t) for t in ("campaigns", "runs", "phases", "series")}


KILL_SCRIPT = """
import os, signal
from helpers.store_checks import sample_run
from pglab.store import open_store
from pglab.store.base import Store

def die(self, run_id, rows):
    os.kill(os.getpid(), signal.SIGKILL)  # run and phases written, not committed

Store._insert_series = die
with open_store({url!r}) as store:
    store.save_run(sample_run(point="killed"))
"""

WRITER_SCRIPT = """
import time
from helpers.store_checks import sample_run, sample_phase
from pglab.store import open_store
while time.time() < {start}:  # every writer opens the store at the same moment
    pass
with open_store({url!r}) as store:
    for i in range({n}):
        store.save_run(sample_run(point="{tag}-" + str(i), phases=(sample_phase(),)))
"""


def start_python(script: str, **kw: Any) -> subprocess.Popen[str]:
    """A Python process running ``script`` (formatted with ``kw``), the tests' helpers on its
    path as on pytest's (``PYTHONPATH``)."""
    code = textwrap.dedent(script).format(**kw)
    path = os.pathsep.join(filter(None, [str(TESTS_DIR), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.Popen(
        [sys.executable, "-c", code], stderr=subprocess.PIPE, text=True, env=env
    )


# -- the contract --------------------------------------------------------------------------


class StoreContract:
    """Subclass with a ``store_url`` fixture (an empty store) to run these against a backend."""

    def test_new_store_is_empty_and_current(self, store_url: str) -> None:
        with open_store(store_url) as store:
            assert store.schema_version == schema.latest_version()
            assert store.list_runs() == [] and store.list_campaigns() == []
            assert store.get_run(1) is None and store.load_run(1) is None
            assert store.get_campaign("nope") is None and store.get_campaign("1") is None
            assert store.done_run_keys("nope") == set()
            assert store.delete_campaign("nope") is False

    def test_round_trip(self, store_url: str) -> None:
        run = sample_run()
        with open_store(store_url) as store:
            cid = store.ensure_campaign(
                "camp", {"name": "camp", "matrix": {"c": [1, 8]}}, "/x.toml"
            )
            run_id = store.save_run(run)
        with open_store(store_url) as store:  # a fresh connection reads what was committed
            assert store.load_run(run_id) == run
            got = store.get_run(run_id)
            listed = store.list_runs("camp")
            labels = store.point_labels(10)
            campaigns = store.list_campaigns()
            camp = store.get_campaign("camp")
            assert store.get_campaign(str(cid)) == camp
            specs = store.point_specs()  # each point's spec, of its first run
        assert got is not None and camp is not None
        assert specs == {("camp", run.point_key): run.spec}
        assert labels == list(dict.fromkeys((r.campaign, r.label) for r in listed))
        mean_measured = (1000.0 + 1100.0) / 2
        assert got.id == run_id and got.campaign == "camp" and got.status == "ok"
        assert got.spec == run.spec and got.fingerprint == run.fingerprint
        assert got.metrics == metrics_json(run.metrics) == {
            "tps": 1050.0, "phase.main.tps": 1050.0, "ratio": 0.1 + 0.2}  # fmt: skip
        assert got.timings == {"dataset_made_now": 0.0, "dataset_init.vacuum_s": 0.25,
                               "reset_s": 1.25, "start_s": 0.5}  # fmt: skip
        assert list(got.timings) == ["dataset_made_now", "dataset_init.vacuum_s", "reset_s",
                                     "start_s"]  # fmt: skip
        assert got.server_log == run.server_log and got.tps == mean_measured
        assert [(p.idx, p.name, p.iteration, p.measured) for p in got.phases] == [
            (0, "warm", 1, False), (1, "main", 1, True), (2, "main", 2, True)]  # fmt: skip
        ph = got.phases[1]
        assert ph.tps == 1000.0 and ph.transactions == 3000 and ph.failed == 0
        assert ph.latency_stddev_ms == 0.123456789 and ph.initial_connection_ms == 2.5
        assert ph.report.transaction_type == TPCB
        assert ph.argv[0] == "pgbench" and "ünïcode ✓" in ph.output
        assert set(got.series) == {"0", "1", "2"}
        lat = got.series["2"]["latency"]
        assert lat["columns"] == ["epoch", "count", "failed", "mean_ms", "max_ms", "p50_ms",
                                  "p95_ms", "p99_ms", "histogram", "p90_ms", "p999_ms",
                                  "serialization", "deadlock", "retried",
                                  "retries"]  # fmt: skip
        hist = lat["columns"].index("histogram")
        assert len(lat["rows"]) == 2 and lat["rows"][1][hist] == [[0, 3], [17, 901], [23, 97]]
        prog = got.series["1"]["progress"]
        assert prog["columns"][:2] == ["t", "tps"] and prog["rows"][0][:2] == [1.0, 1000.0]
        assert prog["rows"][0][prog["columns"].index("failed")] is None
        with open_store(store_url) as store:
            lean = store.get_run(run_id, skip_kinds=("latency",))
        assert lean is not None and lean.metrics == got.metrics
        assert {k: set(v) for k, v in lean.series.items()} == {
            k: set(v) - {"latency"} for k, v in got.series.items()
        }
        assert lean.series["1"]["progress"] == prog
        (row,) = listed
        assert row == RunRow(id=run_id, campaign="camp", run_key="p1/1", point_key="p1",
                             variant="base", label="base clients=1", repeat=1, status="ok",
                             tps=mean_measured, started_at=run.started_at,
                             finished_at=run.finished_at, error=None,
                             metrics=got.metrics, axes={"clients": 8})  # fmt: skip
        (summary,) = campaigns
        assert summary["name"] == "camp" and summary["id"] == cid
        assert (summary["runs_ok"], summary["runs_failed"]) == (1, 0)
        assert summary["last_run_at"] == run.finished_at and summary["created_at"] > 0
        assert camp["spec"] == {"name": "camp", "matrix": {"c": [1, 8]}}
        assert camp["source_file"] == "/x.toml"

    def test_run_without_measured_phases_or_series(self, store_url: str) -> None:
        bare = sample_phase(measured=False)
        bare = PhaseResult(bare.name, 1, False, 0.0, 1.0, ("pgbench",), bare.report)
        with open_store(store_url) as store:
            a = store.save_run(sample_run(point="none", phases=()))
            b = store.save_run(sample_run(point="bare", phases=(bare,)))
            assert store.load_run(a) == sample_run(point="none", phases=())
            assert store.load_run(b) == sample_run(point="bare", phases=(bare,))
            assert [r.tps for r in store.list_runs()] == [None, None]
            assert store.get_run(b).series == {}
            phases = store.runs_phases([b, a, 999])  # only the phases, by run
            assert phases == {b: store.get_run(b).phases, a: (), 999: ()}

    def test_ensure_campaign_is_idempotent_and_updates(self, store_url: str) -> None:
        with open_store(store_url) as store:
            first = store.ensure_campaign("c", {"v": 1}, "/a.toml")
            assert store.ensure_campaign("c", {"v": 2}, None) == first
            camp = store.get_campaign("c")
            assert camp["spec"] == {"v": 2} and camp["source_file"] == "/a.toml"
            assert store.ensure_campaign("c", {"v": 3}, "/b.toml") == first
            assert store.get_campaign("c")["source_file"] == "/b.toml"
            assert store.ensure_campaign("other", {}, None) != first
            # save_run creates a campaign it does not know, without touching a known one's spec
            store.save_run(sample_run(campaign="implicit"))
            assert store.get_campaign("implicit")["spec"] == {}
            store.save_run(sample_run(campaign="c"))
            assert store.get_campaign("c")["spec"] == {"v": 3}

    def test_resume_never_stores_an_ok_run_twice(self, store_url: str) -> None:
        with open_store(store_url) as store:
            first = store.save_run(sample_run())
            again = sample_run(metrics={"tps": 1.0}, phases=(sample_phase(tps=1.0),))
            assert store.save_run(again) == first
            assert store.save_run(sample_run(status="failed")) == first  # ok is never replaced
            assert len(store.list_runs()) == 1
            assert store.load_run(first) == sample_run()
            assert store.save_run(sample_run(repeat=2)) != first
            store.save_run(sample_run(campaign="other"))  # same key, other campaign: distinct
            assert store.done_run_keys("camp") == {"p1/1", "p1/2"}
            assert store.done_run_keys("other") == {"p1/1"}

    def test_failed_run_is_replaced_with_its_children(self, store_url: str) -> None:
        with open_store(store_url) as store:
            kept = store.save_run(sample_run(point="other"))
            failed = store.save_run(sample_run(status="failed"))
            assert store.done_run_keys("camp") == {"other/1"}
            assert store.get_campaign("camp")["runs_failed"] == 1
            before = counts(store)
            refailed = store.save_run(sample_run(status="failed", error="again"))
            assert refailed != failed and store.get_run(failed) is None
            assert counts(store) == before
            assert store.get_run(refailed).error == "again"
            listed = {r.id: r.tps for r in store.list_runs("camp")}
            assert listed[refailed] is None and listed[kept] > 0  # no TPS for a failed run
            ok = store.save_run(sample_run())
            assert store.get_run(refailed) is None and store.load_run(ok) == sample_run()
            assert counts(store) == before
            assert store.done_run_keys("camp") == {"p1/1", "other/1"}
            summary = store.list_campaigns()[0]
            assert (summary["runs_ok"], summary["runs_failed"]) == (2, 0)
            assert store.load_run(kept) == sample_run(point="other")

    def test_failure_while_encoding_writes_nothing(self, store_url: str) -> None:
        with open_store(store_url) as store:
            failed = store.save_run(sample_run(status="failed"))
            before = counts(store)
            with pytest.raises(TypeError):
                store.save_run(sample_run(metrics={"bad": object()}))
            bad_phase = PhaseResult("p", 1, True, 0.0, 1.0, ("pgbench", object()),  # type: ignore[arg-type]
                                    PgbenchReport(tps=1.0, transactions=1))  # fmt: skip
            with pytest.raises(TypeError):
                store.save_run(sample_run(phases=(sample_phase(), bad_phase)))
            assert counts(store) == before
            assert store.load_run(failed) == sample_run(status="failed")

    def test_failure_inside_the_transaction_leaves_no_trace(
        self, store_url: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def boom(self: BaseStore, run_id: int, rows: list[tuple[Any, ...]]) -> None:
            written = self._one(
                "SELECT COUNT(*) AS n FROM phases WHERE run_id = ?", (run_id,), shape=dict
            )
            assert written is not None and written["n"] == 3  # the run and phases are written
            raise RuntimeError("boom")

        with open_store(store_url) as store:
            failed = store.save_run(sample_run(status="failed"))
            before = counts(store)
            monkeypatch.setattr(BaseStore, "_insert_series", boom)
            with pytest.raises(RuntimeError, match="boom"):
                store.save_run(sample_run())  # would replace the failed run
            with pytest.raises(RuntimeError, match="boom"):
                store.save_run(sample_run(campaign="new campaign"))
            monkeypatch.undo()
            assert counts(store) == before
            assert store.load_run(failed) == sample_run(status="failed")
            assert store.done_run_keys("camp") == set()
            assert store.save_run(sample_run()) != failed  # and the store still works
        with open_store(store_url) as store:
            assert [r.status for r in store.list_runs()] == ["ok"]

    def test_process_killed_mid_save_leaves_nothing(self, store_url: str) -> None:
        with open_store(store_url) as store:
            store.save_run(sample_run(point="before"))
            before = counts(store)
        proc = start_python(KILL_SCRIPT, url=store_url)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == -9, err
        with open_store(store_url) as store:
            assert counts(store) == before
            assert store.done_run_keys("camp") == {"before/1"}
            store.save_run(sample_run(point="killed"))
            assert store.done_run_keys("camp") == {"before/1", "killed/1"}

    def test_concurrent_writers(self, store_url: str) -> None:
        open_store(store_url).close()  # the schema exists before the race starts
        n, errors = 12, []
        barrier = threading.Barrier(2)

        def writer(tag: str) -> None:
            try:
                with open_store(store_url) as store:
                    barrier.wait()
                    for i in range(n):
                        store.save_run(sample_run(point=f"{tag}-{i}", phases=(sample_phase(),)))
                        store.done_run_keys("camp")
            except BaseException as exc:  # reported below, in the test's thread
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(t,)) for t in ("a", "b")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors
        with open_store(store_url) as store:
            assert len(store.done_run_keys("camp")) == 2 * n
            assert count(store, "series") == 2 * n * 4  # progress, latency, 2 telemetry tables

    def test_same_run_saved_by_two_writers_at_once(self, store_url: str) -> None:
        with open_store(store_url) as store:
            store.ensure_campaign("race", {}, None)  # exists: only the row lock serializes
        rounds, ids, errors = 10, {"a": [], "b": []}, []
        barrier = threading.Barrier(2)

        def writer(tag: str) -> None:
            try:
                with open_store(store_url) as store:
                    for i in range(rounds):
                        run = sample_run(campaign="race", point=f"p{i}", phases=(sample_phase(),))
                        barrier.wait(timeout=60)
                        ids[tag].append(store.save_run(run))
            except BaseException as exc:
                barrier.abort()
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(t,)) for t in ids]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors
        assert ids["a"] == ids["b"]  # both got the id of the one run stored
        with open_store(store_url) as store:
            assert count(store, "runs") == rounds and count(store, "phases") == rounds

    def test_migrations_are_applied_once_in_order(
        self, store_url: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        last = schema.latest_version()
        with open_store(store_url) as store:
            assert store.schema_version == last
            run_id = store.save_run(sample_run())
        v2 = schema.Migration(last + 1, "test: an extra table", (
            "CREATE TABLE extra (id {id}, note TEXT NOT NULL)",
            "INSERT INTO extra (note) VALUES ('migrated')",
            "ALTER TABLE runs ADD COLUMN extra_note TEXT",
        ))  # fmt: skip
        monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, v2])
        for _ in range(2):
            with open_store(store_url) as store:
                assert store.schema_version == last + 1
                assert [r["note"] for r in store._rows("SELECT note FROM extra", shape=dict)] == [
                    "migrated"
                ]
                versions = store._rows(
                    "SELECT version FROM schema_version ORDER BY version", shape=dict
                )
                assert [r["version"] for r in versions] == list(range(1, last + 2))
                assert store.load_run(run_id) == sample_run()  # the data survived
        monkeypatch.undo()  # this pglab knows versions up to `last`: the store is from the future
        with pytest.raises(StoreError, match="made by a newer pglab") as err:
            open_store(store_url)
        assert f"schema version {last + 1}" in str(err.value) and err.value.hint

    def test_matrix_coordinates_are_filled_in_for_runs_stored_before(self, store_url: str) -> None:
        """Migration 3's UPDATE, in this dialect, gives runs stored before it their axes from
        their specs (here: a run whose axes_json is emptied, then the statement run again)."""
        with open_store(store_url) as store:
            run_id = store.save_run(sample_run(spec={"axes": [["clients", 4], ["script", "x"]]}))
            assert store.list_runs()[0].axes == {"clients": 4, "script": "x"}
            with store._transaction():
                store._run("UPDATE runs SET axes_json = NULL")
            assert store.list_runs()[0].axes == {}
            with store._transaction():
                store._run(schema.render(schema.V3.statements[1], store.dialect))
            (row,) = store.list_runs()
            assert row.id == run_id and list(row.axes.items()) == [
                ("clients", 4),
                ("script", "x"),
            ]
            assert store.get_run(run_id).axes == row.axes

    def test_figures_stored_before_version_6_get_their_names(self, store_url: str) -> None:
        """Migration 6, in this dialect, on a maintenance run put back as the versions before
        stored it (its MB/s in the run's and the phase's ``tps``, metrics ``tps`` and
        ``phase.NAME.tps``, a report without its figure): read back as this version stores it,
        every number the same."""
        from helpers.synthetic_operations import _operation_run
        from pglab.store import encoding

        run = _operation_run("ops", 1, 1, 300.0, 1_790_000_000.0)
        with open_store(store_url) as store:
            run_id = store.save_run(run)
            now = store.get_run(run_id)
            assert now is not None and now.tps is None and now.phases[0].tps is None
            before = {"tps": 300.0, **metrics_json(run.metrics), "phase.index.tps": 300.0}
            report = encoding.report_json(run.phases[0].report)
            del report["figure"]
            with store._transaction():
                store._run(
                    "UPDATE runs SET tps = ?, metrics_json = ?", (300.0, encoding.dumps(before))
                )
                store._run(
                    "UPDATE phases SET tps = ?, report_json = ?", (300.0, encoding.dumps(report))
                )
            old = store.get_run(run_id)
            assert old is not None and old.tps == 300.0 and old.phases[0].figure == "tps"
            with store._transaction():
                for statement in schema.V6.statements:
                    store._run(schema.render(statement, store.dialect))
                assert schema.V6.step is not None
                schema.V6.step(store._execute)
            assert store.get_run(run_id) == now
            assert store.list_runs()[0].metrics == metrics_json(run.metrics)

    def test_failed_migration_changes_nothing(
        self, store_url: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        open_store(store_url).close()
        last = schema.latest_version()
        bad = schema.Migration(last + 1, "test: fails halfway", (
            "CREATE TABLE half (x INTEGER)",
            "INSERT INTO no_such_table VALUES (1)",
        ))  # fmt: skip
        monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, bad])
        with pytest.raises(Exception, match="no_such_table"):
            open_store(store_url)
        monkeypatch.undo()
        with open_store(store_url) as store:
            assert store.schema_version == last
            assert store._one(store.dialect.table_exists, ("half",), shape=dict) is None

    def test_storage_result_round_trip(self, store_url: str) -> None:
        mount = {
            "mountpoint": "/",
            "fstype": "ext4",
            "device": "/dev/vda",
            "mount_options": "rw,relatime",
            "scheduler": "none",
            "major_minor": "254:0",
        }
        fsync = StorageResult(
            target_path="/var/tmp/x",
            tool="pg_test_fsync",
            tool_version="18.1",
            measured_at=1795418213.5,
            elapsed_s=16.25,
            mount=mount,
            results={
                "sections": [
                    {
                        "key": "1x8kB",
                        "title": "t",
                        "rows": [
                            {
                                "method": "fdatasync",
                                "ops_per_s": 6158.737,
                                "usecs_per_op": 162.0,
                                "note": "",
                            }
                        ],
                    }
                ],
                "seconds_per_test": 1,
                "direct_io": True,
            },  # fmt: skip
            output="1 second per test\n",
            host={"kernel": "Linux 6.1"},
        )
        fio = replace(fsync, tool="fio", tool_version="fio-3.33", results={"jobs": []})
        with open_store(store_url) as store:
            assert store.list_storage_results() == []
            a = store.save_storage_result(fsync)
            b = store.save_storage_result(fio)
        with open_store(store_url) as store:
            rows = store.list_storage_results()
            assert [r["id"] for r in rows] == [a, b]
            assert [r["id"] for r in store.list_storage_results("fio")] == [b]
            got = store.get_storage_result(a)
            assert store.get_storage_result(b + 1) is None
        assert got["results"] == fsync.results and got["output"] == fsync.output
        assert got["facts"] == {"mount": mount, "host": {"kernel": "Linux 6.1"}}
        where = (got["fstype"], got["device"], got["mount_options"])
        assert where == ("ext4", "/dev/vda", "rw,relatime")
        assert got["measured_at"] == 1795418213.5 and got["tool_version"] == "18.1"
        assert "output" not in rows[0]

    def test_delete_campaign(self, store_url: str) -> None:
        with open_store(store_url) as store:
            store.save_run(sample_run(campaign="gone"))
            store.save_run(sample_run(campaign="gone", point="p2", status="failed"))
            kept = store.save_run(sample_run(campaign="kept"))
            before = counts(store)
            assert store.delete_campaign("gone") is True
            assert store.get_campaign("gone") is None and store.list_runs("gone") == []
            after = counts(store)
            assert after["campaigns"] == 1 and after["runs"] == 1
            assert after["phases"] == before["phases"] // 3 and store.load_run(kept) is not None
            assert store.delete_campaign("gone") is False

    def test_text_and_numbers_databases_refuse(self, store_url: str) -> None:
        phase = sample_phase()
        phase = replace(phase, report=replace(phase.report, tps=math.nan))
        run = sample_run(phases=(phase,), server_log="a\x00b", error="bad \udcff byte")
        with open_store(store_url) as store:
            got = store.get_run(store.save_run(run))
        assert got.server_log == "a\ufffdb" and got.error == "bad ? byte"
        assert got.tps is None and got.phases[0].tps is None
        assert math.isnan(got.phases[0].report.tps)  # the JSON keeps what was measured

    def test_list_runs_of_10000_runs_is_one_query(
        self, store_url: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        n = 10_000
        with open_store(store_url) as store:
            with store._transaction():
                cid = store._lock_campaign("big")
                rows = [
                    (cid, f"p{i}/1", f"p{i}", 1, "v", f"v i={i}", "ok" if i % 10 else "failed",
                     float(i), float(i + 1), 0.0, float(i), "{}", "{}", "{}", "{}", "", "test")
                    for i in range(n)
                ]  # fmt: skip
                store._run_many(
                    "INSERT INTO runs (campaign_id, run_key, point_key, repeat, variant, label, "
                    "status, started_at, finished_at, stored_at, tps, spec_json, "
                    "fingerprint_json, metrics_json, timings_json, server_log, pglab_version) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows,
                )
            store.save_run(sample_run(campaign="small"))
            queries: list[str] = []
            real_run = BaseStore._run

            def counting(self: BaseStore, sql: str, params: Any = ()) -> Any:
                queries.append(sql)
                return real_run(self, sql, params)

            monkeypatch.setattr(BaseStore, "_run", counting)
            runs = store.list_runs("big")
            assert len(queries) == 1  # no query per run, whatever the number of runs
            assert len(runs) == n and runs[-1].tps == float(n - 1)
            assert len(store.list_runs()) == n + 1
            assert len(store.done_run_keys("big")) == n - n // 10
            (big,) = [c for c in store.list_campaigns() if c["name"] == "big"]
            assert (big["runs_ok"], big["runs_failed"], big["last_run_at"]) == (9000, 1000, n)
