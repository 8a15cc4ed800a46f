"""sysbench 1.0.20's output (recorded from real runs of oltp_read_write and oltp_point_select
against PostgreSQL 18, tests/data/sysbench/) parsed: each second, and the final statistics
equal to what sysbench printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.workloads.sysbench.output import SysbenchSecond, parse_report, parse_second

DATA = Path(__file__).resolve().parents[1] / "data" / "sysbench"


def test_every_second_of_a_read_write_run() -> None:
    text = (DATA / "oltp_read_write.txt").read_text()
    seconds = [s for line in text.splitlines() if (s := parse_second(line)) is not None]
    assert [s.t for s in seconds] == [1.0, 2.0, 3.0, 4.0]
    assert seconds[2] == SysbenchSecond(
        t=3.0, threads=4, tps=331.97, qps=6648.39, reads_s=4660.55, writes_s=1315.92,
        other_s=671.92, percentile=95, latency_ms=20.74, errors_s=1.99, reconnects_s=0.0,
    )  # fmt: skip
    assert seconds[3].threads == 2  # the last second: threads ending
    assert parse_second("Threads started!") is None and parse_second("") is None


def test_the_final_statistics_are_what_sysbench_printed() -> None:
    r = parse_report((DATA / "oltp_read_write.txt").read_text())
    assert (r.reads, r.writes, r.other, r.queries) == (16646, 4734, 2388, 23768)
    assert (r.transactions, r.tps, r.qps) == (1183, 294.95, 5926.00)
    assert (r.errors, r.errors_s, r.reconnects, r.reconnects_s) == (6, 1.5, 0, 0.0)
    assert (r.total_time_s, r.events) == (4.0102, 1183)
    assert (r.latency_min_ms, r.latency_avg_ms, r.latency_max_ms) == (1.63, 13.52, 402.82)
    assert (r.percentile, r.latency_pct_ms, r.latency_sum_ms) == (95, 27.66, 15995.47)
    assert r.reads + r.writes + r.other == r.queries


def test_a_point_select_run_reads_only() -> None:
    text = (DATA / "oltp_point_select.txt").read_text()
    r = parse_report(text)
    assert r.writes == r.other == 0 and r.reads == r.queries == r.transactions == 50371
    seconds = [s for line in text.splitlines() if (s := parse_second(line)) is not None]
    # the seconds' transactions add up to the total, within the rounding of each rate
    assert sum(s.tps for s in seconds) == pytest.approx(r.transactions, rel=0.01)


def test_a_cut_short_run_is_said() -> None:
    text = (DATA / "oltp_read_write.txt").read_text()
    with pytest.raises(ValueError, match="total time"):
        parse_report(text.split("General statistics")[0])
