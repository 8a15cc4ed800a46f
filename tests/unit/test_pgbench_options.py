"""The campaign keys for pgbench's failures, retries, latency limit and per-statement report:
checked, matrix axes, passed to pgbench, and refused for a pgbench older than 15."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.campaign import parse as campaign
from pglab.errors import CampaignError
from pglab.pgbench.invoke import argv_for
from pglab.postgres.sources import Binaries
from pglab.run import preflight
from pglab.run.plan import expand_points, make_plan

EMBEDDED = Binaries(bindir=Path("/x"), version="18.6", pgbench_version="18.6", label="embedded")


def parse(doc: dict) -> campaign.Campaign:
    return campaign.parse(doc, default_name="t")


def test_the_keys_reach_pgbench_argv(tmp_path: Path) -> None:
    c = parse({"workload": {"max_tries": 5, "failures_detailed": True, "latency_limit": 2.5,
                            "report_per_command": True}})  # fmt: skip
    argv = argv_for(EMBEDDED, expand_points(c)[0].phases[0], [], tmp_path)
    assert "--max-tries=5" in argv and "--failures-detailed" in argv and "-r" in argv
    assert argv[argv.index("-L") + 1] == "2.5"


def test_left_out_they_change_neither_argv_nor_point_keys(tmp_path: Path) -> None:
    point = expand_points(parse({}))[0]
    argv = argv_for(EMBEDDED, point.phases[0], [], tmp_path)
    assert not {"-r", "-L", "--failures-detailed"} & set(argv)
    assert not any(a.startswith("--max-tries") for a in argv)
    phase = point.point_dict()["phases"][0]
    assert not {"max_tries", "latency_limit", "failures_detailed", "report_per_command"} & set(
        phase
    )  # points stored before these keys existed keep their keys
    assert point.point_key != expand_points(parse({"workload": {"max_tries": 5}}))[0].point_key


def test_max_tries_is_a_matrix_axis_and_a_phase_key() -> None:
    phases = [{"name": "w", "measured": False}, {"name": "m", "max_tries": 3}]
    c = parse({"matrix": {"max_tries": [1, 10]}, "phases": phases})
    points = expand_points(c)
    assert [[ph.max_tries for ph in pt.phases] for pt in points] == [[1, 1], [10, 10]]
    only = expand_points(parse({"phases": [{"name": "w"}, {"name": "m", "max_tries": 3}]}))[0]
    assert [ph.max_tries for ph in only.phases] == [1, 3]


@pytest.mark.parametrize(
    ("workload", "said"),
    [
        ({"max_tries": 0}, "max_tries = 0: expected a whole number ≥ 1"),
        ({"max_tries": "5"}, "max_tries = '5': expected a whole number ≥ 1"),
        ({"latency_limit": 0}, "latency_limit = 0: expected milliseconds > 0"),
        ({"latency_limit": True}, "latency_limit = True: expected milliseconds > 0"),
        ({"failures_detailed": "yes"}, "failures_detailed"),
        ({"report_per_commands": True}, 'did you mean "report_per_command"'),
    ],
)
def test_bad_values_are_named(workload: dict, said: str) -> None:
    with pytest.raises(CampaignError, match=said):
        parse({"workload": workload})


def test_a_pgbench_older_than_15_is_refused_naming_the_point_and_option() -> None:
    c = parse({"server": {"bindir": "/usr/lib/postgresql/14/bin"},
               "workload": {"max_tries": 5, "failures_detailed": True, "report_per_command": True,
                            "latency_limit": 10}})  # fmt: skip
    plan = make_plan(c)
    old = Binaries(Path("/usr/lib/postgresql/14/bin"), "14.12", "14.12",
                   "bindir:/usr/lib/postgresql/14/bin")  # fmt: skip
    with pytest.raises(CampaignError) as err:
        preflight._check_pgbench_options(plan, {old.label: old})
    msg = str(err.value)
    assert "max_tries (pgbench --max-tries)" in msg and "failures_detailed" in msg
    assert "pgbench 14.12" in msg and "only from 15 on" in msg
    assert "latency_limit" not in msg and "report_per_command" not in msg  # older pgbench has them
    new = Binaries(Path("/x"), "15.18", "15.18", old.label)
    preflight._check_pgbench_options(plan, {old.label: new})  # no error
