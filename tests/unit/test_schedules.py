"""When a schedule is due (``fleet.schedules.Schedule.due``) and which cron expressions are
taken; the database side is tests/integration/test_fleet.py."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pglab.campaign.execution import label_of
from pglab.errors import LabError
from pglab.fleet.schedules import Schedule, checked_cron


def schedule(cron: str, last_due: datetime) -> Schedule:
    return Schedule("nightly", "pglab", cron, {}, "/tmp", None, last_due, last_due, None, None)


def t(hour: int, minute: int = 0, second: int = 0, day: int = 27) -> datetime:
    return datetime(2026, 11, day, hour, minute, second, tzinfo=UTC)


def test_due_is_the_latest_time_after_the_last_one_submitted():
    s = schedule("0 2 * * *", last_due=t(1, 30))
    assert s.due(t(1, 59, 59)) is None
    assert s.due(t(2)) == t(2)  # exactly at its time
    assert s.due(t(2, 0, 9)) == t(2)  # a tick a few seconds late
    assert schedule("0 2 * * *", last_due=t(2)).due(t(3)) is None  # submitted already


def test_times_missed_while_no_worker_ran_are_made_up_once():
    s = schedule("0 * * * *", last_due=t(1))
    assert s.due(t(5, 30)) == t(5)  # 02:00 to 05:00 missed: one execution, 05:00's


def test_seconds_as_a_sixth_field():
    s = schedule("* * * * * */10", last_due=t(1, 0, 0))
    assert s.due(t(1, 0, 5)) is None and s.due(t(1, 0, 15)) == t(1, 0, 10)
    assert [x.second for x in s.next_times(3, after=t(1, 0, 1))] == [10, 20, 30]


@pytest.mark.parametrize("expr", ["bad", "* * *", "61 * * * *", "* * * * * * * *"])
def test_bad_cron_expressions_are_refused_with_the_forms(expr):
    with pytest.raises(LabError) as caught:
        checked_cron(expr)
    assert "is not a cron expression" in caught.value.message
    assert caught.value.hint and "0 2 * * *" in caught.value.hint


def test_an_execution_is_labelled_by_its_due_time_in_utc():
    assert checked_cron("  0  2 * * * ") == "0 2 * * *"
    assert label_of(t(2)) == "20261127T020000Z"
