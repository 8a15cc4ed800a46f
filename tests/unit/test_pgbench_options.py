"""The campaign keys for pgbench's failures, retries, latency limit and per-statement report:
checked, matrix axes, passed to pgbench, and refused for a pgbench older than 15."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.campaign import parse as campaign
from pglab.errors import CampaignError
from pglab.pgbench.invoke import argv_for
from pglab.planning import preflight
from pglab.planning.plan import expand_points, make_plan
from pglab.postgres.sources import Binaries

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
    assert [[ph.pgbench.max_tries for ph in pt.phases] for pt in points] == [[1, 1], [10, 10]]
    only = expand_points(parse({"phases": [{"name": "w"}, {"name": "m", "max_tries": 3}]}))[0]
    assert [ph.pgbench.max_tries for ph in only.phases] == [1, 3]


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


def test_random_seed_and_sampling_rate_reach_pgbench(tmp_path: Path) -> None:
    c = parse({"workload": {"random_seed": 42, "sampling_rate": 0.1}})
    point = expand_points(c)[0]
    argv = argv_for(EMBEDDED, point.phases[0], [], tmp_path)
    assert "--random-seed=42" in argv and "--sampling-rate=0.1" in argv
    assert point.point_key != expand_points(parse({}))[0].point_key
    words = parse({"workload": {"random_seed": "rand"}})
    assert "--random-seed=rand" in argv_for(EMBEDDED, expand_points(words)[0].phases[0], [],
                                            tmp_path)  # fmt: skip
    # left out: neither in argv nor in the point (stored points keep their keys)
    bare = expand_points(parse({}))[0]
    assert not any(a.startswith(("--random-seed", "--sampling-rate"))
                   for a in argv_for(EMBEDDED, bare.phases[0], [], tmp_path))  # fmt: skip
    assert not {"random_seed", "sampling_rate"} & set(bare.point_dict()["phases"][0])


def test_random_seed_and_sampling_rate_are_matrix_axes() -> None:
    c = parse({"matrix": {"random_seed": [1, 2], "sampling_rate": [0.5, 1]}})
    got = [
        (pt.phases[0].pgbench.random_seed, pt.phases[0].pgbench.sampling_rate)
        for pt in expand_points(c)
    ]
    assert sorted(got) == [(1, 0.5), (1, 1.0), (2, 0.5), (2, 1.0)]


def test_each_generator_gets_its_own_seed_from_the_one_given() -> None:
    from pglab.pgbench.generators import _seed

    assert [_seed(42, i) for i in range(3)] == [42, 43, 44]
    assert _seed(2**64 - 1, 1) == 0 and _seed("time", 1) == "time" and _seed(None, 1) is None


@pytest.mark.parametrize(
    ("workload", "said"),
    [
        ({"random_seed": -1}, 'random_seed = -1: expected an unsigned integer, "time" or "rand"'),
        ({"random_seed": "abc"}, "random_seed = 'abc': expected an unsigned integer"),
        ({"random_seed": 1.5}, "random_seed = 1.5: expected an unsigned integer"),
        ({"random_seed": True}, "random_seed = True: expected an unsigned integer"),
        ({"sampling_rate": 0}, "sampling_rate = 0: expected the share of transactions"),
        ({"sampling_rate": 1.5}, "sampling_rate = 1.5: expected the share of transactions logged"),
        (
            {"sampling_rate": 0.1, "latency_log": "off"},
            r"allowed only when logging transactions \(-l\)",
        ),
        ({"sampling_rate": 0.1, "latency_log": "aggregate"}, "cannot be used at the same time"),
    ],
)
def test_what_pgbench_refuses_is_refused_with_its_words(workload: dict, said: str) -> None:
    with pytest.raises(CampaignError, match=said):
        parse({"workload": workload})


def test_show_says_the_percentiles_come_from_a_sample(tmp_path: Path, capsys) -> None:
    import random
    from dataclasses import replace

    from helpers.store_checks import sample_phase, sample_run

    from pglab.cli import main
    from pglab.pgbench import latency
    from pglab.records import LatencySecond
    from pglab.store import open_store

    ph = sample_phase()
    rnd = random.Random(7)  # 10 seconds of 500 logged latencies, log-normal around 1 ms
    seconds = tuple(
        LatencySecond(epoch=s, count=500, failed=0, mean_ms=1.0, max_ms=9.0, p50_ms=None,
                      p95_ms=None, p99_ms=None,
                      histogram=latency.histogram(rnd.lognormvariate(7, 0.5) for _ in range(500)))
        for s in range(10)
    )  # fmt: skip
    sampled = replace(ph, argv=(*ph.argv, "--sampling-rate=0.1"), latency=seconds)
    with open_store(str(tmp_path / "r.sqlite")) as store:
        run_id = store.save_run(sample_run(phases=(sampled, replace(ph, iteration=2))))
    assert main(["show", str(run_id), "--store", str(tmp_path / "r.sqlite")]) == 0
    said = [ln for ln in capsys.readouterr().out.splitlines() if "sample" in ln]
    # the population's p50 is e^7 µs = 1.10 ms, its p99 e^(7 + 2.326 * 0.5) µs = 3.51 ms
    assert said == [
        "latency of main 1: its log kept a sample of 0.1 of the transactions (sampling_rate); "
        "percentiles in ms from the sample, with their 95% intervals: p50 1.1 (1.05–1.11), "
        "p90 2.03 (2–2.13), p95 2.44 (2.33–2.56), p99 3.32 (3.17–3.59), p99.9 4.81 "
        "(4.59–6.64). TPS, counts and pgbench's averages are of every transaction"
    ]
