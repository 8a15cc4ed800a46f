"""The pure parts of ``pglab tune``: knobs against real pg_settings catalogs (15 and 18), values
written back in each setting's unit, PGTune's rules, the memory constraint, the confirmation's
candidates, order and decision, and what a person reads (golden text in tests/data/golden/,
rewritten with PGLAB_UPDATE_GOLDEN=1)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pglab.metric_units import MetricKey
from pglab.pgbench import latency as latency_hist
from pglab.postgres import settings
from pglab.postgres.settings import SettingDef
from pglab.records import (
    LatencySecond,
    PgbenchReport,
    PhaseResult,
    RunMetrics,
    RunResult,
    RunStatus,
)
from pglab.tune import confirm, constraints, pgtune, space, summary, trials
from pglab.tune.spec import KnobSpec, TuneSpec, parse_tune
from pglab.tune.trials import TrialRecord

DATA = Path(__file__).resolve().parents[1] / "data"
GIB = 2**30


def catalog(version: str) -> dict[str, SettingDef]:
    return settings.catalog_from_rows(
        json.loads((DATA / f"pg_settings_{version}.json").read_text())
    )


CAT18 = catalog("18")
CAT15 = catalog("15")


# -- the [tune] table --------------------------------------------------------------------------


def test_the_tune_table_collects_every_problem() -> None:
    spec, problems = parse_tune({
        "objective": "speed", "trials": 0, "memory_share": 1.5, "p99_limit_ms": -1,
        "knobs": {"shared_buffers": {"min": "1GB"}, "work_mem": {"min": "1MB", "max": "2MB",
                  "lg": True}, "wal_compression": [], "bgwriter_delay": 5},
    })  # fmt: skip
    text = "\n".join(problems)
    assert 'objective = "speed": use one of tps, p99' in text
    assert "trials = 0: expected a whole number ≥ 1" in text
    assert "memory_share = 1.5" in text and "p99_limit_ms = -1" in text
    assert "shared_buffers: a range needs max" in text
    assert 'unknown key "lg" — did you mean "log"?' in text
    assert "wal_compression = []: give at least one choice" in text
    assert "bgwriter_delay = 5: expected a range" in text
    assert spec.trials == 30  # the default stands in for the bad value


def test_booleans_are_on_and_off_and_the_default_is_thirty_tpe_trials() -> None:
    spec, problems = parse_tune({"knobs": {"fsync": [True, False]}, "unsafe": True})
    assert not problems and spec.knobs[0].choices == ("on", "off")
    assert (spec.trials, spec.sampler, spec.confirm_repeats, spec.direction) == (
        30, "tpe", 5, "maximize")  # fmt: skip
    assert parse_tune({"objective": "p99"})[0].direction == "minimize"


# -- knobs against the catalog ---------------------------------------------------------------


def test_ranges_are_in_the_settings_base_unit_and_read_back_as_written() -> None:
    (sb, ct, cct), problems = space.resolve([
        KnobSpec("shared_buffers", "128MB", "4GB", True),
        KnobSpec("checkpoint_timeout", "30s", "1h"),
        KnobSpec("checkpoint_completion_target", "0.5", "0.9"),
    ], CAT18, unsafe=False, fixed={})  # fmt: skip
    assert not problems
    assert (sb.low, sb.high) == (16384, 524288)  # 8kB blocks
    assert (ct.low, ct.high) == (30, 3600)  # seconds
    assert sb.setting(131072) == "1GB" and sb.setting(10892) == "87136kB"
    assert ct.setting(300) == "5min" and ct.setting(90) == "90s"
    assert cct.setting(0.71834) == "0.7183"
    assert sb.param("1GB") == 131072 and sb.param("64MB") == 16384  # clamped into the range
    assert sb.describe() == "128MB … 4GB, log"


def test_bad_knobs_are_named_with_what_to_do() -> None:
    _, problems = space.resolve([
        KnobSpec("shared_bufers", "1MB", "2MB"),
        KnobSpec("checkpoint_timeout", "10min", "1min"),
        KnobSpec("checkpoint_timeout", "1s", "1min"),
        KnobSpec("fsync", choices=("on", "off")),
        KnobSpec("port", "5000", "6000"),
        KnobSpec("work_mem", "0", "1MB", True),
        KnobSpec("wal_compression", choices=("off", "brotli")),
        KnobSpec("wal_level", "1", "2"),
        KnobSpec("max_connections", "10", "20"),
    ], CAT18, unsafe=False, fixed={"max_connections": "50"})  # fmt: skip
    text = "\n".join(problems)
    assert 'unknown setting "shared_bufers" — did you mean shared_buffers' in text
    assert 'checkpoint_timeout: min "10min" is above max "1min"' in text
    assert 'min of checkpoint_timeout = "1s": below the minimum 30s' in text
    assert "fsync can lose committed data" in text
    assert "port is managed by pglab" in text
    assert 'work_mem = "0"' in text  # below work_mem's minimum (64kB)
    assert 'wal_compression = "brotli"' in text
    assert "wal_level can lose committed data" in text
    assert "max_connections is also set in [server.settings]" in text
    assert len(problems) == 9


def test_the_default_knob_set_follows_the_version_and_the_machine() -> None:
    k18 = {k.name: k for k in space.default_knobs(CAT18, 8 * GIB, unsafe=False)}
    k15 = {k.name: k for k in space.default_knobs(CAT15, 8 * GIB, unsafe=False)}
    assert "io_method" in k18 and "io_method" not in k15  # asynchronous I/O is 18's
    assert not set(space.UNSAFE) & (set(k18) | set(k15))
    assert k18["shared_buffers"].high == "3276MB"  # 40% of RAM
    unsafe = {k.name for k in space.default_knobs(CAT18, 8 * GIB, unsafe=True)}
    assert set(space.UNSAFE) <= unsafe
    knobs, problems = space.resolve(list(k18.values()), CAT18, unsafe=False, fixed={})
    assert not problems and len(knobs) == len(k18)
    # the defaults as params, and back: the server's own values
    defaults = space.defaults_of(knobs)
    assert defaults["shared_buffers"] == "128MB" and defaults["checkpoint_timeout"] == "5min"
    params = space.params_of(knobs, defaults)
    assert space.settings_of(knobs, params)["shared_buffers"] == "128MB"
    assert space.settings_of([], {}) == {}


def test_wal_level_minimal_brings_no_wal_senders() -> None:
    (knob,), _ = space.resolve([KnobSpec("wal_level", choices=("replica", "minimal"))], CAT18,
                               unsafe=True, fixed={})  # fmt: skip
    assert space.settings_of([knob], {"wal_level": "minimal"}) == {
        "wal_level": "minimal", "max_wal_senders": "0"}  # fmt: skip


# -- PGTune and the memory constraint ----------------------------------------------------------


def test_pgtune_rules_match_pgtune_for_16gb_4_cpus_100_connections() -> None:
    """pgtune.leopard.in.ua, OLTP, Linux, 16 GB, 4 CPUs, 100 connections, SSD."""
    rules = pgtune.rules(16 * GIB, 4, 100, "ssd", CAT18)
    assert rules["shared_buffers"] == "4GB"
    assert rules["effective_cache_size"] == "12GB"
    assert rules["maintenance_work_mem"] == "1GB"
    assert rules["wal_buffers"] == "16MB"
    assert rules["work_mem"] == "20971kB"
    assert rules["random_page_cost"] == "1.1" and rules["effective_io_concurrency"] == "200"
    assert (rules["min_wal_size"], rules["max_wal_size"]) == ("2GB", "8GB")
    assert rules["max_parallel_workers_per_gather"] == "2"
    assert "max_worker_processes" not in pgtune.rules(4 * GIB, 2, 100, "hdd", CAT18)
    assert pgtune.rules(4 * GIB, 2, 100, "hdd", CAT18)["random_page_cost"] == "4"


def test_memory_counts_work_mem_per_client_and_automatic_wal_buffers() -> None:
    mem = constraints.memory({"shared_buffers": "1GB", "work_mem": "4MB"}, CAT18, clients=10)
    parts = dict(mem.parts)
    assert parts["shared_buffers"] == GIB and parts["wal_buffers"] == 16 * 2**20  # 1/32, ≤ 16MB
    assert parts["work_mem"] == 40 * 2**20 and parts["maintenance_work_mem"] == 64 * 2**20
    assert mem.text() == ("shared_buffers 1.0 GiB + wal_buffers 16 MiB + maintenance_work_mem "
                          "64 MiB + work_mem 4 MiB × 10 clients = 1.1 GiB")  # fmt: skip
    assert constraints.excess(mem, 2 * GIB, 0.5) > 0 > constraints.excess(mem, 4 * GIB, 0.5)


def test_a_constraint_that_excludes_everything_is_found_from_the_smallest_configuration() -> None:
    asked = [KnobSpec("shared_buffers", "1GB", "2GB"), KnobSpec("work_mem", "1MB", "64MB", True)]
    knobs, _ = space.resolve(asked, CAT18, False, {})
    why = constraints.excludes_everything(knobs, {}, CAT18, 4, 4 * GIB, 0.1)
    assert why is not None and "even the smallest asks shared_buffers 1.0 GiB" in why
    assert "work_mem 1 MiB × 4 clients" in why and "memory_share = 0.1 of 4.0 GiB RAM" in why
    assert constraints.excludes_everything(knobs, {}, CAT18, 4, 4 * GIB, 0.5) is None


# -- confirmation ----------------------------------------------------------------------------


def rec(number: int, value: float | None, outcome: str = "ok", feasible: bool = True,
        **settings: str) -> TrialRecord:  # fmt: skip
    return TrialRecord(number, "sampler", outcome, settings or {"work_mem": f"{number}MB"},
                       value, value, None, feasible)  # fmt: skip


def test_candidates_are_the_defaults_pgtune_and_the_best_distinct_feasible_trials() -> None:
    records = [rec(0, 100), rec(1, 300, work_mem="8MB"), rec(2, 250), rec(3, 290, work_mem="8MB"),
               rec(4, 999, feasible=False), rec(5, None, "failed"), rec(6, 200)]  # fmt: skip
    cands = confirm.candidates(records, TuneSpec(), {"shared_buffers": "4GB"})
    assert [c.label for c in cands] == ["default", "pgtune", "trial 1", "trial 2", "trial 6"]
    assert cands[1].settings == (("shared_buffers", "4GB"),) and cands[2].search_value == 300
    p99 = confirm.candidates(records, TuneSpec(objective="p99", pgtune=False, confirm_top=1), {})
    assert [c.label for c in p99] == ["default", "trial 0"]  # lowest is best


def test_confirmation_runs_are_interleaved_rounds() -> None:
    cands = [confirm.Candidate(x, ()) for x in ("default", "pgtune", "trial 1")]
    order = confirm.schedule(cands, 3, seed=0)
    assert [r for _, r in order] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    for r in (1, 2, 3):
        assert {c.label for c, rr in order if rr == r} == {"default", "pgtune", "trial 1"}
    assert order == confirm.schedule(cands, 3, seed=0)  # seeded: a resumed study keeps it
    assert confirm.count(TuneSpec()) == 25


STEADY = [1000.0, 1010.0, 995.0, 1005.0, 990.0]
# another candidate's own noise: the runs of a round pair (confirmation's rounds are
# interleaved), so a candidate is not given the defaults' runs times a factor
OWN = STEADY[::-1]


def test_the_answer_is_the_best_significantly_better_configuration() -> None:
    d = confirm.decide("tps", {"default": STEADY, "pgtune": [v * 1.05 for v in OWN],
                               "trial 3": [v * 1.20 for v in OWN],
                               "trial 7": [v * 1.02 for v in OWN]})  # fmt: skip
    assert d.winner == "trial 3"
    assert d.text.startswith("trial 3 is significantly better than the defaults: TPS +20.0%")
    assert [r.label for r in d.rows] == ["default", "pgtune", "trial 3", "trial 7"]
    assert d.rows[0].comparison is None and d.rows[2].comparison.verdict == "+"
    # asked of the engine: paired by round, as show judges a campaign's points
    assert "pair by round" in d.rows[2].comparison.why
    assert d.rows[2].comparison.method in ("blocked", "paired")


def test_noise_or_nothing_better_gives_no_winner() -> None:
    noisy = {"default": [900.0, 1100.0, 1000.0], "trial 1": [950.0, 1250.0, 1050.0]}
    d = confirm.decide("tps", noisy)
    assert d.winner is None and d.text == confirm.NONE_BETTER
    worse = confirm.decide("tps", {"default": STEADY, "trial 1": [v * 0.8 for v in OWN]})
    assert worse.winner is None and worse.rows[1].comparison.verdict == "-"


def test_p99_is_better_lower_and_a_limit_excludes_a_faster_configuration() -> None:
    lat = {"default": [5.0, 5.1, 4.9, 5.0], "trial 2": [4.0, 4.1, 3.9, 4.0]}
    assert confirm.decide("p99", lat).winner == "trial 2"
    tps = {"default": STEADY, "trial 1": [v * 1.3 for v in OWN]}
    p99s = {"default": [4.0] * 5, "trial 1": [25.0] * 5}
    d = confirm.decide("tps", tps, p99s, limit_ms=20)
    assert d.winner is None and not d.rows[1].within_limit


def test_confirm_max_makes_the_confirmation_adaptive_and_is_checked() -> None:
    spec, problems = parse_tune({"confirm_max": 15})
    assert not problems and spec.adaptive and spec.confirm_rounds == 15
    assert confirm.count(spec) == 75 and confirm.count_text(spec) == "25–75"
    fixed = parse_tune({"confirm_max": 5})[0]  # as many as confirm_repeats: a fixed design
    assert not fixed.adaptive and confirm.count_text(fixed) == "25"
    assert confirm.count_text(TuneSpec()) == "25" and not TuneSpec().adaptive
    _, problems = parse_tune({"confirm_repeats": 6, "confirm_max": 4})
    assert problems == ["[tune]: confirm_max = 4 is below confirm_repeats = 6: confirmation "
                        "runs confirm_repeats rounds, then more up to confirm_max while "
                        "undecided"]  # fmt: skip
    _, problems = parse_tune({"confirm_repeats": 0, "confirm_max": 4})
    assert problems == ["[tune]: confirm_max needs a confirmation: confirm_repeats is 0"]


ADAPTIVE = TuneSpec(confirm_repeats=5, confirm_max=15)


def test_adaptive_rounds_go_on_for_the_undecided_and_the_defaults() -> None:
    steady = STEADY + STEADY[:1]
    clear = {"default": steady, "trial 3": [v * 1.40 for v in steady]}
    assert confirm.undecided(clear, ADAPTIVE) == set()  # +40% at 1% noise: decided "+"
    close = {"default": steady, "trial 3": [v * 1.40 for v in steady],
             "trial 7": [v * 1.04 for v in (1000, 1040, 960, 1030, 970, 1000)]}  # fmt: skip
    # +4% against a 5% effect of interest: neither "+" nor "~" yet; the defaults go on too
    assert confirm.undecided(close, ADAPTIVE) == {"default", "trial 7"}
    few = {"default": STEADY[:3], "trial 3": [v * 1.40 for v in STEADY[:3]]}
    assert confirm.undecided(few, ADAPTIVE) == {"default", "trial 3"}  # under confirm_repeats


def test_an_adaptive_decision_is_judged_on_the_anytime_valid_interval() -> None:
    values = {"default": STEADY * 2, "trial 3": [v * 1.20 for v in OWN * 2]}
    fixed = confirm.decide("tps", values)
    d = confirm.decide("tps", values, adaptive=True)
    assert d.winner == "trial 3" and "sequential" in d.rows[1].comparison.reason
    seq, paired = d.rows[1].comparison, fixed.rows[1].comparison
    assert "pair by round" in seq.why and "pair by round" in paired.why
    assert seq.ci_high - seq.ci_low > paired.ci_high - paired.ci_low  # the price of looking often


class _Run:
    def __init__(self, variant: str, tps: float, repeat: int = 1) -> None:
        self.variant, self.tps, self.ok, self.metrics = variant, tps, True, {}
        self.repeat = repeat


class _Search:
    """What ``confirm._rounds`` reads: the spec, the store's runs, a status line."""

    def __init__(self, spec: TuneSpec, runs: list[_Run]) -> None:
        from types import SimpleNamespace

        self.setup = SimpleNamespace(spec=spec, campaign=SimpleNamespace(name="t"))
        self.runs, self.said = runs, []
        self.store = SimpleNamespace(list_runs=lambda name: list(self.runs))
        self.events = SimpleNamespace(status=self.said.append)


def _confirm_rounds(runs: dict[str, list[float]], spec: TuneSpec) -> tuple[list, list[str]]:
    """The rounds ``confirm._rounds`` asks for, each candidate's round r run storing its
    ``runs[label][r - 1]``; (rounds as (r, labels), the status lines)."""
    cands = [confirm.Candidate(label, ()) for label in runs]
    search = _Search(spec, [])
    seen = []
    for r, rnd in confirm._rounds(search, cands, 5.0):  # type: ignore[arg-type]
        seen.append((r, sorted(c.label for c in rnd)))
        search.runs += [_Run(confirm.PREFIX + c.label, runs[c.label][r - 1], r) for c in rnd]
    return seen, search.said


NOISE = [1000.0, 1010.0, 995.0, 1005.0, 990.0, 1002.0, 998.0, 1008.0]


def test_adaptive_rounds_stop_once_every_comparison_is_decided() -> None:
    spec = TuneSpec(confirm_repeats=3, confirm_max=8)
    seen, said = _confirm_rounds({"default": NOISE, "trial 3": [v * 1.4 for v in NOISE[::-1]]},
                                 spec)  # fmt: skip
    # +40% at 1% noise: decided at the first look, after confirm_repeats rounds
    assert seen == [(r, ["default", "trial 3"]) for r in (1, 2, 3)]
    assert said == ["confirmation decided after 3 rounds"]
    # +4% at 2-4% noise against a 5% effect of interest stays undecided to the last round,
    # with the defaults; +40% stops as soon as it is decided
    wobbly = [1040.0, 1000.0, 1080.0, 1010.0, 1070.0, 990.0, 1060.0, 1020.0]
    seen, said = _confirm_rounds({"default": NOISE, "trial 3": [v * 1.4 for v in NOISE[::-1]],
                                  "trial 7": wobbly}, spec)  # fmt: skip
    assert [r for r, _ in seen] == list(range(1, 9)) and said == []
    # with two comparisons, 3 rounds are too few for their anytime-valid intervals (paired by
    # round: 2 degrees of freedom at α/2): +40% is decided at the fourth
    assert seen[3][1] == ["default", "trial 3", "trial 7"]
    assert [labels for _, labels in seen[4:]] == [["default", "trial 7"]] * 4


# -- what a person reads --------------------------------------------------------------------


def made_up_summary() -> summary.TuneSummary:
    spec = TuneSpec(trials=5, confirm_repeats=5, confirm_top=1)
    records = (
        TrialRecord(0, "default", "ok", {"shared_buffers": "128MB", "wal_compression": "off"},
                    2810.4, 2810.4, 4.1),
        TrialRecord(1, "pgtune", "ok", {"shared_buffers": "2GB", "wal_compression": "pglz"},
                    3120.9, 3120.9, 3.8),
        TrialRecord(2, "sampler", "infeasible", {"shared_buffers": "8GB"},
                    error="over the memory constraint: shared_buffers 8.0 GiB + … = 8.1 GiB"),
        TrialRecord(3, "sampler", "failed", {"shared_buffers": "1GB", "wal_compression": "lz4"},
                    error='FATAL:  "max_wal_size" must be at least twice "wal_segment_size"'),
        TrialRecord(4, "sampler", "ok", {"shared_buffers": "1GB", "wal_compression": "off"},
                    3301.2, 3301.2, 3.5),
        TrialRecord(5, "sampler", "ok", {"shared_buffers": "512MB", "wal_compression": "pglz"},
                    2990.0, 2990.0, 3.9),
    )  # fmt: skip
    cands = (confirm.Candidate("default", ()),
             confirm.Candidate("pgtune", (("shared_buffers", "2GB"),)),
             confirm.Candidate("trial 4", (("shared_buffers", "1GB"), ("wal_compression", "off")),
                               4, 3301.2))  # fmt: skip
    values = {"default": STEADY, "pgtune": [v * 1.03 for v in OWN],
              "trial 4": [v * 1.12 for v in OWN]}  # fmt: skip
    return summary.TuneSummary(
        "tune-tpcb", spec, records, (2810.4, 3120.9, 3120.9, 3120.9, 3301.2, 3301.2),
        {"shared_buffers": "128MB … 4GB, log", "wal_compression": "off | pglz | lz4"},
        {"shared_buffers": 0.83, "wal_compression": 0.17}, "PED-ANOVA (Optuna), over 4 "
        "measured trials", cands, confirm.decide("tps", values),
    )  # fmt: skip


def golden(name: str, text: str) -> None:
    path = DATA / "golden" / name
    if os.environ.get("PGLAB_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"differs from {path}: PGLAB_UPDATE_GOLDEN=1 rewrites it"


def test_the_study_as_show_prints_it() -> None:
    from pglab.cli.tune import summary_lines

    s = made_up_summary()
    text = "\n".join(summary_lines(s)) + "\n"
    golden("tune_summary.txt", text)
    assert "answer: trial 4 is significantly better than the defaults: TPS +12.0%" in text
    assert "  shared_buffers = '1GB'\n  wal_compression = 'off'\n" in text
    assert s.snippet() is not None and s.snippet().startswith("# pglab tune tune-tpcb: trial 4")


def test_a_trial_line_as_the_live_table_prints_it() -> None:
    from pglab.cli.tune import trial_line

    s = made_up_summary()
    lines = [trial_line(r, s.records[4] if r.number >= 4 else s.records[1], i, 5, 75.0 * (5 - i),
                        "tps") for i, r in enumerate(s.records[:2] + s.records[3:], 1)]  # fmt: skip
    golden("tune_trials.txt", "\n".join(lines) + "\n")
    assert lines[0].startswith("trial 1/5 #0 default: ✓ 2,810.4 tps (p99 4.1 ms)")
    assert "ETA 5m00s" in lines[0] and "ETA" not in lines[-1]


@pytest.mark.parametrize("sampler", ["tpe", "cmaes", "random"])
def test_each_sampler_asks_within_the_knobs_and_learns_from_told_trials(sampler: str) -> None:
    import optuna

    from pglab.tune import study as studies

    knobs, _ = space.resolve([KnobSpec("shared_buffers", "16MB", "1GB", True),
                              KnobSpec("wal_compression", choices=("off", "pglz"))],
                             CAT18, False, {})  # fmt: skip
    st = optuna.create_study(direction="maximize",
                             sampler=studies.make_sampler(TuneSpec(sampler=sampler)))  # fmt: skip
    dists = {k.name: k.distribution() for k in knobs}
    for _ in range(12):
        with studies.quiet():  # as the search asks and tells
            trial = st.ask(dists)
        values = space.settings_of(knobs, trial.params)
        assert 2048 <= trial.params["shared_buffers"] <= 131072 and values["shared_buffers"]
        trial.set_constraint(studies.CONSTRAINT, -1.0)
        with studies.quiet():
            st.tell(trial, float(trial.params["shared_buffers"]))
    assert len(st.trials) == 12


def test_gp_without_pytorch_is_a_clear_error() -> None:
    import importlib.util

    from pglab.errors import CampaignError
    from pglab.tune import study as studies

    if importlib.util.find_spec("torch") is not None:
        assert studies.make_sampler(TuneSpec(sampler="gp")) is not None
        return
    with pytest.raises(CampaignError, match="needs PyTorch"):
        studies.make_sampler(TuneSpec(sampler="gp"))


def test_the_example_s_knobs_are_accepted_by_the_embedded_18() -> None:
    """examples/tune.toml runs on the embedded 18 (built without lz4): its knobs resolve."""
    from pglab.tune import spec as tune_spec

    _, spec = tune_spec.load(Path(__file__).parents[2] / "examples" / "tune.toml")
    knobs, problems = space.resolve(list(spec.knobs), CAT18, unsafe=False, fixed={})
    assert problems == [] and len(knobs) == len(spec.knobs)


def _result(status: RunStatus, measured: bool = True) -> RunResult:
    hist = latency_hist.histogram([1000.0] * 98 + [50_000.0] * 2)  # 1 ms, and 2% at 50 ms
    second = LatencySecond(1, 100, 0, 2.0, 50.0, 1.0, 1.0, 50.0, histogram=hist)
    report = PgbenchReport(tps=100.0, transactions=100)
    phase = PhaseResult("main", 1, measured, 0.0, 1.0, (), report, latency=(second,))
    return RunResult(
        "t",
        "k",
        "p",
        1,
        "trial 0",
        "trial 0",
        {},
        status,
        0.0,
        1.0,
        phases=(phase,),
        metrics=RunMetrics({MetricKey("tps"): 100.0}),
    )


def test_what_tune_adds_to_the_runs_it_stores_is_their_p99() -> None:
    """``with_p99``, the session's amend of tune's runs: an ok run's p99 over its measured
    phases among its metrics; a failed run, or one that logged no latencies, as it was."""
    ok = trials.with_p99(_result("ok"))
    assert ok.metrics.value("tps") == 100.0
    assert 45.0 < ok.metrics.value(trials.P99) < 55.0  # the 99th of 100 is in the 50 ms bucket
    assert list(ok.metrics.of_run()) == ["tps", trials.P99]  # stored last, as before
    assert trials.with_p99(_result("failed")).metrics == _result("failed").metrics
    assert trials.with_p99(_result("ok", measured=False)).metrics.of_run() == {"tps": 100.0}
