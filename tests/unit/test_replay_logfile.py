"""The statement log read into sessions (``workloads/replay/logfile``), its classes and the workload
file's format (``workloads/replay/workload_file``), on a real PostgreSQL 18 log: pgbench's sessions
and one psql-like session with an error, a PREPARE/EXECUTE and an extended-protocol
statement (tests/data/replay/pg18-pgbench.log, written with the settings pglab capture sets)."""

from __future__ import annotations

import gzip
import json
import stat
from pathlib import Path

import pytest

from pglab.errors import WorkloadError
from pglab.workloads.replay import capture, logfile, workload_file
from pglab.workloads.replay.classes import class_of, kind_of

LOG = Path(__file__).parents[1] / "data" / "replay" / "pg18-pgbench.log"


def test_sessions_statements_errors_and_parameters() -> None:
    parsed = logfile.read(LOG.read_text())
    assert len(parsed.sessions) == 3
    init, bench, psql = parsed.sessions
    assert (bench.user, bench.database) == ("admin", "postgres")
    assert init.end is not None and bench.end is not None
    assert [e.text for e in init.entries][:1] == ["select count(*) from pgbench_branches"]
    assert all(e.t >= bench.start for e in bench.entries)
    failed = [e for e in psql.entries if e.error]
    assert [e.text for e in failed] == ["select * from nosuch"]
    assert 'relation "nosuch" does not exist' in (failed[0].error or "")
    extended = psql.entries[-1]
    assert extended.message.startswith("execute _pg3_0: ")
    assert extended.text == "select $1::int + 1"
    # PostgreSQL 18 says "Parameters:", pgreplay 1.2 reads "parameters:"
    assert extended.detail == "parameters: $1 = '5'"


def test_classes_take_constants_out() -> None:
    a = "UPDATE pgbench_accounts SET abalance = abalance + -4007 WHERE aid = 47;"
    b = "UPDATE pgbench_accounts SET abalance = abalance + 12 WHERE aid = 3"
    assert (
        class_of(a)
        == class_of(b)
        == ("UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?")
    )
    assert class_of("select * from t where x in (1, 2,3) and s = 'it''s'") == (
        "select * from t where x in (?) and s = ?"
    )
    assert class_of("select $1::int + 1") == "select ?::int + ?"
    assert kind_of("  (select 1)") == "SELECT" and kind_of("begin;") == "BEGIN"


def test_workload_file_written_0600_and_read_back(tmp_path: Path) -> None:
    workload = capture.from_log(LOG)
    s = workload.data["summary"]
    assert s["sessions"] == 3 and s["errors"] == 1
    assert s["statements"] == sum(s["by_kind"].values())
    assert s["by_kind"]["BEGIN"] >= s["by_kind"]["END"] > 0  # the sample ends mid-transaction
    assert s["busiest"][0]["count"] >= s["busiest"][-1]["count"]
    path = workload_file.write(workload, tmp_path / "w.json.gz").path
    assert path is not None and stat.S_IMODE(path.stat().st_mode) == 0o600
    back = workload_file.read(path)
    assert back.data == json.loads(json.dumps(workload.data))
    assert [len(s.entries) for s in back.sessions] == [
        len(s.entries) for s in logfile.read(LOG.read_text()).sessions
    ]


def test_a_newer_workload_file_is_refused(tmp_path: Path) -> None:
    data = dict(capture.from_log(LOG).data, version=workload_file.VERSION + 1, pglab="9.9")
    path = tmp_path / "newer.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    with pytest.raises(WorkloadError, match=r"format version 2 \(written by pglab 9.9\)"):
        workload_file.read(path)
    path.write_text("not gzip")
    with pytest.raises(WorkloadError, match="not a workload file"):
        workload_file.read(path)


def _rewritten(tmp_path: Path, words: dict[str, str], drop: tuple[str, ...]) -> Path:
    out = []
    for line in LOG.read_text().splitlines():
        if any(d in line for d in drop):
            continue
        for a, b in words.items():
            line = line.replace(a, b)
        out.append(line)
    path = tmp_path / "log"
    path.write_text("\n".join(out) + "\n")
    return path


GERMAN = {
    "LOG:  statement: ": "LOG:  Anweisung: ",
    "connection authorized: ": "Verbindung autorisiert: ",
    "disconnection: ": "Verbindungsende: ",
    "connection received": "Verbindung empfangen",
    "connection authenticated": "Verbindung authentifiziert",
    "LOG:  execute": "LOG:  führe aus",
}


@pytest.mark.parametrize(
    ("words", "drop", "said"),
    [
        ({"|": " "}, (), "starts with log_line_prefix"),  # another log_line_prefix
        ({}, ("connection authorized",), "log_connections was off"),
        ({}, ("LOG:  statement: ", "LOG:  execute"), "log_statement was not 'all'"),
        ({}, ("disconnection:",), "log_disconnections was off"),
        ({"ERROR:  ": "FEHLER:  "}, (), "not in English"),
        (GERMAN, ("ERROR",), "not in English"),
    ],
)
def test_a_log_without_what_a_replay_needs_is_refused(
    tmp_path: Path, words: dict[str, str], drop: tuple[str, ...], said: str
) -> None:
    with pytest.raises(WorkloadError, match=said):
        capture.from_log(_rewritten(tmp_path, words, drop))


def test_the_workload_written_back_is_what_pgreplay_parses(tmp_path: Path) -> None:
    """Real pgreplay (Debian's 1.2, parse only: ``-f``) reads the log made from a workload
    file: every statement, the extended-protocol one with its parameters."""
    import shutil
    import subprocess

    from pglab.workloads.replay import pgreplay

    workload = capture.from_log(LOG)
    log = tmp_path / "replay.log"
    log.write_text(pgreplay.log_for(workload))
    assert shutil.which("pgreplay"), "Debian's pgreplay (.ci/run installs it)"
    done = subprocess.run(["pgreplay", "-f", "-o", str(tmp_path / "r"), str(log)],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    total = workload.data["summary"]["statements"]
    assert f"Total SQL statements processed: {total}" in said
    assert "Named prepared SQL statements executions processed: 1" in said


def test_pgreplay_statistics_read() -> None:
    text = (LOG.parent / "pgreplay-1.2.0-replay.txt").read_text()
    from pglab.workloads.replay import pgreplay

    figures = pgreplay.statistics(text)
    assert figures["run_seconds"] == 11.822 and figures["statements"] == 12990
    assert figures["errors"] == 1 and figures["max_lag_seconds"] == 10
    assert figures["connections"] == 5 and figures["speed"] == 1.0
    longer = text.replace("11.822 seconds", "1 minute 4.125 seconds")
    assert pgreplay.statistics(longer)["run_seconds"] == 64.125


def test_replay_errors_read_from_a_target_s_log_and_divergence_said() -> None:
    """The target's log as pglab's servers write it (``%m [%p] ``): each ERROR with its
    STATEMENT, a multi-line one too, counted per class; the divergence against the capture's
    own failure (``select * from nosuch``) in both directions, and its mark."""
    from pglab.workloads.replay import engine

    log = (
        '2026-11-29 10:00:00.001 UTC [41] ERROR:  relation "nosuch" does not exist at '
        "character 15\n"
        "2026-11-29 10:00:00.001 UTC [41] STATEMENT:  select * from nosuch\n"
        '2026-11-29 10:00:00.002 UTC [42] ERROR:  relation "pgbench_history" does not exist\n'
        "2026-11-29 10:00:00.002 UTC [42] STATEMENT:  INSERT INTO pgbench_history VALUES (1,\n"
        "\t2)\n"
        '2026-11-29 10:00:00.003 UTC [42] ERROR:  relation "pgbench_history" does not exist\n'
        "2026-11-29 10:00:00.003 UTC [42] STATEMENT:  INSERT INTO pgbench_history VALUES (3, 4)\n"
        "2026-11-29 10:00:00.004 UTC [43] LOG:  checkpoint starting: time\n"
    )
    failed = engine.replay_errors(log)
    assert failed == {"select * from nosuch": 1, "INSERT INTO pgbench_history VALUES (?)": 2}
    workload = capture.from_log(LOG)
    d = engine.divergence(workload, failed)
    assert d.failed_in_replay_only == [
        {"statement": "INSERT INTO pgbench_history VALUES (?)", "count": 2}
    ]
    assert d.failed_in_capture_only == [] and d.count == 2
    assert d.marked == (2 / workload.data["summary"]["statements"] > 0.01)
    same = engine.divergence(workload, engine.replay_errors(log.split("[42]")[0]))
    assert same.count == 0 and "no divergence" in same.said()
    lost = engine.divergence(workload, engine.replay_errors(""), threshold=0.0)
    assert lost.failed_in_capture_only[0]["statement"] == "select * from nosuch"
    assert lost.marked and "only in the capture" in lost.said() and "not comparable" in lost.said()
