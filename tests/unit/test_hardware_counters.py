"""Hardware counters (profile/counters.py): ``perf stat -x,``'s text as perf printed it on real
machines (``tests/data/perf/stat``, its README says where each came from) parsed into counts,
instructions per cycle equal to what perf itself derived; a machine that hides its counters
(this project's VM) judged so, and the evidence's figures and its "unavailable here" line made
from a run's counts or its fingerprint, never a figure made up."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pglab.analysis import evidence
from pglab.analysis.evidence_measures import run_measures
from pglab.fingerprints import Fingerprint
from pglab.profile import counters
from pglab.records import PgbenchReport
from pglab.rows import PhaseRow, StoredRun

DATA = Path(__file__).resolve().parents[1] / "data" / "perf" / "stat"


def _counts(name: str) -> dict[str, counters.Count]:
    return {c.event: c for c in counters.parse((DATA / name).read_text())}


def test_a_server_s_counts_and_perf_s_own_metrics_are_left_apart() -> None:
    found = _counts("spr.csv")
    assert list(found) == ["cpu-clock", "context-switches", "cpu-migrations", "page-faults",
                           "cycles", "instructions", "branches", "branch-misses"]  # fmt: skip
    assert found["cycles"] == counters.Count("cycles", 52288305.0, 100.0)
    assert found["cpu-clock"].value == 225851.20  # msec: its unit is perf's, not a count's
    ipc = found["instructions"].value / found["cycles"].value  # type: ignore[operator]
    assert round(ipc, 2) == 0.73  # perf's own "0.73 insn per cycle"


def test_a_metric_on_a_line_of_its_own_and_the_header_of_o_are_no_events() -> None:
    found = _counts("handbook.csv")
    assert "" not in found and len(found) == 10  # not ",,,,,0.04,stalled cycles per insn"
    ipc = found["instructions"].value / found["cycles"].value  # type: ignore[operator]
    assert round(ipc, 2) == 1.61
    written = _counts("handbook_o.csv")  # "# started on …", a blank line, then the events
    assert written == {
        "instructions": counters.Count("instructions", 425115750611.0, 100.0),
        "branch-misses": counters.Count("branch-misses", 2397300420.0, 100.0),
    }
    power = _counts("memcached.csv")
    assert power["energy-pkg"].value == 485.05  # power/energy-pkg/, in its Joules
    ipc = power["instructions"].value / power["cycles"].value  # type: ignore[operator]
    assert round(ipc, 2) == 0.31


def test_a_hybrid_cpu_s_kinds_of_core_are_added_up() -> None:
    found = _counts("hybrid.csv")
    assert found["cycles"].value == 8632400 + 3359282
    assert found["instructions"].value == 9222630 + 1256594
    assert not any("/" in e for e in found)
    assert counters.probe_of((DATA / "hybrid.csv").read_text()).countable


def test_a_virtual_machine_that_hides_its_counters_counts_nothing() -> None:
    for name in ("vm.csv", "vm_pid.csv"):
        found = _counts(name)
        assert set(found) == {"cycles", "instructions", "cache-misses"}, name
        assert all(c.value is None and c.why == "not supported" for c in found.values())
        assert counters.table(list(found.values()))["rows"] == []
    probe = counters.probe_of((DATA / "vm.csv").read_text())
    assert probe == counters.Probe(False, counters.NONE)
    assert counters.probe_of((DATA / "spr.csv").read_text()) == counters.Probe(
        True, counters.COUNTABLE
    )
    assert counters.probe_of("") == counters.Probe(False, "unknown")  # perf said nothing
    assert counters.unavailable(counters.NONE) == (
        "hardware counters (instructions per cycle, cache misses per transaction): unavailable "
        "here: perf stat cannot count cycles or instructions here (a virtual machine?)"
    )


def test_event_names_lose_their_modifiers_and_kind_of_core() -> None:
    text = "60000,,cycles:u,100,100.00,,\n120000,,instructions:u,100,100.00,,\n"
    assert {c.event: c.value for c in counters.parse(text)} == {
        "cycles": 60000.0,
        "instructions": 120000.0,
    }
    raw = counters.parse("5,,cpu/event=0x3c/,100,100.00,,\n")
    assert [c.event for c in raw] == ["cpu/event=0x3c/"]  # a raw event keeps its name


@pytest.mark.skipif(shutil.which("perf") is None, reason="no perf (linux-perf)")
def test_perf_stat_counts_a_running_process_until_sigint(tmp_path: Path) -> None:
    """The counting pglab starts beside a profiled phase, on a real process: perf stat by
    ``-p`` until SIGINT writes its counts (here the VM's "not supported"; on a machine with
    counters, counts) and leaves nothing running."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        out = tmp_path / "perf-x.stat"
        proc = counters.start(out, [child.pid])
        assert proc.poll() is None
        counted, why = counters.stop(proc, out)
        assert proc.returncode in (0, -signal.SIGINT, 130)
        found = counters.parse(out.read_text())
        assert {c.event for c in found} == set(counters.EVENTS), out.read_text()
        if counters.probe().countable:
            assert why is None and {c.event for c in counted} == set(counters.EVENTS)
        else:  # this project's VM: said, not counted
            assert counted == [] and why is not None and "not supported" in why
    finally:
        child.kill()
        child.wait()


def _run(run_id: int, tables: dict[str, Any], fp: Fingerprint, xacts: int = 1000) -> StoredRun:
    phase = PhaseRow(0, "main", 1, True, 0.0, 10.0, ["pgbench"], None, xacts, None, None, None,
                     None, PgbenchReport(tps=xacts / 10, transactions=xacts), "")  # fmt: skip
    return StoredRun(id=run_id, campaign="c", run_key=f"k/{run_id}", point_key="k",
                     repeat=run_id, variant="v", label="v", status="ok", started_at=0.0,
                     finished_at=1.0, tps=1.0, error=None, phases=(phase,),
                     series={"0": tables}, fingerprint=fp)  # fmt: skip


def _counted(cycles: float, instructions: float, misses: float) -> dict[str, Any]:
    counts = [counters.Count("cycles", cycles, 100.0),
              counters.Count("instructions", instructions, 100.0),
              counters.Count("cache-misses", misses, 100.0)]  # fmt: skip
    return {counters.TABLE: counters.table(counts)}


def test_counted_runs_give_instructions_per_cycle_and_misses_per_transaction() -> None:
    fp = Fingerprint(hardware_counters=counters.COUNTABLE)
    a = [_run(i, _counted(1e9, 1.6e9 + i * 1e7, 2e6 + i * 1e4), fp) for i in (1, 2, 3)]
    b = [_run(i, _counted(1e9, 0.8e9 + i * 1e7, 6e6 + i * 1e4), fp) for i in (1, 2, 3)]
    m = run_measures(a[0])
    assert m["ipc"] == pytest.approx(1.61) and m["cache_misses_xact"] == pytest.approx(2010)
    found = evidence.of_stored(a, b, paired=True)
    assert found.notes == ()  # counted: nothing to say of them
    by_key = {i.key: i for i in found}
    assert by_key["ipc"].delta == pytest.approx(-0.8)
    assert by_key["ipc"].text.startswith("instructions per cycle −0.80 [")
    assert "the server's CPU did less per cycle" in by_key["ipc"].text
    assert by_key["cache_misses_xact"].delta == pytest.approx(4000)


def _waited(run_id: int, count: int, fp: Fingerprint) -> StoredRun:
    columns = ["t", "wait_event_type", "wait_event", "count", "samples"]
    table = {"columns": columns, "rows": [[0.0, "IO", "WALSync", count, 10]]}
    return _run(run_id, {"waits": table}, fp)


def test_runs_profiled_where_nothing_counts_say_so_and_have_no_such_figure() -> None:
    vm = Fingerprint(hardware_counters=counters.NONE)
    a = [_waited(i, 7 + i, vm) for i in (1, 2, 3)]
    b = [_waited(i, 0, vm) for i in (1, 2, 3)]
    found = evidence.of_stored(a, b, paired=False)
    assert [i.key for i in found] == ["wait:IO:WALSync"]
    assert not {"ipc", "cache_misses_xact"} & set(run_measures(a[0]))
    assert found.notes == (counters.unavailable(counters.NONE),)
    # runs not profiled (no hardware_counters in their fingerprint): nothing said of counters
    unprofiled = [[_waited(r.id, c, Fingerprint()) for r, c in zip(side, n, strict=True)]
                  for side, n in ((a, (8, 9, 10)), (b, (0, 0, 0)))]  # fmt: skip
    assert evidence.of_stored(*unprofiled, paired=False).notes == ()


def test_show_and_the_report_say_it_under_a_significant_comparison_s_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Runs profiled on a machine whose CPU does not count (their fingerprint says so): ``pglab
    show`` and the report print the evidence of the significant comparison with the
    "unavailable here" line under its items (``compare``'s is checked on real runs)."""
    from helpers.synthetic_runs import fill

    from pglab import report
    from pglab.cli import main
    from pglab.store import open_store

    path = tmp_path / "r.sqlite"
    with open_store(str(path)) as store:
        fill(store, "vm", scripts=("select-only",), clients=(1,), repeats=4, seconds=5,
             effect=1.5, facts={"hardware_counters": counters.NONE})  # fmt: skip
        page = report.write(store, "vm", tmp_path / "r.html", tmp_path).html.read_text()
    note = counters.unavailable(counters.NONE)
    assert '<h2 id="evidence">Why it changed</h2>' in page and note in page
    assert main(["show", "vm", "--store", str(path)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "why it changed (" in shown and note in shown
