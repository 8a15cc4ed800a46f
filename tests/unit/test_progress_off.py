"""``progress = false``: pgbench without ``-P 1``, each second's TPS read from its aggregate log
after the phase. The key checked and refused without that log, its argv, its point key, the
series read off a recorded run (against the ``-P`` lines pgbench printed in the same run), and
what the live view says in its place."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from rich.console import Console

from pglab.campaign import parse as campaign
from pglab.cli import live
from pglab.errors import CampaignError
from pglab.pgbench.invoke import argv_for
from pglab.pgbench.output import parse_progress, progress_from_aggregate, read_aggregate_logs
from pglab.planning.plan import expand_points
from pglab.postgres.sources import Binaries
from pglab.run.live import LiveState

EMBEDDED = Binaries(bindir=Path("/x"), version="18.6", pgbench_version="18.6", label="embedded")
DATA = Path(__file__).resolve().parents[1] / "data" / "pgbench"


def parse(doc: dict) -> campaign.Campaign:
    return campaign.parse(doc, default_name="t")


def test_progress_false_drops_p_and_makes_a_point_of_its_own(tmp_path: Path) -> None:
    on = expand_points(parse({"workload": {"latency_log": "aggregate"}}))[0]
    off = expand_points(parse({"workload": {"latency_log": "aggregate", "progress": False}}))[0]
    assert "-P" in argv_for(EMBEDDED, on.phases[0], [], tmp_path)
    argv = argv_for(EMBEDDED, off.phases[0], [], tmp_path)
    assert "-P" not in argv and "--aggregate-interval=1" in argv
    assert "progress" not in on.point_dict()["phases"][0]  # stored points keep their keys
    assert off.point_dict()["phases"][0]["progress"] is False
    assert on.point_key != off.point_key
    assert on.phases[0].live and not off.phases[0].live  # what the live view says


def test_progress_is_a_matrix_axis() -> None:
    c = parse({"workload": {"latency_log": "aggregate"}, "matrix": {"progress": [True, False]}})
    assert [pt.phases[0].pgbench.progress for pt in expand_points(c)] == [True, False]


@pytest.mark.parametrize("log", ["full", "off"])
def test_without_the_aggregate_log_it_is_refused_naming_the_fix(log: str) -> None:
    with pytest.raises(CampaignError) as err:
        parse({"workload": {"latency_log": log, "progress": False}})
    said = str(err.value)
    assert f"progress = false with latency_log = '{log}'" in said
    assert 'set latency_log = "aggregate"' in said


def test_a_progress_that_is_not_a_boolean_is_refused() -> None:
    with pytest.raises(CampaignError, match=r"progress = 'no': expected true or false"):
        parse({"workload": {"latency_log": "aggregate", "progress": "no"}})


def test_the_series_from_a_recorded_aggregate_log_matches_pgbench_progress() -> None:
    # pgbench -c 2 -j 2 -T 3 -P 1 -l --aggregate-interval=1: both series of one run
    seconds = read_aggregate_logs(sorted((DATA / "pg18_aggregate.logs").iterdir()))
    started = seconds[0].epoch + 0.4  # pgbench began within its log's first second
    got = progress_from_aggregate(seconds, started)
    printed = parse_progress((DATA / "pg18_aggregate.stderr").read_text())
    # the first, partial second left out: as many seconds as -P printed, ending a second apart
    assert len(got) == len(printed) == 2
    assert [s.t for s in got] == [1.6, 2.6]
    assert [s.tps for s in got] == [5170.0, 5104.0]
    # the same TPS and mean latency as -P's, within what a second's shift between them makes
    for mine, theirs in zip(got, printed, strict=True):
        assert abs(mine.tps / theirs.tps - 1) < 0.05
        assert mine.latency_avg_ms is not None and theirs.latency_avg_ms is not None
        assert abs(mine.latency_avg_ms / theirs.latency_avg_ms - 1) < 0.05
        assert mine.failed == 0 and mine.latency_stddev_ms is None


def test_no_seconds_make_no_series() -> None:
    assert progress_from_aggregate([], 0.0) == ()


def test_the_live_panel_says_why_there_is_no_tps() -> None:
    now = time.time()
    st = LiveState(campaign="demo", pid=1, pid_started=0.0, started=now - 10, total_s=60.0,
                   run_index=1, run_total=4, label="c=2", repeat=1, live_tps=False)  # fmt: skip
    console = Console(width=80, file=io.StringIO(), color_system=None)
    console.print(live.panel(st, now, 80, "Ctrl-C stops the campaign"))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "none live: progress = false, read after the phase" in out  # on one line at 80
    assert "waiting for pgbench's first second" not in out


def test_every_combination_of_the_matrix_axes_is_checked() -> None:
    ok = {"workload": {"progress": False}, "matrix": {"latency_log": ["aggregate"]}}
    assert (
        not parse(ok).variants[0].phases[0].pgbench.progress
    )  # the workload's own log is not asked
    with pytest.raises(CampaignError, match=r"\[matrix\]: progress = false with latency_log = "
                                            r"'full'"):  # fmt: skip
        parse({"workload": {"progress": False}, "matrix": {"latency_log": ["full", "aggregate"]}})
    with pytest.raises(CampaignError, match=r"\[matrix\]: progress = false"):
        parse({"matrix": {"progress": [True, False]}})


def test_a_generator_s_aggregate_log_is_put_on_pglab_s_clock(tmp_path: Path) -> None:
    # two hosts' logs of the same seconds, one host's clock 30 s ahead
    ours, ahead = tmp_path / "gen1.log", tmp_path / "gen2.log"
    ours.write_text("1795360605 10 5000 2600000 300 900\n1795360606 20 9000 4100000 300 800\n")
    ahead.write_text("1795360635 30 6000 1300000 100 400\n1795360636 40 8000 1700000 100 300\n")
    seconds = read_aggregate_logs([ours, ahead], {ahead: 30})
    assert [(s.epoch, s.count) for s in seconds] == [(1795360605, 40), (1795360606, 60)]
    # left where they were, the seconds would not meet: four seconds of one host each
    assert len(read_aggregate_logs([ours, ahead])) == 4
