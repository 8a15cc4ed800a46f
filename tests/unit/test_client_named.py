"""The load generator is named as it is in what a person reads: a sysbench run's telemetry says
"sysbench 36% of a core", not pgbench (issue 52)."""

from __future__ import annotations

from pglab.records import PgbenchReport
from pglab.rows import PhaseRow
from pglab.telemetry import summary

FIGURES = {"cpu_user_pct": 51.0, "cpu_system_pct": 20.0, "cpu_iowait_pct": 3.0,
           "cpu_steal_pct": 0.0, "pgbench_cpu_pct": 96.0, "postgres_cpu_pct": 120.0,
           "client_bound": 1.0}  # fmt: skip


def _phase(*argv: str) -> PhaseRow:
    return PhaseRow(1, "main", 1, True, 0.0, 10.0, list(argv), 100.0, 1000, 0, 1.0, 0.1, 1.0,
                    PgbenchReport(tps=100.0, transactions=1000), "")  # fmt: skip


def test_the_client_is_the_program_its_command_names() -> None:
    assert _phase("/usr/bin/sysbench", "oltp_read_write", "run").client == "sysbench"
    assert _phase("/opt/pg/18/bin/pgbench", "-c", "4").client == "pgbench"
    assert _phase().client == "pgbench"  # a run stored without its command


def test_telemetry_lines_name_the_client() -> None:
    said = summary.lines({"figures": FIGURES, "top_waits": [], "notes": []}, "sysbench")
    (cpu,) = [line for line in said if line.startswith("CPU user")]
    assert cpu == ("CPU user 51% system 20% iowait 3% steal 0%; sysbench 96% of a core, "
                   "postgres 120% — CLIENT-BOUND: sysbench used most of a core")  # fmt: skip
    (plain,) = [s for s in summary.lines({"figures": FIGURES, "top_waits": [], "notes": []})
                if s.startswith("CPU user")]  # fmt: skip
    assert "; pgbench 96% of a core" in plain
