"""Campaigns end to end: real servers, real pgbench, the SQLite store, the CLI."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import lab_processes
from helpers.synthetic_runs import T0, _run

from pglab.analysis import tidy
from pglab.campaign import parse as campaign
from pglab.cli import main
from pglab.errors import SettingsError
from pglab.lab import Lab
from pglab.run import campaign_run
from pglab.run.executor import Executor
from pglab.store import open_store

pytestmark = pytest.mark.integration

SMALL = """
name = "{name}"
repeats = 2
[dataset]
scale = 1
[workload]
duration = 2
[matrix]
script = ["select-only", "tpcb-like"]
clients = [1, 2]
"""


def write(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def cli(*args: str, lab: Lab, store: Path) -> int:
    return main([*args, "--lab-dir", str(lab.home), "--store", str(store)])


def test_campaign_stores_what_pgbench_printed(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    store_path = tmp_path / "r.sqlite"
    path = write(tmp_path, SMALL.format(name="e2e"))
    assert cli("run", str(path), lab=lab, store=store_path) == 0
    # the suggested next commands name the lab and store this run used
    assert f"next: pglab --lab-dir {lab.home} --store {store_path} show e2e" in (
        capsys.readouterr().out
    )
    with open_store(str(store_path)) as store:
        runs = store.list_runs("e2e")
        assert len(runs) == 8 and all(r.status == "ok" for r in runs)
        for r in runs:
            run = store.get_run(r.id)
            (phase,) = run.phases
            printed = re.search(r"^tps = ([0-9.]+)", phase.output, re.M).group(1)
            assert phase.tps == pytest.approx(float(printed), abs=1e-6)
            assert r.tps == pytest.approx(float(printed), abs=1e-6)
            assert run.fingerprint["server_version"].startswith("18")
            assert run.fingerprint["pgdata_mount"]["fstype"]
            # pg_database_size of pgbench's database: scale 1 is ~15 MiB on disk
            assert 10 * 2**20 < run.fingerprint["database_bytes"] < 60 * 2**20
            assert "reset_s" in run.timings
            # the per-second series: progress lines, and the transaction log bucketed by second
            progress, latency = run.series["0"]["progress"], run.series["0"]["latency"]
            assert 1 <= len(progress["rows"]) <= 3
            count = latency["columns"].index("count")
            logged = sum(row[count] for row in latency["rows"])
            # a repeat of a point over 10,000 TPS logs a sample (pgbench/sampling.py)
            rate = tidy.sampling_rate(phase)
            assert rate is None or r.repeat > 1, phase.argv
            if rate is None:
                assert logged == phase.transactions
            else:
                assert 0.5 * rate * phase.transactions < logged < 1.5 * rate * phase.transactions
    capsys.readouterr()
    # running it again resumes: nothing to do, nothing stored twice
    assert cli("run", str(path), lab=lab, store=store_path) == 0
    with open_store(str(store_path)) as store:
        assert len(store.list_runs("e2e")) == 8
    capsys.readouterr()
    assert cli("ls", "--json", lab=lab, store=store_path) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == 8 and all(r["tps"] > 0 for r in listed)
    assert cli("export", "e2e", "--format", "csv", lab=lab, store=store_path) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 9 and "tps" in lines[0].split(",")
    assert cli("show", str(listed[0]["id"]), lab=lab, store=store_path) == 0
    assert "phases" in capsys.readouterr().out


def test_bad_settings_fail_before_any_run_naming_all(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    doc = (
        SMALL.format(name="bad")
        + """
[server.settings]
shared_buffer = "1GB"
checkpoint_timeout = "10s"
wal_sync_method = "opensync"
"""
    )
    with open_store(str(tmp_path / "r.sqlite")) as store, pytest.raises(SettingsError) as err:
        campaign_run.run_campaign(Executor(lab, store), campaign.load(write(tmp_path, doc)))
    msg = str(err.value)
    assert 'unknown setting "shared_buffer"' in msg and "shared_buffers" in msg
    assert "checkpoint_timeout" in msg and "30s" in msg
    assert "wal_sync_method" in msg and "fdatasync" in msg
    with open_store(str(tmp_path / "r.sqlite")) as store:
        assert store.list_runs() == []


def test_custom_script_with_syntax_error_is_named(tmp_path: Path, lab: Lab, capsys) -> None:
    (tmp_path / "broken.sql").write_text("\\set aid random(1, \nSELECT 1;\n")
    path = write(tmp_path, '[workload]\nscript = "broken.sql"\nduration = 1\n')
    assert cli("run", str(path), "--dry-run", lab=lab, store=tmp_path / "r.sqlite") == 2
    err = capsys.readouterr().err
    assert "broken.sql" in err and "error:" in err


def test_dry_run_names_every_kind_of_problem_at_once(tmp_path: Path, lab: Lab, capsys) -> None:
    """A misspelled setting and a broken script: both in one error, and no store is made."""
    (tmp_path / "broken.sql").write_text("\\set aid random(1, \nSELECT 1;\n")
    doc = '[workload]\nscript = "broken.sql"\nduration = 1\n[server.settings]\nwork_mem2 = "4MB"\n'
    store = tmp_path / "r.sqlite"
    assert cli("run", str(write(tmp_path, doc)), "--dry-run", lab=lab, store=store) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "2 kinds of problem" in err and "broken.sql" in err and "work_mem2" in err, err
    assert not store.exists()


def test_phases_and_decrease_ratio(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    doc = """
name = "phases"
[dataset]
scale = 1
reset = "never"
[workload]
clients = 2
transactions = 200
[[phases]]
name = "warm"
script = "select-only"
times = 2
measured = false
[[phases]]
name = "initial read"
script = "select-only"
[[phases]]
name = "write"
script = "tpcb-like"
times = 2
[[phases]]
name = "final read"
script = "select-only"
[[derived]]
name = "decrease_ratio"
a = "initial read"
b = "final read"
"""
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(write(tmp_path, doc)))
        assert out.ok == 1
        run = store.get_run(out.run_ids[0])
    names = [(p.name, p.iteration, p.measured) for p in run.phases]
    assert names == [
        ("warm", 1, False),
        ("warm", 2, False),
        ("initial read", 1, True),
        ("write", 1, True),
        ("write", 2, True),
        ("final read", 1, True),
    ]
    m = run.metrics
    expected = (m["phase.initial read.tps"] - m["phase.final read.tps"]) / m[
        "phase.initial read.tps"
    ]
    assert m["decrease_ratio"] == pytest.approx(expected)
    assert all(p.transactions == 400 for p in run.phases)


def _run_in_background(
    tmp_path: Path, lab: Lab, name: str, until_stored: int
) -> tuple[list[str], subprocess.Popen, Path]:
    """Start `pglab run` on SMALL as its own process; return once it has stored some runs."""
    store_path = tmp_path / "r.sqlite"
    # one repeat: four runs, enough to be killed in the middle of one with others still to do
    text = SMALL.format(name=name).replace("duration = 2", "duration = 3")
    path = write(tmp_path, text.replace("repeats = 2", "repeats = 1"))
    argv = [sys.executable, "-m", "pglab", "run", str(path), "--lab-dir", str(lab.home),
            "--store", str(store_path)]  # fmt: skip
    err_path = tmp_path / "first.stderr"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and stored < until_stored and proc.poll() is None:
        time.sleep(0.5)
        if store_path.exists():
            with open_store(str(store_path)) as store:
                stored = len(store.list_runs(name))
    assert stored >= until_stored, (
        err_path.read_text() if proc.poll() is not None else "no runs stored in time"
    )
    return argv, proc, err_path


def test_sigkill_mid_campaign_then_resume(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    """SIGKILL pglab during a campaign, run the same command again: every run stored once."""
    store_path = tmp_path / "r.sqlite"
    argv, proc, err_path = _run_in_background(tmp_path, lab, "killed", until_stored=2)
    time.sleep(1.5)  # into the middle of the next run
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with open_store(str(store_path)) as store:
        runs = store.list_runs("killed")
    assert len(runs) == 4 and all(r.status == "ok" for r in runs)
    assert len({(r.label, r.repeat) for r in runs}) == 4
    assert os.path.isdir(lab.home)


RESET_CHECK = """
name = "reset-{policy}"
repeats = 2
order = "sequential"
[dataset]
scale = 1
reset = "{policy}"
[workload]
clients = 1
transactions = 10
vacuum = false          # pgbench's vacuum would truncate pgbench_history before "check"
[[phases]]
name = "insert"
script = "insert-one.sql"
[[phases]]
name = "check"
script = "only-this-runs-rows.sql"
"""


@pytest.mark.parametrize("policy", ["run", "never"])
def test_reset_policy_decides_what_a_run_starts_from(
    tmp_path: Path, lab: Lab, no_leftovers, policy: str
) -> None:
    """Each run inserts 10 rows then checks the table holds exactly 10: true only after a reset.

    Without a reset the second run's check fails in pgbench, which is stored as a failed run
    carrying pgbench's own message.
    """
    (tmp_path / "insert-one.sql").write_text(
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 1, 1, now());\n"
    )
    (tmp_path / "only-this-runs-rows.sql").write_text(
        "SELECT 1 / (CASE WHEN count(*) = 10 THEN 1 ELSE 0 END) FROM pgbench_history;\n"
    )
    path = write(tmp_path, RESET_CHECK.format(policy=policy))
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(path))
        runs = [store.get_run(i) for i in out.run_ids]
    assert [r.repeat for r in runs] == [1, 2]
    assert runs[0].status == "ok" and "reset_s" in runs[0].timings
    if policy == "run":
        assert runs[1].status == "ok" and "reset_s" in runs[1].timings
    else:
        assert runs[1].status == "failed" and "reset_s" not in runs[1].timings
        assert "division by zero" in runs[1].error, runs[1].error
        assert "pgbench failed in phase 'check'" in runs[1].error
        assert runs[1].tps is None


def test_ctrl_c_stops_everything_and_the_same_command_resumes(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    store_path = tmp_path / "r.sqlite"
    argv, proc, err_path = _run_in_background(tmp_path, lab, "interrupted", until_stored=1)
    time.sleep(1.5)  # into the middle of the next run's pgbench
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert "interrupted" in err_path.read_text()
    time.sleep(0.5)
    left = [p.pid for p in lab_processes(lab.home) if p.status() != psutil.STATUS_ZOMBIE]
    assert not left, "Ctrl-C must stop every server and pgbench"
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with open_store(str(store_path)) as store:
        runs = store.list_runs("interrupted")
    assert len(runs) == 4 and all(r.status == "ok" for r in runs)


def test_an_installed_bindir_is_a_source_with_its_own_settings(
    tmp_path: Path, lab: Lab, no_leftovers, pg16_bindir: Path
) -> None:
    doc = f"""
name = "pg16"
[server]
bindir = "{pg16_bindir}"
[dataset]
scale = 1
[workload]
duration = 1
"""
    # io_method exists from PostgreSQL 18 on: version 16's own catalog must reject it
    bad = doc + '[server.settings]\nio_method = "worker"\n'
    with open_store(str(tmp_path / "r.sqlite")) as store, pytest.raises(SettingsError) as err:
        campaign_run.run_campaign(
            Executor(lab, store), campaign.load(write(tmp_path, bad, "bad.toml"))
        )
    assert 'unknown setting "io_method"' in str(err.value)
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(write(tmp_path, doc)))
        run = store.get_run(out.run_ids[0])
    assert run.status == "ok", run.error
    assert run.fingerprint["server_version"].startswith("16.")
    assert run.fingerprint["pgbench_version"].startswith("16.")
    assert run.phases[0].tps > 0


def test_latency_log_modes_as_a_matrix_axis(tmp_path: Path, lab: Lab, no_leftovers) -> None:
    doc = """
name = "latency-modes"
[dataset]
scale = 1
[workload]
duration = 2
[matrix]
latency_log = ["full", "aggregate", "off"]
"""
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(write(tmp_path, doc)))
        runs = {r.spec["axes"][0][1]: r for r in map(store.get_run, out.run_ids)}
    assert all(r.status == "ok" for r in runs.values())
    full = runs["full"].series["0"]["latency"]
    agg = runs["aggregate"].series["0"]["latency"]
    p50 = full["columns"].index("p50_ms")
    count = agg["columns"].index("count")
    assert all(row[p50] > 0 for row in full["rows"] if row[full["columns"].index("count")])
    assert agg["rows"] and all(row[p50] is None for row in agg["rows"])
    assert 0 < sum(row[count] for row in agg["rows"]) <= runs["aggregate"].phases[0].transactions
    assert "latency" not in runs["off"].series.get("0", {})
    assert "--aggregate-interval=1" in runs["aggregate"].phases[0].argv
    assert "-l" not in runs["off"].phases[0].argv


def test_progress_false_reads_each_second_from_the_aggregate_log(
    tmp_path: Path, lab: Lab, no_leftovers
) -> None:
    doc = """
name = "no-progress"
[dataset]
scale = 1
[workload]
duration = 3
latency_log = "aggregate"
[matrix]
progress = [true, false]
"""
    with open_store(str(tmp_path / "r.sqlite")) as store:
        out = campaign_run.run_campaign(Executor(lab, store), campaign.load(write(tmp_path, doc)))
        runs = {r.spec["axes"][0][1]: r for r in map(store.get_run, out.run_ids)}
    assert all(r.status == "ok" for r in runs.values())
    assert "-P" in runs[True].phases[0].argv and "-P" not in runs[False].phases[0].argv
    phase = runs[False].phases[0]
    printed = re.search(r"^tps = ([0-9.]+)", phase.output, re.M).group(1)
    assert phase.tps == pytest.approx(float(printed), abs=1e-6)  # the run's figure: pgbench's
    progress = runs[False].series["0"]["progress"]
    col = {c: i for i, c in enumerate(progress["columns"])}
    rows = progress["rows"]
    # the log's seconds but the first, partial one: 2 or 3 of a 3 s phase, a second apart
    assert 2 <= len(rows) <= 3, rows
    times = [row[col["t"]] for row in rows]
    assert all(b - a == pytest.approx(1.0) for a, b in zip(times, times[1:], strict=False))
    assert 0 < times[0] <= 2.5
    # each second's transactions, as the log counted them: no more than the phase made, and
    # each second near the phase's TPS (a whole second of it)
    assert sum(row[col["tps"]] for row in rows) <= phase.transactions
    assert all(0.25 * phase.tps < row[col["tps"]] < 2 * phase.tps for row in rows), rows
    assert all(row[col["latency_avg_ms"]] > 0 for row in rows)


def test_show_compares_variants_with_the_baseline(tmp_path: Path, lab: Lab, capsys) -> None:
    doc = """
name = "two-variants"
repeats = 2
[dataset]
scale = 1
[workload]
script = "select-only"
duration = 1
latency_log = "off"
[telemetry]
enabled = false
[variants."first [a]"]
[variants.second]
settings = { work_mem = "8MB" }
"""
    store = tmp_path / "r.sqlite"
    assert cli("run", str(write(tmp_path, doc)), lab=lab, store=store) == 0
    ran = " ".join(capsys.readouterr().out.split())  # rich wraps long lines
    assert "warning: 2 repeat(s) cannot resolve the 1 comparison(s) with the baseline" in ran
    assert "(noise 5.0%, assumed: no runs stored to measure it on)" in ran
    assert cli("show", "two-variants", lab=lab, store=store) == 0
    out = capsys.readouterr().out
    assert "Δ% vs first [a]" in out  # the name printed as written, not eaten as markup
    first = next(line for line in out.splitlines() if "first [a]" in line and "│" in line)
    second = next(line for line in out.splitlines() if "second" in line and "│" in line)
    assert "baseline" in first
    assert "differs" not in out  # only a setting was varied: nothing else to name
    verdict = re.search(r"[+-]\d+\.\d%(?: \[[^]]*\])? ([-+=~?])", second)
    assert verdict, second
    if verdict.group(1) == "?":  # why, and what would resolve it, is said under the table
        assert re.search(r"unresolved: second: no verdict \(\?\): 2 runs a side", out), out


def test_dry_run_noise_is_of_comparable_runs_only(tmp_path: Path, lab: Lab, capsys) -> None:
    """Issue 52: after a few 0.3 s TPC-H-like and 5 s TPC-C-like runs (noisy: about 21%),
    the first campaign's dry run said "noise 22.2% … more than 100 repeats would be needed:
    reduce the noise first". Its 10 s pgbench runs are like none of them: 5% is assumed, and
    it says why."""
    store = tmp_path / "r.sqlite"
    rng = random.Random(1)
    with open_store(str(store)) as s:
        for name, phase in (("tpch-quick", {"kit": "tpch", "mode": "power", "duration": None}),
                            ("tpcc-short", {"kit": "tpcc", "duration": 5})):  # fmt: skip
            s.ensure_campaign(name, {"name": name}, None)
            for rep, tps in enumerate((100.0, 130.0, 80.0, 120.0), start=1):
                run = _run(name, "base", "tpcb-like", 1, rep, tps, T0 + 10 * rep, 5, "ok", rng)
                spec = {**run.spec, "phases": [{**run.spec["phases"][0], **phase}]}
                s.save_run(dataclasses.replace(run, spec=spec))
    first = Path(__file__).parents[2] / "examples" / "first-campaign.toml"
    assert cli("run", str(first), "--dry-run", lab=lab, store=store) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "reduce the noise first" not in out, out
    said = ("(noise 5.0%, assumed: none of the 2 stored point(s) of 3 runs or more is like this "
            "plan's (pgbench tps, 10 s, embedded: the same kind and figure")  # fmt: skip
    assert said in out, out


def test_dry_run_says_when_the_repeats_cannot_reach_a_verdict(
    tmp_path: Path, lab: Lab, capsys
) -> None:
    """examples/settings-sweep.toml: 6 variants × 3 repeats, nothing measured before."""
    sweep = Path(__file__).parents[2] / "examples" / "settings-sweep.toml"
    assert cli("run", str(sweep), "--dry-run", lab=lab, store=tmp_path / "r.sqlite") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "warning: 3 repeat(s) cannot resolve the 5 comparison(s) with the baseline: a ±10% "
        "effect is found with probability 14% (noise 5.0%, assumed: no runs stored to measure "
        "it on); 9 repeats find it with 80%"
    ) in out
