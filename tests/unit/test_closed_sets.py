"""The closed sets of words pglab's code branches on, typed as ``Literal``s (issue 51 item 4),
agreeing with what declares or says them: the campaign's schema, procrastinate."""

from __future__ import annotations

from typing import get_args

from procrastinate.jobs import Status

from pglab.campaign import schema
from pglab.campaign.spec import TARGET_KINDS, DerivedKind, TargetKind
from pglab.fleet.queue import JobStatus


def test_the_campaign_s_kinds_are_those_its_schema_declares() -> None:
    assert get_args(DerivedKind) == schema.DERIVED_KINDS
    assert get_args(TargetKind) == TARGET_KINDS == ("path", "tmpfs", "loop")


def test_a_job_s_status_is_one_procrastinate_says() -> None:
    assert set(get_args(JobStatus)) == {s.value for s in Status}
