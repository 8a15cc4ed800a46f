"""pgbench_output against real pgbench 15, 16, 17 and 18 output (tests/data/pgbench/README.md)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from pglab.errors import PgbenchError
from pglab.pgbench import latency as latency_hist
from pglab.pgbench.output import (
    parse_aggregate_log,
    parse_progress,
    parse_progress_line,
    parse_report,
    parse_transaction_log,
    read_aggregate_logs,
    read_transaction_logs,
)
from pglab.records import LatencySecond, PgbenchReport, ProgressSample

DATA = Path(__file__).resolve().parents[1] / "data" / "pgbench"
VERSIONS = ("pg15", "pg16", "pg17", "pg18")


def stdout(name: str) -> str:
    return (DATA / f"{name}.stdout").read_text()


def stderr(name: str) -> str:
    return (DATA / f"{name}.stderr").read_text()


def logs(name: str) -> list[Path]:
    return sorted((DATA / f"{name}.logs").iterdir())


# (recording, the "tps =" figure, "number of transactions actually processed"), read off the files
TPS = [
    ("pg15_aborted", 4428.948360, 47),
    ("pg15_aggregate", 4777.320395, 14313),
    ("pg15_client_server18", 3596.513370, 7181),
    ("pg15_connect_C", 150.398456, 452),
    ("pg15_multi_select9_update1", 13981.189881, 41811),
    ("pg15_rate_R20000_L1", 2240.768302, 6715),
    ("pg15_rate_R200_L5", 203.535755, 607),
    ("pg15_rate_R300", 303.051239, 908),
    ("pg15_rate_skipped_log", 986.892505, 1971),
    ("pg15_select_log", 11906.533710, 400),
    ("pg15_serial_failures", 1281.037514, 3846),
    ("pg15_serial_failures_log", 1380.837996, 96),
    ("pg15_serial_failures_plain", 1357.576497, 89),
    ("pg15_tpcb_T5_c4", 2425.884812, 12110),
    ("pg15_tpcb_t500_c2", 2296.543472, 1000),
    ("pg16_aborted", 2381.897578, 6),
    ("pg16_connect_C", 276.274449, 830),
    ("pg16_multi_select9_update1", 15900.679016, 47626),
    ("pg16_rate_R20000_L1", 2421.837003, 7265),
    ("pg16_rate_R200_L5", 198.464826, 593),
    ("pg16_rate_R300", 292.209982, 875),
    ("pg16_rate_skipped_log", 1003.810075, 2006),
    ("pg16_select_log", 18242.349615, 400),
    ("pg16_serial_failures", 1362.893697, 4074),
    ("pg16_serial_failures_log", 1578.626000, 106),
    ("pg16_serial_failures_plain", 1749.516360, 104),
    ("pg16_tpcb_T5_c4", 2227.755052, 11138),
    ("pg16_tpcb_t500_c2", 2413.558406, 1000),
    ("pg17_aborted", 4803.967147, 31),
    ("pg17_connect_C", 285.362755, 857),
    ("pg17_multi_select9_update1", 15649.960731, 46867),
    ("pg17_rate_R20000_L1", 3469.267461, 10400),
    ("pg17_rate_R200_L5", 200.385542, 600),
    ("pg17_rate_R300", 304.753385, 913),
    ("pg17_rate_skipped_log", 1029.997101, 2057),
    ("pg17_select_log", 11756.407242, 400),
    ("pg17_serial_failures", 1280.718998, 3823),
    ("pg17_serial_failures_log", 1642.944029, 104),
    ("pg17_serial_failures_plain", 1574.617751, 107),
    ("pg17_tpcb_T5_c4", 3916.724691, 19536),
    ("pg17_tpcb_t500_c2", 4273.778234, 1000),
    ("pg18_aborted", 8512.241055, 113),
    ("pg18_aggregate", 5066.395302, 15185),
    ("pg18_client_server16", 3644.663568, 7283),
    ("pg18_connect_C", 390.242343, 1172),
    ("pg18_multi_select9_update1", 20580.043378, 61705),
    ("pg18_rate_R20000_L1", 3585.122891, 10743),
    ("pg18_rate_R200_L5", 183.390898, 546),
    ("pg18_rate_R300", 280.000801, 839),
    ("pg18_rate_skipped_log", 967.966909, 1932),
    ("pg18_select_log", 24723.406885, 400),
    ("pg18_serial_failures", 1459.661405, 4370),
    ("pg18_serial_failures_log", 1515.451011, 92),
    ("pg18_serial_failures_plain", 1630.005269, 99),
    ("pg18_tpcb_T5_c4", 2235.194414, 11167),
    ("pg18_tpcb_t500_c2", 2709.160756, 1000),
    ("pg15_multi_failures_detailed", 15945.174878, 47909),
    ("pg15_multi_insert3_select1", 50044.236246, 149840),
    ("pg15_multi_rate_log", 301.317790, 903),
    ("pg15_multi_rate_R2000_L1", 1982.799952, 5947),
    ("pg15_serial_per_command", 2101.883083, 6297),
    ("pg16_multi_failures_detailed", 17083.683628, 51208),
    ("pg16_multi_insert3_select1", 54010.226477, 162002),
    ("pg16_multi_rate_R2000_L1", 1983.360182, 5948),
    ("pg16_serial_per_command", 3332.928592, 9964),
    ("pg18_multi_failures_detailed", 16395.839307, 49121),
    ("pg18_multi_insert3_select1", 66353.807156, 198967),
    ("pg18_multi_rate_log", 298.796592, 894),
    ("pg18_multi_rate_R2000_L1", 1894.769521, 5676),
    ("pg18_serial_per_command", 3161.989377, 9474),
]


def test_every_recording_with_a_report_is_in_the_table() -> None:
    with_report = {p.stem for p in DATA.glob("*.stdout") if "\ntps = " in p.read_text()}
    assert with_report == {name for name, _, _ in TPS}


@pytest.mark.parametrize(("name", "tps", "transactions"), TPS, ids=[t[0] for t in TPS])
def test_tps_and_transactions_of_every_recording(name: str, tps: float, transactions: int) -> None:
    report = parse_report(stdout(name))
    assert report.tps == tps
    assert report.transactions == transactions


# --- whole reports, one of each kind -------------------------------------------------------------


def test_duration_run_pg18() -> None:
    assert parse_report(stdout("pg18_tpcb_T5_c4")) == PgbenchReport(
        tps=2235.194414,
        transactions=11167,
        failed=0,
        latency_avg_ms=1.786,
        latency_stddev_ms=1.167,
        initial_connection_ms=8.736,
        transaction_type="<builtin: TPC-B (sort of)>",
        scaling_factor=1,
        query_mode="simple",
        clients=4,
        threads=2,
        duration_s=5.0,
        max_tries=1,
        pgbench_version="18.6",
    )


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("pg15", (2425.884812, 12110, 1.645, 1.331, 15.823, "15.18 (Debian 15.18-0+deb12u1)")),
        ("pg16", (2227.755052, 11138, 1.790, 0.999, 8.075, "16.2")),
        ("pg17", (3916.724691, 19536, 1.013, 0.583, 14.969, "17.10")),
        ("pg18", (2235.194414, 11167, 1.786, 1.167, 8.736, "18.6")),
    ],
)
def test_duration_run_every_version(version: str, expected: tuple[object, ...]) -> None:
    report = parse_report(stdout(f"{version}_tpcb_T5_c4"))
    tps, transactions, lat, stddev, conn, pgbench_version = expected
    assert (report.tps, report.transactions, report.failed) == (tps, transactions, 0)
    assert (report.latency_avg_ms, report.latency_stddev_ms) == (lat, stddev)
    assert report.initial_connection_ms == conn
    assert report.pgbench_version == pgbench_version
    assert (report.clients, report.threads, report.duration_s, report.max_tries) == (4, 2, 5.0, 1)
    assert (report.retried, report.skipped, report.rate_lag_avg_ms) == (None, None, None)


@pytest.mark.parametrize("version", VERSIONS)
def test_transaction_count_run_has_no_duration(version: str) -> None:
    report = parse_report(stdout(f"{version}_tpcb_t500_c2"))
    assert report.transactions == 1000  # printed as "1000/1000"
    assert report.duration_s is None
    assert (report.clients, report.threads) == (2, 2)


def test_transaction_count_run_pg16() -> None:
    assert parse_report(stdout("pg16_tpcb_t500_c2")) == PgbenchReport(
        tps=2413.558406,
        transactions=1000,
        failed=0,
        latency_avg_ms=0.826,
        latency_stddev_ms=0.489,
        initial_connection_ms=3.553,
        transaction_type="<builtin: TPC-B (sort of)>",
        scaling_factor=1,
        query_mode="simple",
        clients=2,
        threads=2,
        max_tries=1,
        pgbench_version="16.2",
    )


def test_rate_with_latency_limit_reports_skipped_and_lag() -> None:
    assert parse_report(stdout("pg17_rate_R20000_L1")) == PgbenchReport(
        tps=3469.267461,
        transactions=10400,
        failed=0,
        latency_avg_ms=1.525,
        latency_stddev_ms=0.135,
        initial_connection_ms=3.652,
        transaction_type="<builtin: TPC-B (sort of)>",
        scaling_factor=1,
        query_mode="simple",
        clients=2,
        threads=1,
        duration_s=3.0,
        max_tries=1,
        skipped=49270,
        rate_lag_avg_ms=0.949,
        pgbench_version="17.10",
        latency_limit_ms=1.0,
        over_latency_limit=10400,
    )


@pytest.mark.parametrize(
    ("name", "skipped", "lag"),
    [
        ("pg15_rate_R200_L5", 0, 0.145),
        ("pg15_rate_R20000_L1", 53353, 0.949),
        ("pg16_rate_R20000_L1", 52722, 0.950),
        ("pg18_rate_R20000_L1", 49458, 0.950),
        ("pg18_rate_skipped_log", 19, 0.176),
        ("pg15_rate_R300", None, 0.071),  # no -L: no "skipped" line at all
        ("pg18_rate_R300", None, 0.072),
    ],
)
def test_rate_runs(name: str, skipped: int | None, lag: float) -> None:
    report = parse_report(stdout(name))
    assert (report.skipped, report.rate_lag_avg_ms) == (skipped, lag)


@pytest.mark.parametrize(
    ("version", "tps", "transactions"),
    [
        ("pg15", 150.398456, 452),
        ("pg16", 276.274449, 830),
        ("pg17", 285.362755, 857),
        ("pg18", 390.242343, 1172),
    ],
)
def test_connect_per_transaction(version: str, tps: float, transactions: int) -> None:
    # -C prints "average connection time = X ms" and "tps = X (including reconnection times)"
    report = parse_report(stdout(f"{version}_connect_C"))
    assert (report.tps, report.transactions, report.failed) == (tps, transactions, 0)
    assert report.initial_connection_ms is None


@pytest.mark.parametrize(
    ("version", "tps", "transactions", "lat", "stddev"),
    [
        ("pg15", 13981.189881, 41811, 0.276, 0.557),
        ("pg16", 15900.679016, 47626, 0.241, 0.387),
        ("pg17", 15649.960731, 46867, 0.246, 0.503),
        ("pg18", 20580.043378, 61705, 0.180, 0.208),
    ],
)
def test_multiple_scripts_take_the_totals_not_a_script_section(
    version: str, tps: float, transactions: int, lat: float, stddev: float
) -> None:
    report = parse_report(stdout(f"{version}_multi_select9_update1"))
    assert report.transaction_type == "multiple scripts"
    assert (report.tps, report.transactions) == (tps, transactions)
    assert (report.latency_avg_ms, report.latency_stddev_ms, report.failed) == (lat, stddev, 0)


def test_serialization_failures_with_retries() -> None:
    assert parse_report(stdout("pg18_serial_failures")) == PgbenchReport(
        tps=1459.661405,
        transactions=4370,
        failed=7879,
        latency_avg_ms=1.454,
        latency_stddev_ms=0.607,
        initial_connection_ms=10.361,
        transaction_type="/tmp/pgrec/serial.sql",
        scaling_factor=1,
        query_mode="simple",
        clients=8,
        threads=2,
        duration_s=3.0,
        max_tries=2,
        retried=9969,
        pgbench_version="18.6",
        serialization_failures=7879,
        deadlock_failures=0,
        retries=9969,
    )


@pytest.mark.parametrize(
    ("name", "failed", "retried", "max_tries"),
    [
        ("pg15_serial_failures", 4870, 6084, 2),
        ("pg16_serial_failures", 5643, 7298, 2),
        ("pg17_serial_failures", 5290, 6766, 2),
        ("pg15_serial_failures_plain", 311, None, 1),
        ("pg16_serial_failures_plain", 296, None, 1),
        ("pg17_serial_failures_plain", 293, None, 1),
        ("pg18_serial_failures_plain", 301, None, 1),
    ],
)
def test_failures(name: str, failed: int, retried: int | None, max_tries: int) -> None:
    report = parse_report(stdout(name))
    assert (report.failed, report.retried, report.max_tries) == (failed, retried, max_tries)


def test_latency_average_including_failures_without_stddev() -> None:
    # no -P/-R/-L: "latency average = 2.024 ms (including failures)" and no stddev line
    report = parse_report(stdout("pg18_serial_failures_log"))
    assert (report.latency_avg_ms, report.latency_stddev_ms) == (2.024, None)
    assert (report.failed, report.retried) == (148, 184)


def test_aborted_run_still_has_its_report() -> None:
    # pgbench exits 2 and says "Run was aborted; the above results are incomplete." on stderr
    report = parse_report(stdout("pg18_aborted"))
    assert (report.tps, report.transactions, report.failed) == (8512.241055, 113, 0)
    assert "Run was aborted" in stderr("pg18_aborted")


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("pg18_client_server16", "18.6"),  # "pgbench (18.6, server 16.2)"
        ("pg15_client_server18", "15.18 (Debian 15.18-0+deb12u1)"),
    ],
)
def test_version_header_against_another_server_version(name: str, version: str) -> None:
    assert parse_report(stdout(name)).pgbench_version == version


def test_no_version_header_is_none() -> None:
    text = stdout("pg18_tpcb_T5_c4").split("\n", 1)[1]
    assert parse_report(text).pgbench_version is None


@pytest.mark.parametrize("name", ["pg18_no_database", "pg18_no_tables"])
def test_no_tps_line_raises_with_the_output(name: str) -> None:
    with pytest.raises(PgbenchError, match="printed no 'tps =' line") as caught:
        parse_report(stdout(name))
    assert (stdout(name).strip() or "(nothing)") in str(caught.value)


def test_tps_without_transactions_line_raises() -> None:
    with pytest.raises(PgbenchError, match="number of transactions actually processed"):
        parse_report("tps = 12.5 (without initial connection time)\n")


# --- progress lines ------------------------------------------------------------------------------


def test_progress_of_a_duration_run() -> None:
    assert parse_progress(stderr("pg18_tpcb_T5_c4")) == (
        ProgressSample(1.0, 2094.8, 1.889, 1.117, 0),
        ProgressSample(2.0, 2184.2, 1.830, 1.046, 0),
        ProgressSample(3.0, 2236.0, 1.783, 1.032, 0),
        ProgressSample(4.0, 2176.9, 1.836, 1.150, 0),
        ProgressSample(5.0, 2471.2, 1.612, 1.385, 0),
    )


@pytest.mark.parametrize("path", sorted(DATA.glob("*.stderr")), ids=lambda p: p.stem)
def test_every_progress_line_of_every_recording_parses(path: Path) -> None:
    lines = path.read_text().splitlines()
    progress = [line for line in lines if line.startswith("progress: ")]
    samples = parse_progress(path.read_text())
    assert len(samples) == len(progress)
    assert all(s.failed is not None and s.latency_avg_ms is not None for s in samples)


@pytest.mark.parametrize(
    ("line", "sample"),
    [
        (  # pg15_rate_R20000_L1: --rate with --latency-limit
            "progress: 2.0 s, 2196.1 tps, lat 1.856 ms stddev 0.476, 0 failed, lag 0.949 ms,"
            " 17837 skipped",
            ProgressSample(2.0, 2196.1, 1.856, 0.476, 0, 0.949, 17837),
        ),
        (  # pg18_rate_R300: --rate alone
            "progress: 1.0 s, 265.0 tps, lat 0.580 ms stddev 0.128, 0 failed, lag 0.071 ms",
            ProgressSample(1.0, 265.0, 0.580, 0.128, 0, 0.071),
        ),
        (  # pg18_serial_failures: --max-tries=2
            "progress: 1.0 s, 1479.4 tps, lat 1.446 ms stddev 0.611, 2604 failed, 3328 retried,"
            " 3328 retries",
            ProgressSample(1.0, 1479.4, 1.446, 0.611, 2604, retried=3328, retries=3328),
        ),
        (  # pgbench 14 and before had no "failed" (format from its source, not recorded)
            "progress: 3.0 s, 1234.5 tps, lat 0.812 ms stddev 0.123",
            ProgressSample(3.0, 1234.5, 0.812, 0.123),
        ),
        (  # pgbench 14 and before, --rate with --latency-limit (from its source, not recorded)
            "progress: 3.0 s, 99.0 tps, lat 0.812 ms stddev 0.123, lag 0.050 ms, 3 skipped\n",
            ProgressSample(3.0, 99.0, 0.812, 0.123, None, 0.050, 3),
        ),
    ],
)
def test_progress_line_forms(line: str, sample: ProgressSample) -> None:
    assert parse_progress_line(line) == sample


def test_the_line_forms_are_recorded_ones() -> None:
    assert parse_progress(stderr("pg15_rate_R20000_L1"))[1] == ProgressSample(
        2.0, 2196.1, 1.856, 0.476, 0, 0.949, 17837
    )
    assert parse_progress(stderr("pg18_rate_R300"))[0] == ProgressSample(
        1.0, 265.0, 0.580, 0.128, 0, 0.071
    )
    assert parse_progress(stderr("pg18_serial_failures"))[0] == ProgressSample(
        1.0, 1479.4, 1.446, 0.611, 2604, retried=3328, retries=3328
    )


@pytest.mark.parametrize(
    "line",
    [
        "starting vacuum...end.",
        "pgbench: error: client 0 script 0 aborted in command 2 query 0: ERROR:  division by zero",
        "pgbench: error: Run was aborted; the above results are incomplete.",
        "",
        "progress: soon",
    ],
)
def test_other_stderr_lines_are_not_progress(line: str) -> None:
    assert parse_progress_line(line) is None


# --- per-transaction logs ------------------------------------------------------------------------

# (recording, completed transactions, their latencies' sum and max in µs, failed), read off the logs
LOGS = [
    ("pg15_multi_rate_log", 903, 197440, 3491, 0),
    ("pg15_rate_R200_L5", 607, 545836, 4292, 0),
    ("pg15_rate_skipped_log", 1971, 1150962, 1737, 0),
    ("pg15_select_log", 400, 51786, 4255, 0),
    ("pg15_serial_failures_log", 96, 133784, 5882, 144),
    ("pg15_serial_failures_plain", 89, 81539, 3357, 311),
    ("pg16_rate_R200_L5", 593, 448670, 4877, 0),
    ("pg16_rate_skipped_log", 2006, 1113822, 1442, 0),
    ("pg16_select_log", 400, 36147, 5189, 0),
    ("pg16_serial_failures_log", 106, 113102, 3320, 134),
    ("pg16_serial_failures_plain", 104, 79997, 2283, 296),
    ("pg17_rate_R200_L5", 600, 355804, 3129, 0),
    ("pg17_rate_skipped_log", 2057, 1164779, 2152, 0),
    ("pg17_select_log", 400, 64901, 1629, 0),
    ("pg17_serial_failures_log", 104, 121358, 5734, 136),
    ("pg17_serial_failures_plain", 107, 81694, 3139, 293),
    ("pg18_multi_rate_log", 894, 240487, 10571, 0),
    ("pg18_rate_R200_L5", 546, 372842, 3751, 0),
    ("pg18_rate_skipped_log", 1932, 1093779, 2035, 0),
    ("pg18_select_log", 400, 30937, 721, 0),
    ("pg18_serial_failures_log", 92, 119816, 5452, 148),
    ("pg18_serial_failures_plain", 99, 75809, 3127, 301),
]


# aggregated logs (--aggregate-interval=1): (recording, [(epoch, count, sum µs, max µs)] of
# both threads' files together), read off the files
AGGREGATES = [
    ("pg15_aggregate", [(1795360608, 1419, 792163, 2342), (1795360609, 4865, 1997715, 9353),
                        (1795360610, 4930, 1997777, 4584)]),
    ("pg18_aggregate", [(1795360605, 4313, 1744055, 4420), (1795360606, 5170, 1998119, 2341),
                        (1795360607, 5104, 1998048, 1492)]),
]  # fmt: skip


def test_every_recorded_log_is_in_the_table() -> None:
    names = {t[0] for t in LOGS} | {t[0] for t in AGGREGATES}
    assert {p.name.removesuffix(".logs") for p in DATA.glob("*.logs")} == names


@pytest.mark.parametrize(("name", "expected"), AGGREGATES, ids=[t[0] for t in AGGREGATES])
def test_aggregated_logs_merge_threads_by_second(name: str, expected: list) -> None:
    seconds = read_aggregate_logs(logs(name))
    got = [(s.epoch, s.count, round(s.mean_ms * s.count * 1000), round(s.max_ms * 1000))
           for s in seconds]  # fmt: skip
    assert got == expected
    assert all(s.failed == 0 and s.p50_ms is None and s.histogram == () for s in seconds)
    # pgbench leaves the last, partial second of a -T run out of an aggregated log
    assert sum(s.count for s in seconds) < parse_report(stdout(name)).transactions


def test_an_aggregated_line_counts_both_kinds_of_failure() -> None:
    line = "1795360605 10 5000 2600000 300 900 0 0 0 0 0 3 4 2 1\n"
    (second,) = parse_aggregate_log([line])
    assert (second.count, second.failed, second.mean_ms, second.max_ms) == (10, 3, 0.5, 0.9)


def test_a_bad_aggregated_line_is_named() -> None:
    with pytest.raises(PgbenchError, match=r"aggregated log line \(log, line 2\): 'x y'"):
        parse_aggregate_log(["1795360605 10 5000 2600000 300 900\n", "x y"])


@pytest.mark.parametrize(
    ("name", "count", "sum_us", "max_us", "failed"), LOGS, ids=[t[0] for t in LOGS]
)
def test_logs_add_up_to_the_report(
    name: str, count: int, sum_us: int, max_us: int, failed: int
) -> None:
    seconds = read_transaction_logs(logs(name))
    assert sum(s.count for s in seconds) == count == parse_report(stdout(name)).transactions
    assert sum(s.failed for s in seconds) == failed == parse_report(stdout(name)).failed
    assert round(sum(s.mean_ms * s.count for s in seconds) * 1000) == sum_us
    assert max(s.max_ms for s in seconds) == max_us / 1000
    assert [s.epoch for s in seconds] == sorted({s.epoch for s in seconds})
    for s in seconds:
        assert sum(n for _, n in s.histogram) == s.count
        assert s.p50_ms <= s.p90_ms <= s.p95_ms <= s.p99_ms <= s.p999_ms <= s.max_ms


def test_one_second_from_two_thread_files() -> None:
    (second,) = read_transaction_logs(logs("pg18_select_log"))
    assert second == LatencySecond(
        epoch=1795354293,
        count=400,
        failed=0,
        mean_ms=30937 / 400 / 1000,
        max_ms=0.721,
        p50_ms=0.071,
        p95_ms=0.098,
        p99_ms=0.119,
        histogram=second.histogram,
        p90_ms=second.p90_ms,
        p999_ms=0.721,  # nearest rank 400 of 400: the maximum
        serialization=0,  # no failure of any kind; no retries column (max_tries 1)
        deadlock=0,
    )
    assert 0.071 <= second.p90_ms <= 0.098
    assert latency_hist.percentile(second.histogram, 50) == pytest.approx(0.071, rel=1 / 64)


def test_skipped_transactions_are_neither_counted_nor_failed() -> None:
    seconds = read_transaction_logs(logs("pg18_rate_skipped_log"))
    assert [(s.epoch, s.count, s.failed) for s in seconds] == [
        (1795354352, 574, 0),
        (1795354353, 981, 0),
        (1795354354, 377, 0),
    ]
    assert [(s.p50_ms, s.p95_ms, s.p99_ms, s.max_ms) for s in seconds] == [
        (0.484, 0.955, 1.282, 1.426),
        (0.478, 0.974, 1.191, 2.035),
        (0.482, 0.926, 1.137, 1.180),
    ]
    assert seconds[0].mean_ms == 329302 / 574 / 1000


def test_failed_and_serialization_entries_count_as_failed() -> None:
    (plain,) = read_transaction_logs(logs("pg18_serial_failures_plain"))
    assert (plain.count, plain.failed) == (99, 301)  # "failed" in the time field
    (detailed,) = read_transaction_logs(logs("pg18_serial_failures_log"))
    assert (detailed.count, detailed.failed) == (92, 148)  # "serialization", and a retries column


@pytest.mark.parametrize("version", [15, 16, 17, 18])
def test_failures_by_kind_and_retries_per_second_add_up_to_the_report(version: int) -> None:
    name = f"pg{version}_serial_failures_log"  # --max-tries=2 --failures-detailed
    report = parse_report(stdout(name))
    seconds = read_transaction_logs(logs(name), retries=True)
    assert sum(s.serialization for s in seconds) == report.serialization_failures > 0
    assert sum(s.deadlock for s in seconds) == report.deadlock_failures == 0
    assert sum(s.retried for s in seconds) == report.retried > 0
    assert sum(s.retries for s in seconds) == report.retries
    assert sum(s.failed for s in seconds) == report.failed
    # "failed" only (no --failures-detailed, max_tries 1): kinds and retries unknown
    plain = read_transaction_logs(logs(f"pg{version}_serial_failures_plain"))
    assert sum(s.failed for s in plain) > 0
    assert {(s.serialization, s.deadlock, s.retried, s.retries) for s in plain} == {(None,) * 4}


def test_an_aggregated_line_has_failures_by_kind_and_retries() -> None:
    lines = ["1795360605 10 5000 2600000 300 900 0 0 0 0 0 3 4 2 1\n",
             "1795360605 5 5000 2600000 300 900 0 0 0 0 0 1 1 0 0\n"]  # fmt: skip
    (second,) = parse_aggregate_log(lines)
    assert (second.serialization, second.deadlock, second.retried, second.retries) == (2, 1, 4, 5)
    (old,) = parse_aggregate_log(["1795360605 10 5000 2600000 300 900\n"])  # before 15
    assert (old.failed, old.serialization, old.retries) == (0, None, None)


def test_a_retries_column_is_required_when_max_tries_is_not_1() -> None:
    with pytest.raises(PgbenchError, match="line 1"):
        parse_transaction_log(["0 1 1500 0 100 5"], retries=True)


def test_parse_transaction_log_lines() -> None:
    lines = [
        "0 1 1500 0 100 5",
        "1 1 failed 0 100 6",
        "",
        "0 2 2500 0 101 7 12",
        "1 2 deadlock 0 102 8",
        "0 3 skipped 0 102 9 3",
    ]
    assert parse_transaction_log(lines) == (
        LatencySecond(100, 1, 1, 1.5, 1.5, 1.5, 1.5, 1.5, latency_hist.histogram([1500]), 1.5, 1.5),
        LatencySecond(101, 1, 0, 2.5, 2.5, 2.5, 2.5, 2.5, latency_hist.histogram([2500]), 2.5, 2.5),
        LatencySecond(102, 0, 1, 0.0, 0.0, 0.0, 0.0, 0.0, (), 0.0, 0.0),
    )


@pytest.mark.parametrize("line", ["0 1 abc 0 100 5", "0 1 1500", "0 1 1500 0 x 5"])
def test_malformed_log_line_raises_with_the_line(line: str) -> None:
    with pytest.raises(PgbenchError, match="line 2") as caught:
        parse_transaction_log(["0 1 1500 0 100 5", line])
    assert repr(line) in str(caught.value)


def test_parse_speed() -> None:
    """200 000 log lines (a fifth of the 1-million-line target) in well under a second."""
    rng = random.Random(7)
    lines = [
        f"{i % 8} {i} {int(rng.lognormvariate(7, 0.5))} 0 {1700000000 + i // 20000} {i % 999999}"
        for i in range(200_000)
    ]
    start = time.perf_counter()
    seconds = parse_transaction_log(lines)
    elapsed = time.perf_counter() - start
    assert len(seconds) == 10 and sum(s.count for s in seconds) == 200_000
    assert elapsed < 2.0, f"{elapsed:.2f} s for 200 000 lines"
