"""How honest an ETA was, told from stored progress rows (``maintenance.eta``): the time a phase
really had left, at the first rows past 25%, 50% and 75%, against what each estimator said."""

from __future__ import annotations

from typing import Any

import pytest

from pglab.workloads.maintenance.eta import eta_errors, phase_end, replay
from pglab.workloads.maintenance.figures import Prior

# t, phase, done, total, pct, unit, rate, eta_s, eta_by, eta_all_s (figures.PROGRESS_COLUMNS)
ROWS: list[list[Any]] = [
    [100.0, "scanning heap", 0, 1000, 0.0, "blocks", None, None, None, None],
    [102.0, "scanning heap", 200, 1000, 20.0, "blocks", 100.0, 8.0, "rate", None],
    [103.0, "scanning heap", 300, 1000, 30.0, "blocks", 100.0, 6.0, "history", 9.0],
    [105.0, "scanning heap", 500, 1000, 50.0, "blocks", 100.0, 4.0, "history", 7.0],
    [107.0, "scanning heap", 800, 1000, 80.0, "blocks", 114.3, 1.0, "history", 4.0],
    [109.0, "vacuuming indexes", 0, 0, None, "blocks", None, None, None, None],
    [110.0, "vacuuming heap", 10, 100, 10.0, "blocks", None, None, None, None],
]


def test_a_phase_ends_between_its_last_row_and_the_next_or_with_the_operation() -> None:
    assert phase_end(ROWS, "scanning heap", 111.0) == 108.0
    assert phase_end(ROWS, "vacuuming heap", 111.0) == 111.0
    with pytest.raises(ValueError, match="no progress row of phase 'sorting'"):
        phase_end(ROWS, "sorting", 111.0)


def test_the_error_is_the_eta_against_the_time_really_left_at_each_share() -> None:
    # at 30% (t 103) 5 s were left and 6 s said: 0.2; at 50% (t 105) 3 left, 4 said; at 80%
    # (t 107) 1 left, 1 said
    assert eta_errors(ROWS, "scanning heap", 111.0) == [
        (pytest.approx(0.2), "history"), (pytest.approx(1 / 3), "history"), (0.0, "history")
    ]  # fmt: skip
    # the same rows at their rate: 700 / 100 = 7 s said at 30%, 5 at 50%, 200 / 114.3 at 80%
    assert eta_errors(ROWS, "scanning heap", 111.0, "rate") == [
        (pytest.approx(0.4), "rate"),
        (pytest.approx(2 / 3), "rate"),
        (pytest.approx(abs(200 / 114.3 - 1)), "rate"),
    ]


def test_a_share_never_reached_or_without_an_eta_has_no_error() -> None:
    short = ROWS[:3] + [[104.0, "sorting", 0, 0, None, "tuples", None, None, None, None]]
    assert [by for _, by in eta_errors(short, "scanning heap", 111.0)] == ["history"]
    assert eta_errors(ROWS, "vacuuming heap", 111.0) == []  # its one row has no ETA yet
    with pytest.raises(ValueError, match="estimator 'mean'"):
        eta_errors(ROWS, "scanning heap", 111.0, "mean")


def test_rows_told_again_by_rate_and_by_an_earlier_run() -> None:
    def scan(t0: float, per_s: float, at: list[float], then: float) -> list[list[Any]]:
        out = [[t0 + t, "scanning heap", round(per_s * t), 1000, None, "blocks"] for t in at]
        return out + [[t0 + then, "vacuuming heap", 0, 0, None, "blocks"]]

    # the earlier run: 100 blocks a second, read once a second, its scan over at 10 s (between
    # its rows at 9 and 11 s), the operation at 12 s
    prior = Prior(replay(scan(0.0, 100.0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 11.0)), ended=12.0)
    assert replay(prior.rows)[3][6:9] == [100.0, 7.0, "rate"]
    # this one half as fast, read at other moments: the earlier run's time between the same
    # shares (2.5% and 50%: 0.25 and 5 s), doubled, tells what is left: 10 s of the scan at
    # 50% (over at 120), 14 s of the operation
    again = replay(scan(100.0, 50.0, [0.5, 3.5, 10.0], 30.0), prior)
    assert again[2][7:] == [10.0, "history", 14.0]
    # its first row past 25% is the one at 50%; none past 75%
    assert eta_errors(again, "scanning heap", 125.0) == [(0.0, "history")] * 2
    # judged against an end known better than these rows tell: at 50/s 10 s said, 12.5 left
    assert (
        eta_errors(again, "scanning heap", 125.0, "rate", end=122.5)
        == [(pytest.approx(0.2), "rate")] * 2
    )
