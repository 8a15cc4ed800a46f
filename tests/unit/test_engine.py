"""One question, one answer (issue 52): ``analysis.engine`` judges every comparison, and the
pairing follows the runs' design for every figure, items included: runs of one interleaved
campaign pair by round (a TPC-H-like query, a script as much as the headline); Welch only
across campaigns."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.analysis import engine, points
from pglab.analysis import queries as tpch
from pglab.analysis.compare import Target, compare_points
from pglab.rows import CampaignRow, RunRow
from pglab.store import open_store

# what each round shares (a machine that drifts): large, so the runs apart cannot tell
DRIFT = [1.0, 0.55, 1.4, 0.8, 1.2]


def campaign(name: str = "h", **spec: object) -> CampaignRow:
    doc = {"name": name, "repeats": len(DRIFT), "variants": {"small": {}, "big": {}}, **spec}
    return {"id": 1, "name": name, "created_at": 0.0, "updated_at": 0.0,  # type: ignore[typeddict-item]
            "source_file": None, "pglab_version": "0", "runs_ok": 10, "runs_failed": 0,
            "last_run_at": None, "spec": doc}  # fmt: skip


def tpch_runs(name: str = "h") -> list[RunRow]:
    """Two points of a TPC-H-like campaign: Q10 36% slower under "big" in every round, the
    rounds drifting together; Q1 the same on both."""
    out = []
    for r, d in enumerate(DRIFT, 1):
        for label, q10 in (("small", 0.013), ("big", 0.013 / 0.638)):
            metrics = {"q01_s": 0.5 * d * (1 + r / 400), "q10_s": q10 * d * (1 + r / 300),
                       "power": 100.0 / d}  # fmt: skip
            out.append(RunRow(len(out) + 1, name, f"{label}/{r}", label, label, label, r, "ok",
                              100.0 / d, 0.0, 1.0, None, metrics))  # fmt: skip
    return out


def test_the_pairing_follows_the_design() -> None:
    one = campaign()
    assert engine.pairing(one).how == engine.ROUNDS
    assert engine.pairing(one, one).how == engine.ROUNDS
    assert engine.pairing(one, campaign("other")).how == engine.APART
    assert engine.pairing(campaign(order="sequential")).how == engine.APART
    auto = engine.pairing(campaign(repeats="auto", sequential={"precision": 2}))
    assert (auto.how, auto.precision) == (engine.SEQUENTIAL, 2)


def test_every_answer_says_its_test_and_why() -> None:
    a, b = {1: 100.0, 2: 90.0, 3: 110.0}, {1: 120.0, 2: 107.0, 3: 133.0, 4: 99.0}
    (c,) = engine.ask(engine.Question([engine.Pair(a, b)], engine.pairing(campaign())))
    assert c.method == "paired" and c.verdict == "+"
    assert c.why.startswith("paired (within-round ratios") and "pair by round" in c.why
    assert any("1 run(s) without their round's counterpart" in w for w in c.warnings)
    (w,) = engine.ask(
        engine.Question([engine.Pair(a, b)], engine.pairing(campaign(), campaign("x")))
    )
    assert w.method == "welch" and "do not pair" in w.why


def test_compare_and_show_give_a_query_the_same_answer(tmp_path: Path) -> None:
    """The bug of issue 52: show paired Q10 by round ("-36.2% [-39.6, -32.6] -") while compare
    gave it Welch's test on the runs apart ("-36.2% [-81.2, +116.6] ?")."""
    runs, camp = tpch_runs(), campaign()
    shown = {q.number: next(r for r in q.rows if r.point == "big").comparison
             for q in tpch.query_points(runs, camp)}  # fmt: skip
    small = [r for r in runs if r.label == "small"]
    big = [r for r in runs if r.label == "big"]
    with open_store(str(tmp_path / "s.sqlite")) as store:
        compared = tpch.compare_queries(store, small, big, 10.0, engine.pairing(camp), runs, camp)
        apart = tpch.compare_queries(store, small, big, 10.0)  # as if of two campaigns
    q10 = next(q["comparison"] for q in compared if q["query"] == 10)
    s10 = shown[10]
    assert s10 is not None and s10.verdict == "-" and s10.delta_pct == pytest.approx(-36.2, abs=0.3)
    assert (q10.delta_pct, q10.ci_low, q10.ci_high, q10.verdict) == (
        s10.delta_pct,
        s10.ci_low,
        s10.ci_high,
        s10.verdict,
    )
    assert "pair by round" in q10.why
    welch = next(q["comparison"] for q in apart if q["query"] == 10)
    assert welch.method == "welch" and welch.verdict != "-"  # what compare said before


def test_two_points_of_one_campaign_get_the_campaign_s_answer() -> None:
    runs, camp = tpch_runs(), campaign()
    a, b = (Target("point", p, "h", p, runs=[r for r in runs if r.label == p])
            for p in ("small", "big"))  # fmt: skip
    said = compare_points(a, b, 10.0, None, engine.pairing(camp), runs, camp)
    c = said["pairs"][0]["comparison"]
    shown = next(r.comparison for r in points.campaign_rows(runs, camp) if r.point == "big")
    assert c == shown
    # B against A the other way round is not the campaign's comparison: paired alone
    back = compare_points(b, a, 10.0, None, engine.pairing(camp), runs, camp)
    assert "pair by round" in back["pairs"][0]["comparison"].why


def axis_runs() -> list[RunRow]:
    """A campaign of one variant whose question is a matrix axis, at two client counts:
    synchronous_commit = off 30% faster in every round."""
    out = []
    for r, d in enumerate(DRIFT, 1):
        for clients in (1, 8):
            for sc, gain in (("on", 1.0), ("off", 1.3)):
                axes = {"clients": clients, "settings.synchronous_commit": sc}
                label = f"clients={clients} settings.synchronous_commit={sc}"
                tps = 100.0 * clients * gain * d * (1 + r / 200)
                out.append(RunRow(len(out) + 1, "sc", f"{label}/{r}", label, "base", label, r,
                                  "ok", tps, 0.0, 1.0, None, {"tps": tps}, axes))  # fmt: skip
    return out


def test_a_matrix_axis_is_compared_with_its_first_value() -> None:
    """``[matrix.settings] synchronous_commit = ["on", "off"]`` asks what the same question as
    ``[variants]`` asks: each "off" point gets its Δ% and verdict against the "on" point at the
    same client count (it got none before issue 52)."""
    matrix = {"clients": [1, 8], "settings": {"synchronous_commit": ["on", "off"]}}
    camp = campaign("sc", variants={"base": {}}, matrix=matrix)
    assert points.axis_baseline_of(camp) == {"settings.synchronous_commit": "on"}
    assert points.reference_of(camp) == "synchronous_commit=on"
    rows = {r.point: r for r in points.campaign_rows(axis_runs(), camp)}
    for clients in (1, 8):
        on = rows[f"clients={clients} settings.synchronous_commit=on"]
        off = rows[f"clients={clients} settings.synchronous_commit=off"]
        assert on.is_base and on.comparison is None
        assert off.comparison is not None and off.comparison.verdict == "+"
        assert off.comparison.delta_pct == pytest.approx(30.0, abs=0.5)
        assert "pair by round" in off.comparison.why
    # a setting written as a boolean is labelled as the server says it ("on"/"off")
    fsync = campaign("f", variants={"base": {}}, matrix={"settings": {"fsync": [True, False]}})
    assert points.axis_baseline_of(fsync) == {"settings.fsync": "on"}
    # the load's shape is no question: clients alone gives no comparison
    assert points.axis_baseline_of(campaign("c", variants={"base": {}},
                                            matrix={"clients": [1, 8]})) == {}  # fmt: skip


def test_points_of_different_workloads_are_not_comparable() -> None:
    """A TPC-C-like variant beside a pgbench one: no "Δ% vs tpcb" for the NOPM point."""
    runs = []
    for r, d in enumerate(DRIFT, 1):
        for variant, metrics in (("tpcb", {"tps": 900.0 * d}),
                                 ("tpcc", {"tps": 300.0 * d, "nopm": 5000.0 * d})):  # fmt: skip
            runs.append(RunRow(len(runs) + 1, "k", f"{variant}/{r}", variant, variant, variant,
                               r, "ok", metrics["tps"], 0.0, 1.0, None, metrics))  # fmt: skip
    camp = campaign("k", variants={"tpcb": {}, "tpcc": {}})
    rows = {r.point: r for r in points.campaign_rows(runs, camp)}
    assert rows["tpcc"].comparison is None and rows["tpcc"].figure == "NOPM"
    assert rows["tpcc"].incomparable == "NOPM against tps: their workloads differ"
    a, b = (Target("point", p, "k", p, runs=[r for r in runs if r.label == p])
            for p in ("tpcb", "tpcc"))  # fmt: skip
    said = compare_points(a, b, 10.0, None, engine.pairing(camp), runs, camp)
    c = said["pairs"][0]["comparison"]
    assert c is not None and any(w.startswith("not comparable: A's figure is tps, B's NOPM")
                                 for w in c.warnings), c.warnings  # fmt: skip


def test_the_plan_judges_a_matrix_axis_campaign_s_design() -> None:
    """``pglab run --dry-run`` says whether the repeats can resolve a matrix axis's comparisons
    as it does for variants' (it said nothing of a campaign of one variant)."""
    from pglab.campaign.parse import parse
    from pglab.planning.plan import make_plan

    doc = {"repeats": 3, "matrix": {"clients": [1, 4],
                                    "settings": {"synchronous_commit": ["on", "off"]}}}  # fmt: skip
    design = points.design_check(make_plan(parse(doc, "sc")), [], {})
    assert design is not None and design.comparisons == 2, design
    assert (
        points.design_check(make_plan(parse({"matrix": {"clients": [1, 4]}}, "c")), [], {}) is None
    )


def test_variants_of_different_workloads_are_compared_along_their_axis() -> None:
    """examples/tpcc-vs-tpcb.toml: a TPC-C-like and a pgbench variant, each with
    plan_cache_mode = [auto, force_custom_plan]: the question is the axis within each
    variant (show said "Δ% vs tpcb" across the two workloads)."""
    runs = []
    for r, d in enumerate(DRIFT, 1):
        for variant in ("tpcb", "tpcc"):
            for mode, cost in (("auto", 1.0), ("force_custom_plan", 0.8)):
                label = f"{variant} settings.plan_cache_mode={mode}"
                noise = 1 + 0.01 * ((r * 3 + len(label)) % 4)  # a little, its own per run
                tps = (900.0 if variant == "tpcb" else 300.0) * d * noise
                metrics = {"tps": tps} if variant == "tpcb" else {"tps": tps, "nopm": tps * cost}
                runs.append(RunRow(len(runs) + 1, "k", f"{label}/{r}", label, variant, label, r,
                                   "ok", tps, 0.0, 1.0, None, metrics,
                                   {"settings.plan_cache_mode": mode}))  # fmt: skip
    matrix = {"settings": {"plan_cache_mode": ["auto", "force_custom_plan"]}}
    camp = campaign("k", variants={"tpcb": {}, "tpcc": {}}, matrix=matrix)
    assert points.reference_variant(camp, runs) is None
    assert points.reference_of(camp, runs) == "plan_cache_mode=auto"
    rows = {r.point: r for r in points.campaign_rows(runs, camp)}
    forced = rows["tpcc settings.plan_cache_mode=force_custom_plan"].comparison
    assert forced is not None and forced.verdict == "-"
    assert forced.delta_pct == pytest.approx(-20.0, abs=2.0) and "pair by round" in forced.why
    same = rows["tpcb settings.plan_cache_mode=force_custom_plan"].comparison
    assert same is not None and abs(same.delta_pct) < 3.0
    assert rows["tpcc settings.plan_cache_mode=auto"].is_base


def test_repeats_auto_is_judged_like_a_fixed_campaign() -> None:
    """Issue 57 item 6: an auto campaign's answers are the engine's, paired by round as a fixed
    campaign's, in the same words: "=" (no difference beyond the effect) where the sequence
    once stopped at "~", and the drift of the rounds cancelled."""
    auto = campaign(repeats="auto", sequential={"max": 10})
    a = dict(zip(range(1, 6), (100.0 * d for d in DRIFT), strict=True))
    same = {r: v * (1.002 if r % 2 else 0.998) for r, v in a.items()}
    slower = {r: v * (0.9 if r % 2 else 0.902) for r, v in a.items()}
    pairs = [engine.Pair(a, same), engine.Pair(a, slower)]
    eq, down = engine.ask(engine.Question(pairs, engine.pairing(auto), 5.0))
    fixed_eq, fixed_down = engine.ask(engine.Question(pairs, engine.pairing(campaign()), 5.0))
    assert (eq.verdict, down.verdict) == ("=", "-") == (fixed_eq.verdict, fixed_down.verdict)
    assert eq.method == "sequential" and "pair by round" in eq.why
    assert "no difference beyond ±5%" in eq.reason
    # the rounds drift by ±45%: apart, nothing could be told
    apart = engine.ask(engine.Question(pairs, engine.Pairing(engine.APART, "apart"), 5.0))
    assert [c.verdict for c in apart] == ["?", "?"]


def test_repeats_auto_stops_along_a_matrix_axis() -> None:
    """The rounds of an auto campaign whose question is a matrix axis judge each "off" point
    against the "on" point at the same client count (they judged nothing but a variant's)."""
    from pglab.campaign.parse import parse
    from pglab.planning.plan import make_plan
    from pglab.planning.rounds import points_of

    matrix = {"clients": [1, 4], "settings": {"synchronous_commit": ["on", "off"]}}
    doc = {"repeats": "auto", "matrix": matrix}
    camp = parse(doc, "sc")
    plan = make_plan(camp)
    found = {p.key: p.against for p in points_of(camp, plan.points)}
    label = {p.point_key: p.label for p in plan.points}
    assert {label[k]: label.get(a or "") for k, a in found.items()} == {
        "clients=1 settings.synchronous_commit=on": None,
        "clients=1 settings.synchronous_commit=off": "clients=1 settings.synchronous_commit=on",
        "clients=4 settings.synchronous_commit=on": None,
        "clients=4 settings.synchronous_commit=off": "clients=4 settings.synchronous_commit=on",
    }
    # variants of one workload: against the first variant's point, as show compares them
    two = parse({"repeats": "auto", "variants": {"a": {}, "b": {}}}, "v")
    pts = make_plan(two).points
    by_variant = {p.variant: p.point_key for p in pts}
    assert {p.key: p.against for p in points_of(two, pts)} == {
        by_variant["a"]: None,
        by_variant["b"]: by_variant["a"],
    }


def test_analysis_reference_names_what_the_others_are_compared_with() -> None:
    """``[analysis] reference``: another variant, or another value of a compared axis, is the
    reference of every view's comparisons (points.campaign_rows, which show, compare, the report
    and serve render) and of the rounds of repeats = "auto"."""
    from pglab.campaign.parse import parse
    from pglab.planning.plan import make_plan
    from pglab.planning.rounds import points_of

    matrix = {"clients": [1, 8], "settings": {"synchronous_commit": ["on", "off"]}}
    ref = {"reference": {"synchronous_commit": "off"}}
    camp = campaign("sc", variants={"base": {}}, matrix=matrix, analysis=ref)
    assert points.axis_baseline_of(camp) == {"settings.synchronous_commit": "off"}
    assert points.reference_of(camp) == "synchronous_commit=off"
    rows = {r.point: r for r in points.campaign_rows(axis_runs(), camp)}
    for clients in (1, 8):
        on = rows[f"clients={clients} settings.synchronous_commit=on"]
        assert rows[f"clients={clients} settings.synchronous_commit=off"].is_base
        assert on.comparison is not None and on.comparison.verdict == "-"
        assert on.comparison.delta_pct == pytest.approx(100 / 1.3 - 100, abs=0.5)
    parsed = parse({"repeats": "auto", "matrix": matrix, "analysis": ref}, "sc")
    assert parsed.reference == (("settings.synchronous_commit", "off"),)
    plan = make_plan(parsed)
    label = {p.point_key: p.label for p in plan.points}
    against = {label[p.key]: label.get(p.against or "") for p in points_of(parsed, plan.points)}
    assert against["clients=8 settings.synchronous_commit=on"] == (
        "clients=8 settings.synchronous_commit=off"
    )
    # a variant: the runs of "small" compared against "big"'s
    runs, two = tpch_runs(), campaign(analysis={"reference": {"variant": "big"}})
    assert points.baseline_of(two) == "big"
    small = next(r for r in points.campaign_rows(runs, two) if r.point == "small").comparison
    assert small is not None and small.delta_pct == pytest.approx(0.0, abs=1.0)


def test_a_reference_the_file_does_not_have_is_refused() -> None:
    from pglab.campaign.parse import parse
    from pglab.errors import CampaignError

    doc = {"variants": {"a": {}, "b": {}}, "matrix": {"clients": [1, 4], "settings": {
        "jit": [True, False]}}, "analysis": {"reference": {"variant": "c", "clients": 4,
                                                             "x": 1, "jit": "maybe"}}}  # fmt: skip
    with pytest.raises(CampaignError) as err:
        parse(doc, "r")
    said = str(err.value)
    assert "reference: variant = 'c' is not a variant of the file (a, b)" in said
    assert "reference: clients is the load's shape, never compared along" in said
    assert "reference: x is not a [matrix] axis of the file" in said
    assert "reference: jit = 'maybe' is not one of the axis's values (on, off)" in said
    ok = parse({**doc, "analysis": {"reference": {"variant": "b"}}}, "r")
    assert ok.reference == (("variant", "b"),)


def test_an_axis_reference_where_the_variants_are_the_question_is_refused() -> None:
    """Variants of one workload are compared at the same matrix coordinates: a reference
    naming an axis's value would be ignored (it was, silently); refused, saying what to do.
    Along an axis (one variant, or variants of different workloads) it is the reference."""
    from pglab.campaign.parse import parse
    from pglab.errors import CampaignError

    matrix = {"settings": {"synchronous_commit": ["on", "off"]}}
    ref = {"reference": {"synchronous_commit": "off"}}
    doc = {"variants": {"a": {}, "b": {}}, "matrix": matrix, "analysis": ref}
    with pytest.raises(CampaignError) as err:
        parse(doc, "r")
    assert (
        "reference: synchronous_commit = 'off' names an axis value, but the file's variants are "
        "its question (a, b): each point is compared with the reference variant's at the same "
        "matrix coordinates" in str(err.value).replace("\n  ", " ")
    )
    assert 'name a variant (reference = { variant = "NAME" })' in str(err.value)
    one = parse({"matrix": matrix, "analysis": ref}, "r")
    assert one.reference == (("settings.synchronous_commit", "off"),)
    kinds = {"tpcb": {"workload": {"script": "tpcb-like"}}, "tpcc": {"workload": {"kit": "tpcc"}}}
    apart = parse({**doc, "variants": kinds}, "r")  # compared along the axis, each on its own
    assert apart.reference == (("settings.synchronous_commit", "off"),)


def test_the_plan_of_an_auto_campaign_expects_its_axis_comparisons() -> None:
    """The plan's expected runs of a matrix axis's auto campaign count its comparisons (it
    expected every point done at min, as if nothing were compared)."""
    from pglab.campaign.parse import parse
    from pglab.planning.plan import make_plan

    matrix = {"clients": [1, 4], "settings": {"synchronous_commit": ["on", "off"]}}
    auto = {"repeats": "auto", "sequential": {"max": 10}}
    said = points.sequential_plan(make_plan(parse({**auto, "matrix": matrix}, "sc")), [], {})
    assert said is not None and (said.least, said.most) == (12, 40)
    assert said.expected > 16  # 5% noise assumed: 4 rounds at least for its 2 comparisons
    alone = points.sequential_plan(make_plan(parse({**auto, "matrix": {"clients": [1, 4]}},
                                                   "c")), [], {})  # fmt: skip
    assert alone is not None and alone.expected == 6  # nothing compared: min rounds each
