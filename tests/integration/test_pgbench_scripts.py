"""Everything pgbench measures, kept: a real 3:1 weighted mix with -r and a SERIALIZABLE script
on a hot row with retries, run by pglab on PostgreSQL 18, stored, shown and exported."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from pglab.analysis import scripts, tidy
from pglab.cli import main
from pglab.lab import Lab
from pglab.store import open_store

pytestmark = pytest.mark.integration

CAMPAIGN = """
name = "mix"
[dataset]
scale = 1
[[phases]]
name = "mix"
scripts = [{file = "insert.sql", weight = 3}, {builtin = "select-only", weight = 1}]
clients = 4
threads = 1
duration = 3
report_per_command = true
[[phases]]
name = "hot"
script = "serial.sql"
clients = 8
threads = 2
duration = 3
max_tries = 5
failures_detailed = true
"""
INSERT = """\\set aid random(1, 100000 * :scale)
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, :aid, 0, now());
"""
# every client on one of two rows, SERIALIZABLE: serialization failures, retried
SERIAL = """\\set aid random(1, 2)
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT sum(abalance) FROM pgbench_accounts WHERE aid <= 2;
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = :aid;
END;
"""


def printed(output: str, pattern: str) -> int:
    found = re.search(pattern, output, re.M)
    assert found, pattern
    return int(found.group(1))


def test_scripts_statements_failures_and_retries_are_stored(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    (tmp_path / "insert.sql").write_text(INSERT)
    (tmp_path / "serial.sql").write_text(SERIAL)
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    store_path = tmp_path / "r.sqlite"
    common = ["--lab-dir", str(lab.home), "--store", str(store_path)]
    assert main(["run", str(tmp_path / "c.toml"), *common]) == 0
    with open_store(str(store_path)) as store:
        (row,) = store.list_runs("mix")
        run = store.get_run(row.id)
    assert run is not None and run.ok
    mix, hot = run.phases
    assert "-r" in mix.argv and "--max-tries=5" in hot.argv and "--failures-detailed" in hot.argv

    # the 3:1 mix: per-script TPS adds up to the phase's (one thread: pgbench's counts exact),
    # shares within 2 points of the weights, one latency per statement of each script
    insert, select = scripts.phase_scripts(mix)
    assert (insert.weight, select.weight) == (3, 1)
    assert insert.script.endswith("insert.sql") and select.script == "<builtin: select only>"
    assert abs((insert.tps or 0) + (select.tps or 0) - (mix.tps or 0)) <= 2e-6
    assert (insert.transactions or 0) + (select.transactions or 0) == mix.transactions
    assert abs((insert.share_pct or 0) - 75) <= 2 and abs((select.share_pct or 0) - 25) <= 2
    assert [s.command for s in insert.statements] == [
        line.strip() for line in INSERT.splitlines()]  # fmt: skip
    assert len(select.statements) == 2 and select.statements[1].command.startswith("SELECT")
    assert all(s.latency_ms >= 0 and s.failures == 0 for s in insert.statements)

    # second by second per script, from the per-transaction log's script_no: each script's
    # seconds add up to its transactions, and the scripts of a second to that second's
    per_second = run.series["0"]["script_latency"]
    cols = per_second["columns"]
    for s in (insert, select):
        mine = [r for r in per_second["rows"] if r[cols.index("script")] == str(s.number)]
        assert len(mine) >= 3 and sum(r[cols.index("count")] for r in mine) == s.transactions
    assert "script_latency" not in run.series["1"]  # one script: the phase's own series

    # the hot row: serialization failures and retries, pgbench's totals
    (serial,) = scripts.phase_scripts(hot)
    found = scripts.failures(hot)
    assert found is not None
    out = hot.output
    assert found.serialization == printed(out, r"^number of serialization failures: (\d+)")
    assert found.failed == printed(out, r"^number of failed transactions: (\d+)")
    assert found.retried == printed(out, r"^number of transactions retried: (\d+)")
    assert found.retries == printed(out, r"^total number of retries: (\d+)")
    assert found.deadlock == printed(out, r"^number of deadlock failures: (\d+)") == 0
    assert found.retries >= found.retried > 0 and found.max_tries == 5
    assert (serial.failed, serial.retries) == (found.failed, found.retries)
    seconds = run.series["1"]["latency"]  # the per-transaction log, by second and kind
    for col in ("serialization", "deadlock", "retried", "retries"):
        at = seconds["columns"].index(col)
        assert sum(r[at] for r in seconds["rows"]) == getattr(found, col), col
    progress = run.series["1"]["progress"]
    retried = progress["columns"].index("retried")
    assert all(r[retried] is not None for r in progress["rows"])

    # what a person sees, and the export's rows
    capsys.readouterr()
    assert main(["show", str(run.id), *common]) == 0
    shown = capsys.readouterr().out
    assert "scripts of mix 1" in shown and "statements of mix 1 of script 1 insert.sql" in shown
    assert f"failures of hot 1: {found.failed:,} failed" in shown
    assert main(["compare", str(run.id), str(run.id), *common]) == 0  # its scripts side by side
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "insert.sql" in ln)
    assert f"{insert.tps:,.1f}" in line and "+0.0%" in line
    assert main(["export", "mix", "--by", "script", *common]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["phase"], r["script_no"]) for r in rows] == [("mix", "1"), ("mix", "2"),
                                                            ("hot", "1")]  # fmt: skip
    assert float(rows[0]["tps"]) == insert.tps and int(rows[2]["retries"]) == found.retries
    assert main(["export", "mix", "--series", "script_latency", *common]) == 0
    long = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    counts = [r for r in long if r["metric"] == "count"]
    assert {r["label"] for r in counts} == {"1", "2"}
    assert sum(int(float(r["value"])) for r in counts) == mix.transactions


def test_a_seeded_run_with_a_sampled_log(tmp_path: Path, lab: Lab, no_leftovers, capsys) -> None:
    (tmp_path / "c.toml").write_text(
        'name = "sampled"\n[dataset]\nscale = 1\n[workload]\nscript = "select-only"\n'
        "clients = 2\nduration = 2\nrandom_seed = 7\nsampling_rate = 0.25\n"
    )
    common = ["--lab-dir", str(lab.home), "--store", str(tmp_path / "r.sqlite")]
    assert main(["run", str(tmp_path / "c.toml"), *common]) == 0
    with open_store(str(tmp_path / "r.sqlite")) as store:
        (row,) = store.list_runs("sampled")
        run = store.get_run(row.id)
    assert run is not None and run.ok
    (ph,) = run.phases
    assert "--random-seed=7" in ph.argv and "--sampling-rate=0.25" in ph.argv
    assert "random seed to 7" in ph.output  # pgbench says so on stderr
    seconds = run.series["0"]["latency"]
    logged = sum(r[seconds["columns"].index("count")] for r in seconds["rows"])
    assert 0.15 * (ph.transactions or 0) < logged < 0.35 * (ph.transactions or 0)
    capsys.readouterr()
    assert main(["show", str(run.id), *common]) == 0
    assert "its log kept a sample of 0.25 of the transactions" in capsys.readouterr().out


def test_the_log_is_sampled_once_the_point_s_rate_is_known(
    tmp_path: Path, lab: Lab, no_leftovers, capsys, monkeypatch
) -> None:
    """No ``sampling_rate``: the point's first run logs every transaction, the next ones a
    share that keeps the log near the budget at the TPS the point made (here a budget of 200
    lines a second, so that any machine's rate exceeds it), also in a later invocation, which
    reads the point's TPS from the store."""
    from pglab.pgbench import sampling

    monkeypatch.setattr(sampling, "LINE_BUDGET", 200.0)
    doc = ('name = "auto-sampled"\nrepeats = {n}\n[dataset]\nscale = 1\n[workload]\n'
           'script = "select-only"\nclients = 2\nduration = 2\n')  # fmt: skip
    (tmp_path / "c.toml").write_text(doc.format(n=2))
    common = ["--lab-dir", str(lab.home), "--store", str(tmp_path / "r.sqlite")]
    assert main(["run", str(tmp_path / "c.toml"), *common]) == 0
    (tmp_path / "c.toml").write_text(doc.format(n=3))
    assert main(["run", str(tmp_path / "c.toml"), *common]) == 0  # resumed: one more run
    with open_store(str(tmp_path / "r.sqlite")) as store:
        runs = [store.get_run(r.id) for r in store.list_runs("auto-sampled")]
    assert len(runs) == 3 and all(r is not None and r.ok for r in runs)
    first, *later = [r.phases[0] for r in runs if r is not None]
    assert not any(a.startswith("--sampling-rate") for a in first.argv)
    assert tidy.sampling_rate(first) is None
    for i, ph in enumerate(later):
        seen = max(r.metrics["tps"] for r in runs[: i + 1] if r is not None)
        assert tidy.sampling_rate(ph) == sampling.auto_rate(seen, 200.0), (ph.argv, seen)
        rows = runs[i + 1].series["0"]["latency"]  # type: ignore[union-attr]
        logged = sum(r[rows["columns"].index("count")] for r in rows["rows"])
        assert logged < 0.5 * (ph.transactions or 0) and 0.3 * 200 * 2 < logged < 3 * 200 * 2
    capsys.readouterr()
    assert main(["show", str(runs[1].id), *common]) == 0  # type: ignore[union-attr]
    out = capsys.readouterr().out
    assert "its log kept a sample of" in out and "with their 95% intervals: p50" in out
