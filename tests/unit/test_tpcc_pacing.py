"""``pacing = "spec"`` and ``think_time`` of kit = "tpcc" (terminals that think, TPC-C clause
5.2.5): the keys checked, the paced scripts and the clients they make, the terminals' NOPM
bound, and the response times read from pgbench's stderr as recorded from pgbench 18 (its
threads' debug() prefixes interleaved with other lines)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.campaign_text import parsed, refused

from pglab.analysis import pacing as paced_notes
from pglab.campaign.identity import phase_identity
from pglab.campaign.shapes import SHAPES
from pglab.pgbench import output as pgbench_output
from pglab.pgbench.responses import Responses, percentile
from pglab.planning import client_files
from pglab.planning.plan import expand_points
from pglab.workloads.kits.work import pacing
from pglab.workloads.kits.work.kits import TPCC, script_stem

BASE = """
name = "k"
[dataset]
scale = 2
[workload]
kit = "tpcc"
"""


def test_pacing_makes_ten_terminals_per_warehouse_running_the_paced_scripts() -> None:
    points = expand_points(parsed(BASE + 'pacing = "spec"\n[matrix]\nscale = [1, 2]\n'))
    for pt, warehouses in zip(points, (1, 2), strict=True):
        (ph,) = pt.phases
        assert ph.clients == 10 * warehouses
        defines = dict(ph.pgbench.defines)
        assert defines["think_scale"] == "1" and defines["terminal_from"] == "0"
        assert [script_stem(str(s.path)) for s in ph.pgbench.scripts] == [s for s, _ in TPCC.mix]
        assert all(Path(str(s.path)).parent.name == "procedures-paced" for s in ph.pgbench.scripts)
        assert [s.weight for s in ph.pgbench.scripts] == [w for _, w in TPCC.mix]


def test_think_time_scales_the_times_and_is_part_of_the_point() -> None:
    text = BASE + 'pacing = "spec"\n[matrix]\nthink_time = ["0ms", "10ms", "1.2s"]\n'
    points = expand_points(parsed(text))
    scales = [dict(pt.phases[0].pgbench.defines)["think_scale"] for pt in points]
    assert scales == ["0", "0.000833333333", "0.1"]
    assert len({pt.point_key for pt in points}) == 3


def test_without_pacing_the_point_and_its_scripts_are_as_before() -> None:
    (pt,) = expand_points(parsed(BASE))
    (ph,) = pt.phases
    assert ph.pgbench.scripts == TPCC.scripts("procedures")
    ident = phase_identity(ph)
    assert "pacing" not in ident and "think_time" not in ident
    assert ph.clients == 1


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ('pacing = "spec"\nclients = 8\n', "clients with pacing"),
        ('pacing = "spec"\nrate = 10\n', "rate with pacing"),
        ('think_time = "10ms"\n', "this phase has no pacing"),
        ('pacing = "spec"\nthink_time = "1min"\n', "think_time"),
        ('pacing = "fast"\n', "pacing"),
        ('pacing = "spec"\n[matrix]\nclients = [10, 20]\n', "clients with pacing"),
    ],
)
def test_what_pacing_refuses(extra: str, said: str) -> None:
    assert said in refused(BASE + extra)


def test_pacing_is_tpccs_only() -> None:
    text = 'name = "k"\n[workload]\nkit = "ycsb"\npacing = "spec"\n'
    assert "runs no TPC-C" in refused(text)
    no_pacing = BASE + '[matrix]\nthink_time = ["10ms"]\n'
    assert "no phase has pacing" in refused(no_pacing)


def test_think_time_values() -> None:
    read = SHAPES["think_time"].read
    assert read is not None
    assert [read(v) for v in ("100ms", "12s", " 0.5 s ", 0, 2.5)] == [0.1, 12.0, 0.5, 0.0, 2.5]
    assert [read(v) for v in ("-1ms", "1min", "ms", True, -1)] == [None] * 5


def test_every_paced_script_has_its_home_warehouse_and_its_times() -> None:
    for mode in TPCC.modes:
        for s in pacing.scripts(mode):
            stem, text = script_stem(str(s.path)), Path(str(s.path)).read_text()
            assert pacing.HOME not in text and pacing.HOME_PACED in text, stem
            assert f"int({round(pacing.KEYING_S[stem] * 1e6)} * :think_scale)" in text
            assert f"* {round(pacing.THINK_S[stem] * 1e6)} * :think_scale)" in text
            assert f"SELECT {pacing.CODES[stem]} * {pacing.UNIT}" in text
            assert (pacing.DISTRICT_PACED in text) == (stem == "stock_level"), stem
            # keying, clock, transaction, clock, told, think: in that order
            order = ["pacing_keying_us us", "AS pacing_t0", "AS pacing_told", "debug(:pacing_told)",
                     "pacing_think_us us"]  # fmt: skip
            at = [text.index(w) for w in order]
            assert at == sorted(at), stem


def test_a_script_without_its_home_line_is_refused() -> None:
    with pytest.raises(ValueError, match="home"):
        pacing.wrapped("payment", "SELECT 1;\n")


def test_the_bound_is_the_specifications() -> None:
    # 10 terminals, 45% New-Orders, a mean cycle of 20.99 s (keying + think over the mix)
    assert pacing.mean_cycle_s() == pytest.approx(20.99, abs=0.001)
    per_warehouse = pacing.nopm_bound(1, None)
    assert per_warehouse is not None
    assert per_warehouse / 0.4455 * 0.45 == pytest.approx(pacing.SPEC_NOPM_PER_WAREHOUSE, abs=0.005)
    assert pacing.nopm_bound(2, 0.1) == pytest.approx(2 * 120 * per_warehouse)
    assert pacing.nopm_bound(2, 0.0) is None


# pgbench 18's stderr with two threads (recorded): a prefix of one transaction's debug() may
# stand before another's value, or before a progress line
STDERR = """\
debug(script=0,command=55): debug(script=2,command=15): int 3000000030064
int 1000000008071
debug(script=3,command=11): progress: 1.0 s, 96.0 tps, lat 80.187 ms stddev 50.023, 0 failed
int 4000000005431
int 2000000012000
int 6000000000250
pgbench: warning: something else
"""


def test_response_times_read_from_interleaved_debug_lines() -> None:
    told = Responses()
    left = told.strip_all(STDERR)
    assert left.splitlines()[-1] == "pgbench: warning: something else"
    sample = pgbench_output.parse_progress_line(left.splitlines()[0])
    assert sample is not None and sample.tps == 96.0
    assert told.by_type == {"payment": [30.064], "new_order": [8.071, 12.0],
                            "order_status": [5.431], "stock_level": [0.25]}  # fmt: skip
    table = told.table()
    rows = {r[0]: r for r in table["rows"]}
    assert rows["new_order"] == ["new_order", 2, 8.071, 12.0, 12.0, 5000.0]
    assert rows["delivery"] == ["delivery", 0, None, None, None, 5000.0]


def test_percentile_by_nearest_rank() -> None:
    values = list(range(1, 11))
    assert percentile(values, 90) == 9 and percentile(values, 50) == 5
    assert percentile(values, 100) == 10 and percentile([7.0], 90) == 7.0


def test_a_type_over_its_limit_is_a_warning_naming_it() -> None:
    metrics = {"rt90_new_order_ms": 6200.0, "rt90_payment_ms": 40.0}
    ((kind, text),) = paced_notes.warnings(metrics)
    assert kind == "response-time" and "New-Order 6,200 ms (at most 5,000)" in text
    assert "Payment" not in text
    assert paced_notes.warnings({"rt90_payment_ms": 4999.0}) == []


def test_clients_pgbench_could_not_open_are_said_before_anything_runs() -> None:
    points = expand_points(parsed(BASE + 'pacing = "spec"\n[matrix]\nscale = [1, 100]\n'))
    assert client_files.problems(points, 1002) == [
        "scale=100: 1000 clients: pgbench needs 1003 open files, and may have 1002"
    ]
    assert client_files.problems(points, 1003) == []
    raised = parsed(BASE + 'pacing = "spec"\n[os]\nlimits = { nofile = 4096 }\n'
                    "[matrix]\nscale = [1000]\n")  # fmt: skip
    (said,) = client_files.problems(expand_points(raised), 1024)
    assert "10000 clients: pgbench needs 10003 open files, and may have 4096" in said


def test_a_debug_prefix_in_the_middle_of_a_line_is_stripped() -> None:
    """A thread's prefix written into another's progress line (seen once in CI: the phase's
    output kept a ``debug(`` line)."""
    told = Responses()
    left = told.strip_all(
        "progress: 2.0 s, 90.0 tps, lat 1.0 ms stddev 0.1, debug(script=1,command=4): 0 failed\n"
        "int 2000000012000\n"
    )
    assert "debug(" not in left and left.startswith("progress: 2.0 s, 90.0 tps")
    assert told.by_type == {"new_order": [12.0]}
