"""Campaign parsing and plan expansion: pure functions, no server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pglab.analysis.compare import _pick_point
from pglab.campaign import parse as campaign
from pglab.errors import CampaignError
from pglab.planning.plan import expand_points, make_plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def parse(doc: dict, tmp_path: Path | None = None) -> campaign.Campaign:
    return campaign.parse(doc, default_name="t", base_dir=tmp_path)


def test_defaults_make_one_point_one_run() -> None:
    c = parse({})
    plan = make_plan(c)
    assert len(plan.points) == 1 and len(plan.runs) == 1
    run = plan.runs[0]
    assert run.variant == "base"
    assert run.phases[0].pgbench.scripts[0].builtin == "tpcb-like"
    assert run.server.source == "embedded"


def test_matrix_is_cartesian_and_variants_multiply() -> None:
    c = parse(
        {
            "repeats": 3,
            "variants": {"a": {}, "b": {"settings": {"work_mem": "64MB"}}},
            "matrix": {"clients": [1, 10, 100], "settings": {"synchronous_commit": ["on", "off"]}},
        }
    )
    points = expand_points(c)
    assert len(points) == 2 * 3 * 2
    assert len(make_plan(c).runs) == 2 * 3 * 2 * 3
    b_off = [
        p
        for p in points
        if p.variant == "b" and dict(p.axes)["settings.synchronous_commit"] == "off"
    ]
    assert {dict(p.server.settings)["synchronous_commit"] for p in b_off} == {"off"}
    assert all(dict(p.server.settings)["work_mem"] == "64MB" for p in b_off)
    assert sorted(p.phases[0].clients for p in b_off) == [1, 10, 100]


def test_interleaved_order_runs_every_point_once_per_round() -> None:
    c = parse({"repeats": 4, "matrix": {"clients": [1, 2, 3, 4, 5]}})
    runs = make_plan(c).runs
    for r in range(4):
        rnd = runs[r * 5 : (r + 1) * 5]
        assert {x.repeat for x in rnd} == {r + 1}
        assert len({x.point_key for x in rnd}) == 5
    orders = [[x.phases[0].clients for x in runs[r * 5 : (r + 1) * 5]] for r in range(4)]
    assert len({tuple(o) for o in orders}) > 1, "rounds should not all share one order"
    assert make_plan(c).runs == runs, "the order must be repeatable"


def test_sequential_order_keeps_repeats_together() -> None:
    c = parse({"repeats": 2, "order": "sequential", "matrix": {"clients": [1, 2]}})
    assert [(r.phases[0].clients, r.repeat) for r in make_plan(c).runs] == [
        (1, 1),
        (1, 2),
        (2, 1),
        (2, 2),
    ]


def test_done_runs_are_skipped_and_keys_are_stable() -> None:
    c = parse({"repeats": 2, "matrix": {"clients": [1, 2]}})
    first = make_plan(c)
    done = {first.runs[0].run_key, first.runs[2].run_key}
    again = make_plan(parse({"repeats": 2, "matrix": {"clients": [1, 2]}}), done)
    assert again.done == 2 and len(again.runs) == 2
    assert not done & {r.run_key for r in again.runs}


def test_changing_a_setting_changes_the_point_key() -> None:
    a = make_plan(parse({"server": {"settings": {"work_mem": "4MB"}}})).points[0]
    b = make_plan(parse({"server": {"settings": {"work_mem": "8MB"}}})).points[0]
    assert a.point_key != b.point_key


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(CampaignError) as err:
        parse(
            {
                "repeat": 3,
                "order": "random",
                "workload": {"clients": 0, "script": "tpcb_like", "duraton": 5},
                "variants": {"v": {"setings": {}}},
                "dataset": {"scale": -1, "reset": "sometimes"},
            }
        )
    msg = str(err.value)
    for needle in (
        'unknown key "repeat" — did you mean "repeats"',
        'order = "random"',
        "clients = 0",
        'unknown built-in script "tpcb_like" — did you mean "tpcb-like"',
        'unknown key "duraton" — did you mean "duration"',
        "[variants.v]",
        'did you mean "settings"',
        "scale = -1",
        'reset = "sometimes"',
    ):
        assert needle in msg, needle
    assert "8 problem(s)" in msg


def test_phases_and_derived_metric() -> None:
    doc = {
        "workload": {"clients": 10, "transactions": 100},
        "phases": [
            {"name": "warm", "script": "select-only", "times": 3, "measured": False},
            {"name": "initial read", "script": "select-only"},
            {"name": "write", "script": "tpcb-like", "times": 3},
            {"name": "final read", "script": "select-only"},
        ],
        "derived": [
            {"name": "decrease_ratio", "kind": "decrease", "a": "initial read", "b": "final read"}
        ],
    }
    run = make_plan(parse(doc)).runs[0]
    assert [p.name for p in run.phases] == ["warm", "initial read", "write", "final read"]
    assert run.phases[0].times == 3 and not run.phases[0].measured
    assert all(p.clients == 10 and p.transactions == 100 and p.duration is None for p in run.phases)
    assert run.derived[0].a == "initial read"
    with pytest.raises(CampaignError, match='b = "final"'):
        parse({**doc, "derived": [{"name": "x", "a": "initial read", "b": "final"}]})


def test_custom_script_files_are_resolved_and_hashed(tmp_path: Path) -> None:
    (tmp_path / "insert.sql").write_text(
        "INSERT INTO pgbench_history VALUES (1, 1, 1, 1, now());\n"
    )
    c = parse(
        {"workload": {"scripts": [{"file": "insert.sql", "weight": 2}, "select-only"]}}, tmp_path
    )
    s = make_plan(c).runs[0].phases[0].pgbench.scripts
    assert s[0].path == str(tmp_path / "insert.sql") and s[0].weight == 2 and s[0].sha256
    assert s[1].builtin == "select-only"
    with pytest.raises(CampaignError, match="missing.sql"):
        parse({"workload": {"script": "missing.sql"}}, tmp_path)


def test_broken_toml_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[server\nsource = 'embedded'\n")
    with pytest.raises(CampaignError, match="bad.toml: not valid TOML"):
        campaign.load(bad)


@pytest.mark.parametrize(
    "path",
    sorted(p for p in EXAMPLES.glob("*.toml") if p.name != "tune.toml"),
    ids=lambda p: p.name,
)
def test_examples_parse(path: Path) -> None:
    plan = make_plan(campaign.load(path))
    assert plan.runs and plan.estimated_seconds() > 0


@pytest.mark.parametrize(
    "path",
    sorted(p for p in EXAMPLES.glob("*.toml") if "pglab compare" in p.read_text()),
    ids=lambda p: p.name,
)
def test_examples_compare_commands_name_points_of_their_plan(path: Path) -> None:
    # the CAMPAIGN:POINT a reader copies from an example's comments finds a point it stores
    camp = campaign.load(path)
    labels = list(dict.fromkeys(run.label for run in make_plan(camp).runs))
    comments = "\n".join(ln for ln in path.read_text().splitlines() if ln.startswith("#"))
    name = re.escape(camp.name)
    quoted = re.findall(rf"""['"]{name}:([^'"]+)['"]""", comments)
    bare = re.findall(rf"""(?<![\w'"-]){name}:([^\s'"]+)""", comments)
    assert quoted or bare or camp.name not in comments
    for wanted in (*quoted, *bare):
        assert _pick_point(camp.name, wanted, labels) in labels


def test_telemetry_table_is_checked_and_does_not_change_point_keys() -> None:
    watched = parse({"telemetry": {"waits_hz": 20, "buffers_interval": 2}})
    unwatched = parse({"telemetry": {"enabled": False}})
    (a,), (b,) = make_plan(watched).runs, make_plan(unwatched).runs
    assert (a.telemetry.waits_hz, a.telemetry.buffers_interval) == (20.0, 2.0)
    assert a.telemetry.enabled and not b.telemetry.enabled
    assert a.point_key == b.point_key == make_plan(parse({})).runs[0].point_key
    assert a.to_dict()["telemetry"]["waits_hz"] == 20.0  # stored with the run
    with pytest.raises(CampaignError) as err:
        parse({"telemetry": {"waits_hz": 0, "enable": True, "stats_interval": "1s"}})
    msg = str(err.value)
    assert "waits_hz = 0: expected a number from 0.1 to 100" in msg
    assert 'unknown key "enable" — did you mean "enabled"?' in msg
    assert "stats_interval = '1s'" in msg


def test_latency_log_and_vacuum_reach_pgbench_argv(tmp_path: Path) -> None:
    from pglab.pgbench.invoke import argv_for
    from pglab.postgres.sources import Binaries

    c = parse({"workload": {"vacuum": False}, "matrix": {"latency_log": ["aggregate", "off"]}})
    fake = Binaries(bindir=Path("/x"), version="18.6", pgbench_version="18.6", label="embedded")
    argvs = [argv_for(fake, pt.phases[0], [], tmp_path) for pt in expand_points(c)]
    assert all("-n" in a for a in argvs)
    assert "--aggregate-interval=1" in argvs[0] and "-l" in argvs[0]
    assert "-l" not in argvs[1] and "--aggregate-interval=1" not in argvs[1]
    with pytest.raises(CampaignError, match='latency_log = "sometimes": use one of full'):
        parse({"workload": {"latency_log": "sometimes"}})


def test_a_relative_bindir_is_relative_to_the_campaign_file(tmp_path: Path) -> None:
    c = parse(
        {
            "server": {"bindir": "/usr/lib/postgresql/15/bin"},
            "variants": {"abs": {}, "rel": {"server": {"bindir": "../pg/bin"}}, "emb": {
                "server": {"source": "embedded"}}},
        },
        tmp_path,
    )  # fmt: skip
    by_variant = {p.variant: p.server for p in make_plan(c).points}
    assert by_variant["abs"].bindir == "/usr/lib/postgresql/15/bin"
    assert by_variant["rel"].bindir == str(tmp_path.parent / "pg" / "bin")
    assert by_variant["emb"].bindir is None and by_variant["emb"].source == "embedded"


def test_versions_example_parses() -> None:
    c = campaign.load(EXAMPLES / "versions.toml")
    servers = {p.variant: p.server for p in make_plan(c).points}
    assert servers["pg18"].source == "embedded"
    assert servers["pg16"].bindir.endswith("site-packages/pgserver/pginstall/bin")
    assert Path(servers["pg16"].bindir).is_absolute()


def test_storage_bench_table() -> None:
    assert not parse({}).storage_bench.enabled
    on = parse({"storage_bench": {}}).storage_bench
    assert on.enabled and on.seconds == 1 and not on.fio
    spec = parse({"storage_bench": {"seconds": 3, "fio": True}}).storage_bench
    assert (spec.enabled, spec.seconds, spec.fio) == (True, 3, True)
    assert not parse({"storage_bench": {"enabled": False}}).storage_bench.enabled
    # not part of a point's identity
    assert make_plan(parse({"storage_bench": {}})).runs[0].point_key == (
        make_plan(parse({})).runs[0].point_key
    )
    with pytest.raises(CampaignError) as err:
        parse({"storage_bench": {"seconds": 0, "fi0": True}})
    assert "seconds = 0: expected a whole number ≥ 1" in str(err.value)
    assert '"fi0"' in str(err.value)


def test_the_tune_example_is_a_tune_file_and_not_a_campaign() -> None:
    from pglab.tune import spec as tune_spec

    camp, spec = tune_spec.load(EXAMPLES / "tune.toml")
    assert spec.trials == 30 and len(spec.knobs) == 6 and camp.variants[0].phases[1].duration == 60
    with pytest.raises(CampaignError, match="run it with `pglab tune FILE`"):
        campaign.load(EXAMPLES / "tune.toml")
