"""Per-script and per-statement results and failures, from recorded pgbench reports stored as a
run: the export's rows (every figure pgbench's own), the failures warning, and what `pglab show
RUN` prints of them (golden files at 80 and 100 columns, PGLAB_UPDATE_GOLDEN=1 rewrites them)."""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from pglab.analysis import run_warnings, scripts
from pglab.analysis.export import to_csv
from pglab.campaign.identity import phase_identity
from pglab.campaign.spec import PhaseSpec, Script
from pglab.cli import main, show_run
from pglab.pgbench.output import parse_report
from pglab.records import PhaseResult, RunResult
from pglab.rows import StoredRun
from pglab.store import open_store
from pglab.workloads.work import PgbenchWork

DATA = Path(__file__).resolve().parents[1] / "data"


def phase(name: str, recording: str, idx: int = 0) -> PhaseResult:
    text = (DATA / "pgbench" / f"{recording}.stdout").read_text()
    return PhaseResult(name=name, iteration=1, measured=True, started_at=1.8e9 + idx,
                       elapsed_s=3.0, argv=("pgbench",), report=parse_report(text),
                       output=text)  # fmt: skip


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[Path, StoredRun]:
    path = tmp_path_factory.mktemp("scripts") / "r.sqlite"
    serial = Script(path="/tmp/pgrec/serial.sql")
    mix = PhaseSpec(
        name="mix",
        work=PgbenchWork(
            scripts=(replace(serial, weight=1), Script(builtin="select-only", weight=3))
        ),
        clients=8,
        duration=3,
    )
    hot = replace(mix, name="hot").with_pgbench(scripts=(serial,))
    spec = {"phases": [phase_identity(mix), phase_identity(hot)]}
    run = RunResult(campaign="mix", run_key="k/1", point_key="k", repeat=1, variant="base",
                    label="base", spec=spec, status="ok", started_at=1.8e9, finished_at=1.8e9 + 9,
                    phases=(phase("mix", "pg18_multi_failures_detailed"),
                            phase("hot", "pg18_serial_per_command", 1)))  # fmt: skip
    with open_store(str(path)) as store:
        store.ensure_campaign("mix", {}, None)
        run_id = store.save_run(run)
        got = store.get_run(run_id)
    assert got is not None
    return path, got


def test_a_row_per_script_with_pgbench_s_figures(stored) -> None:
    _, run = stored
    table = scripts.scripts_table([run])
    rows = [dict(zip(table.columns, r, strict=True)) for r in table.rows]
    assert [(r["phase"], r["script_no"], r["script"]) for r in rows] == [
        ("mix", 1, "/tmp/pgrec/serial.sql"), ("mix", 2, "<builtin: select only>"),
        ("hot", 1, "/tmp/pgrec/serial.sql")]  # fmt: skip
    serial, select, hot = rows
    assert (serial["weight"], serial["target_pct"], serial["share_pct"], serial["tps"]) == (
        1, 25.0, 24.9, 2692.307564)  # fmt: skip
    assert (serial["transactions"], serial["failed"], serial["serialization_failures"],
            serial["deadlock_failures"], serial["retried"], serial["retries"]) == (
        8066, 5548, 5548, 0, 6613, 9325)  # fmt: skip
    assert (select["transactions"], select["tps"], select["latency_avg_ms"]) == (
        41051, 13702.196604, 0.150)  # fmt: skip
    # one script: the phase's own figures
    assert (hot["tps"], hot["transactions"], hot["failed"], hot["retries"], hot["share_pct"]) == (
        3161.989377, 9474, 3410, 22205, 100.0)  # fmt: skip
    assert serial["mix"] == "serial.sql@1+select-only@3" and serial["clients"] == 8
    # read back from CSV as written
    back = list(csv.DictReader(io.StringIO(to_csv(table))))
    assert float(back[0]["tps"]) == 2692.307564 and back[2]["serialization_failures"] == ""


def test_a_row_per_statement(stored) -> None:
    _, run = stored
    table = scripts.statements_table([run])
    rows = [dict(zip(table.columns, r, strict=True)) for r in table.rows]
    assert len(rows) == 6 + 2 + 6
    update = rows[4]
    assert (update["script_no"], update["statement_no"], update["latency_ms"],
            update["failures"], update["retries"]) == (1, 5, 0.135, 4542, 7020)  # fmt: skip
    assert update["command"].startswith("UPDATE pgbench_accounts")
    assert [r["latency_ms"] for r in rows if r["phase"] == "hot"] == [
        0.001, 0.000, 0.115, 0.149, 0.141, 0.102]  # fmt: skip


def test_failures_over_5_percent_are_warned(stored) -> None:
    _, run = stored
    found = [n for n in run_warnings.run_notices(run) if n.kind == "failures"]
    assert len(found) == 2
    assert "5,548 failed (10.1%: 5,548 serialization)" in found[0].message
    assert "6,613 retried (9,325 retries, max_tries 5)" in found[0].message
    assert "2,055 over the 1 ms latency limit" in found[0].message
    assert "3,410 failed (26.5%)" in found[1].message


def render(run: StoredRun, width: int, monkeypatch) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, highlight=False,
                      color_system=None)  # fmt: skip
    monkeypatch.setattr(show_run, "console", console)
    show_run.print_scripts(run)
    return console.export_text()


@pytest.mark.parametrize("width", [80, 100])
def test_show_prints_scripts_and_statements_slowest_first(stored, width, monkeypatch) -> None:
    _, run = stored
    text = render(run, width, monkeypatch)
    assert max(len(line) for line in text.splitlines()) <= width and "…" not in text
    assert "scripts of mix 1" in text and "2,692.3" in text and "13,702.2" in text
    assert "statements of mix 1 of script 1 serial.sql" in text
    assert "statements of hot 1" in text and "scripts of hot" not in text
    hot = text.split("statements of hot 1")[1]
    ms = [line.split("│")[1].strip() for line in hot.splitlines() if line.startswith("│")]
    assert [m for m in ms if m] == ["0.149", "0.141", "0.115", "0.102", "0.001", "0.000"]
    assert "failures of mix 1: 5,548 failed" in text
    golden = DATA / "golden" / f"show_scripts_{width}.txt"
    if os.environ.get("PGLAB_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text(), f"differs from {golden}: PGLAB_UPDATE_GOLDEN=1 rewrites it"


def test_export_by_script_and_statement_on_the_command_line(stored, tmp_path, capsys) -> None:
    path, _ = stored
    common = ["--lab-dir", str(tmp_path / "lab"), "--store", str(path)]
    assert main(["export", "mix", "--by", "script", *common]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run_id,campaign,variant,point,point_key,repeat,status,phase,")
    assert len(lines) == 1 + 3
    assert main(["export", "mix", "--by", "statement", "--format", "json", *common]) == 0
    assert capsys.readouterr().out.count('"statement_no"') == 14


def test_the_report_shows_scripts_statements_and_failures(stored, tmp_path) -> None:
    from pglab import report

    path, _ = stored
    with open_store(str(path)) as store:
        written = report.write(store, "mix", tmp_path / "r.html", tmp_path)
    page = written.html.read_text()
    scripts_table = page.split('<table class="scripts">')[1].split("</table>")[0]
    assert scripts_table.count("<tr>") == 1 + 2 + 1  # header, the mix's 2 scripts, hot's one
    assert "2,692.3" in scripts_table and "13,702.2" in scripts_table
    assert "&lt;builtin: select only&gt;" in scripts_table
    assert page.count('<table class="statements">') == 3
    first = page.split('<table class="statements">')[1].split("</table>")[0]
    ms = [float(x) for x in re.findall(r'<tr><td class="n">([0-9.]+)</td>', first)]
    assert ms == sorted(ms, reverse=True) and len(ms) == 6
    assert "failures of mix 1: 5,548 failed (10.1%: 5,548 serialization)" in page


def test_each_script_s_percentiles_are_those_of_its_own_transactions(tmp_path) -> None:
    """A per-transaction log of two scripts over two seconds (script 1: 1..100 ms, script 2:
    a steady 2 ms): each script's phase percentiles merge its seconds' histograms, stored
    and read back, and appear in the export (``latency_p95_ms``) and in ``pglab show``."""
    from pglab.pgbench.output import read_script_logs

    log = tmp_path / "pgbench_log.1"
    lines = [
        f"0 {i} {ms * 1000} 0 {1_800_000_000 + ms % 2} 0" for i, ms in enumerate(range(1, 101))
    ]
    lines += [f"1 {i} 2000 1 {1_800_000_000 + i % 2} 0" for i in range(50)]
    log.write_text("\n".join(lines) + "\n")
    seconds = read_script_logs([log])
    assert {s.script for s in seconds} == {"1", "2"} and all(s.histogram for s in seconds)
    base = phase("mix", "pg18_multi_failures_detailed")
    run = RunResult(campaign="p", run_key="k/1", point_key="k", repeat=1, variant="base",
                    label="base", spec={}, status="ok", started_at=1.8e9, finished_at=1.8e9 + 9,
                    phases=(replace(base, script_latency=seconds),))  # fmt: skip
    with open_store(str(tmp_path / "r.sqlite")) as store:
        store.ensure_campaign("p", {}, None)
        got = store.get_run(store.save_run(run))
    assert got is not None
    pcts = scripts.script_percentiles(got, got.phases[0])
    # nearest rank over 1..100 ms: p50 = 50, p95 = 95, p99 = 99, within a histogram bucket (3%)
    for q, want in ((50.0, 50.0), (95.0, 95.0), (99.0, 99.0)):
        assert pcts[1][q] == pytest.approx(want, rel=0.035)
    assert all(v == pytest.approx(2.0, rel=0.035) for v in pcts[2].values())
    rows = list(csv.DictReader(io.StringIO(to_csv(scripts.scripts_table([got])))))
    assert [round(float(r["latency_p95_ms"])) for r in rows] == [round(pcts[1][95.0]), 2]
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(show_run, "console", Console(file=out, width=160, color_system=None))
        show_run.print_scripts(got)
    header = next(line for line in out.getvalue().splitlines() if "lat avg ms" in line)
    assert "p50 ms" in header and "p95 ms" in header and "p99 ms" in header
