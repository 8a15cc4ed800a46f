"""The per-script sections and per-statement latencies of pgbench's report, against real
pgbench 15, 16, 17 and 18 output (tests/data/pgbench/README.md): every figure as printed."""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path

import pytest

from pglab.errors import PgbenchError
from pglab.pgbench.output import parse_report, read_script_logs, read_transaction_logs
from pglab.records import PgbenchReport, ScriptReport, StatementReport

DATA = Path(__file__).resolve().parents[1] / "data" / "pgbench"


def report(name: str) -> PgbenchReport:
    return parse_report((DATA / f"{name}.stdout").read_text())


SERIAL = (
    "\\set aid random(1, 4)",
    "\\set delta random(-100, 100)",
    "BEGIN ISOLATION LEVEL SERIALIZABLE;",
    "SELECT sum(abalance) FROM pgbench_accounts WHERE aid <= 4;",
    "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;",
    "END;",
)
SELECT = ("\\set aid random(1, 100000 * :scale)",
          "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;")  # fmt: skip


def statements(
    commands: tuple[str, ...], rows: list[tuple[float, int | None, int | None]]
) -> tuple[StatementReport, ...]:
    return tuple(
        StatementReport(i, lat, cmd, fail, retry)
        for i, (cmd, (lat, fail, retry)) in enumerate(zip(commands, rows, strict=True), 1)
    )


def test_pg15_scripts_with_detailed_failures_retries_and_statements() -> None:
    r = report("pg15_multi_failures_detailed")
    assert (r.serialization_failures, r.deadlock_failures, r.retried, r.retries) == (
        7464, 0, 7691, 8224)  # fmt: skip
    assert (r.latency_limit_ms, r.over_latency_limit, r.statements) == (1.0, 2164, ())
    assert r.scripts == (
        ScriptReport(
            number=1, name="/tmp/pgrec/serial.sql", weight=1, target_pct=25.0,
            transactions=6176, counted=6176, share_pct=12.9, tps=2055.509404, failed=7464,
            serialization_failures=7464, deadlock_failures=0, retried=7691, retries=8224,
            latency_avg_ms=0.819, latency_stddev_ms=0.524,
            statements=statements(SERIAL, [(0.000, 0, 0), (0.000, 0, 0), (0.141, 0, 0),
                                           (0.177, 0, 0), (0.182, 5891, 5901),
                                           (0.149, 1573, 2324)]),
        ),
        ScriptReport(
            number=2, name="<builtin: select only>", weight=3, target_pct=75.0,
            transactions=41733, counted=41733, share_pct=87.1, tps=13889.665474, failed=0,
            serialization_failures=0, deadlock_failures=0, retried=0, retries=0,
            latency_avg_ms=0.165, latency_stddev_ms=0.199,
            statements=statements(SELECT, [(0.000, 0, 0), (0.165, 0, 0)]),
        ),
    )  # fmt: skip


def test_pg18_counts_the_failed_in_the_share_and_prints_processed_apart() -> None:
    # 18: "13614 transactions (24.9% of total)" = 8066 processed + 5548 failed
    serial, select = report("pg18_multi_failures_detailed").scripts
    assert serial == ScriptReport(
        number=1, name="/tmp/pgrec/serial.sql", weight=1, target_pct=25.0,
        transactions=8066, counted=13614, share_pct=24.9, tps=2692.307564, failed=5548,
        serialization_failures=5548, deadlock_failures=0, retried=6613, retries=9325,
        latency_avg_ms=0.571, latency_stddev_ms=0.755,
        statements=statements(SERIAL, [(0.001, 0, 0), (0.000, 0, 0), (0.127, 0, 0),
                                       (0.164, 0, 0), (0.135, 4542, 7020), (0.095, 1006, 2306)]),
    )  # fmt: skip
    assert (select.transactions, select.counted, select.share_pct, select.tps) == (
        41051, 41051, 75.1, 13702.196604)  # fmt: skip


def test_pg16_scripts_without_per_statement_report() -> None:
    insert, select = report("pg16_multi_insert3_select1").scripts
    assert insert == ScriptReport(
        number=1, name="/tmp/pgrec/insert.sql", weight=3, target_pct=75.0,
        transactions=121633, counted=121633, share_pct=75.1, tps=40551.510951, failed=0,
        latency_avg_ms=0.071, latency_stddev_ms=0.190,
    )  # fmt: skip
    assert (select.name, select.weight, select.transactions, select.tps, select.statements) == (
        "<builtin: select only>", 1, 40311, 13439.378770, ())  # fmt: skip


@pytest.mark.parametrize(
    ("name", "skipped", "counted", "transactions"),
    [("pg18_multi_rate_R2000_L1", (122, 115), (2989, 2924), (2867, 2809)),
     ("pg15_multi_rate_R2000_L1", (74, 42), (3020, 2927), (3020, 2927))],
)  # fmt: skip
def test_skipped_per_script(name: str, skipped: tuple, counted: tuple, transactions: tuple) -> None:
    scripts = report(name).scripts
    assert tuple(s.skipped for s in scripts) == skipped
    assert tuple(s.counted for s in scripts) == counted
    assert tuple(s.transactions for s in scripts) == transactions


def test_pg15_statements_with_failures_and_no_retries() -> None:
    select, update = report("pg15_multi_select9_update1").scripts
    assert select.statements == statements(SELECT, [(0.001, 0, None), (0.203, 0, None)])
    assert [s.latency_ms for s in update.statements] == [
        0.001, 0.001, 0.000, 0.000, 0.151, 0.197, 0.222, 0.184, 0.171]  # fmt: skip
    assert update.statements[-1].command == "END;"


def test_one_script_statements_are_top_level() -> None:
    r = report("pg18_serial_per_command")
    assert r.scripts == ()
    assert r.statements == statements(SERIAL, [(0.001, 0, 0), (0.000, 0, 0), (0.115, 0, 0),
                                               (0.149, 0, 0), (0.141, 2745, 17466),
                                               (0.102, 665, 4748)])  # fmt: skip
    assert (r.failed, r.retried, r.retries, r.serialization_failures) == (3410, 7409, 22205, None)


MULTI = sorted(p.stem for p in DATA.glob("*_multi_*.stdout"))


@pytest.mark.parametrize("name", MULTI)
def test_every_figure_of_every_section_is_the_printed_one(name: str) -> None:
    text = (DATA / f"{name}.stdout").read_text()
    r = parse_report(text)
    sections = re.split(r"^SQL script \d+: ", text, flags=re.M)[1:]
    assert len(r.scripts) == len(sections) >= 2
    for script, section in zip(r.scripts, sections, strict=True):
        assert section.startswith(script.name + "\n")
        assert f"weight: {script.weight} (targets {script.target_pct:.1f}% of total)" in section
        assert f"{script.counted} transactions ({script.share_pct:.1f}% of total" in section
        assert f"tps = {script.tps:.6f})" in section
        assert f"latency average = {script.latency_avg_ms:.3f} ms" in section
        assert f"number of failed transactions: {script.failed} (" in section
        for key, label in [("serialization_failures", "number of serialization failures: "),
                           ("retried", "number of transactions retried: "),
                           ("retries", "total number of retries: "),
                           ("skipped", "number of transactions skipped: ")]:  # fmt: skip
            value = asdict(script)[key]
            assert (label in section) == (value is not None)
            if value is not None:
                assert f"{label}{value}" in section
        rows = [line for line in section.splitlines() if re.match(r"^ +\d+\.\d{3} ", line)]
        assert len(script.statements) == len(rows)
        for st, row in zip(script.statements, rows, strict=True):
            assert row.split()[0] == f"{st.latency_ms:.3f}"
            assert row.rstrip().endswith(st.command)


@pytest.mark.parametrize("name", [n for n in MULTI if "R2000" in n])
def test_one_thread_scripts_add_up_to_the_total(name: str) -> None:
    # -j 1: pgbench's per-script counts are exact (with several threads it adds them up without
    # a lock and can miss a few: README of the recordings)
    r = report(name)
    assert sum(s.transactions for s in r.scripts) == r.transactions
    assert sum(s.tps or 0 for s in r.scripts) == pytest.approx(r.tps, abs=2e-6)


def test_a_section_pglab_does_not_know_is_an_error() -> None:
    text = (DATA / "pg18_multi_select9_update1.stdout").read_text().replace(" - weight:", " - w:")
    with pytest.raises(PgbenchError, match="section of script 1"):
        parse_report(text)


def test_the_stored_form_reads_back() -> None:
    r = report("pg15_multi_failures_detailed")
    assert PgbenchReport.from_dict(asdict(r)) == r
    old = {k: v for k, v in asdict(r).items() if k not in ("scripts", "statements", "retries")}
    assert PgbenchReport.from_dict({**old, "a_newer_key": 1}).scripts == ()


# --- per script, second by second, from the per-transaction log ----------------------------


@pytest.mark.parametrize("name", ["pg15_multi_rate_log", "pg18_multi_rate_log"])
def test_script_seconds_add_up_to_each_script_and_the_log(name: str) -> None:
    paths = sorted((DATA / f"{name}.logs").iterdir())
    seconds = read_script_logs(paths)
    r = report(name)
    for s in r.scripts:  # one thread per file: pgbench's per-script counts exact here
        mine = [x for x in seconds if x.script == str(s.number)]
        assert sum(x.count for x in mine) == s.transactions
        assert len(mine) >= 3 and all(x.failed == 0 for x in mine)
    whole = read_transaction_logs(paths)
    for second in whole:  # the scripts of a second make up that second
        parts = [x for x in seconds if x.epoch == second.epoch]
        assert sum(x.count for x in parts) == second.count
        assert max(x.max_ms for x in parts) == second.max_ms


def test_script_second_percentiles_are_exact(tmp_path: Path) -> None:
    done = [(100, 0), (300, 0), (200, 0), (900, 1)]  # (latency µs, script_no)
    log = tmp_path / "pgbench_log.1"
    log.write_text("".join(f"0 {i} {lat} {no} 1795501899 {i}\n" for i, (lat, no) in enumerate(done))
                   + "1 9 serialization 1 1795501899 0 1\n")  # fmt: skip
    first, second = read_script_logs([log])
    assert (first.script, first.count, first.p50_ms, first.max_ms) == ("1", 3, 0.2, 0.3)
    assert first.mean_ms == pytest.approx(0.2)
    assert (second.script, second.count, second.failed, second.p99_ms) == ("2", 1, 1, 0.9)


def test_a_bad_log_line_is_named(tmp_path: Path) -> None:
    log = tmp_path / "pgbench_log.1"
    log.write_text("0 1 100 0 1795501899 1\n0 2 soon 0 x 1\n")
    with pytest.raises(PgbenchError, match=r"pgbench_log.1, line 2\): '0 2 soon 0 x 1"):
        read_script_logs([log])
