"""The evidence of a comparison (analysis/evidence.py) on figures with known answers."""

from __future__ import annotations

import json

import pytest

from pglab.analysis import evidence
from pglab.analysis.evidence import Item


def _sides(a: list[dict[str, float]], b: list[dict[str, float]]):
    return dict(enumerate(a, 1)), dict(enumerate(b, 1))


def test_a_wait_that_vanishes_ranks_before_what_follows_the_throughput() -> None:
    # WALSync waits vanish (B's runs never saw one: zero sessions, not missing); CPU user
    # rises by a third with far less noise relative to its change
    a = [{"wait:IO:WALSync": w, "wait:CPU:running": 1.0 + e, "cpu_user_pct": 60.0 + e}
         for w, e in ((0.70, 0.0), (0.74, 0.3), (0.69, -0.2), (0.72, 0.1))]  # fmt: skip
    b = [{"wait:CPU:running": 1.5 + e, "cpu_user_pct": 80.0 + e} for e in (0.0, 0.2, -0.1, 0.1)]
    found = evidence.items(*_sides(a, b), paired=True)
    assert [i.key for i in found] == ["wait:IO:WALSync", "wait:CPU:running", "cpu_user_pct"]
    first = found[0]
    assert first.method == "paired" and first.b == 0.0
    assert first.delta == pytest.approx(-0.7125)
    assert first.ci_low < first.delta < first.ci_high < 0
    assert first.text.startswith("WALSync waits −0.71 sessions [")
    assert first.text.endswith("(0.71 → 0.000): commits wait less for the WAL flush")


def test_the_busy_machine_ranks_first_whatever_moved_more() -> None:
    a = [{"others_cpu_pct": 80.0 + e, "postgres_cpu_pct": 90.0 + e} for e in (0, 5, -5, 2)]
    b = [{"others_cpu_pct": 150.0 + e, "postgres_cpu_pct": 20.0 + e} for e in (0, 5, -5, 1)]
    found = evidence.items(*_sides(a, b), paired=False)
    assert [i.key for i in found] == ["others_cpu_pct", "postgres_cpu_pct"]
    assert found[0].method == "welch" and found[0].outside
    assert "another process took CPU" in found[0].text


def test_noise_and_small_moves_are_not_evidence() -> None:
    a = [{"cpu_user_pct": v, "cpu_iowait_pct": 0.2} for v in (50.0, 60.0, 55.0)]
    b = [{"cpu_user_pct": v, "cpu_iowait_pct": 0.3} for v in (52.0, 61.0, 54.0)]
    # user: within its noise; iowait: every run alike, moved 0.1 point, under its 1-point floor
    assert evidence.items(*_sides(a, b), paired=True) == []


def test_a_figure_one_side_lacks_is_left_out_and_one_run_a_side_is_not_tested() -> None:
    a = [{"cpu_user_pct": 50.0}, {"cpu_user_pct": 51.0}]
    b = [{"others_cpu_pct": 5.0}, {"others_cpu_pct": 6.0}]
    assert evidence.items(*_sides(a, b), paired=False) == []
    one = evidence.items({1: {"cpu_user_pct": 10.0}}, {1: {"cpu_user_pct": 90.0}}, paired=True)
    assert one == []


def test_a_constant_difference_is_evidence_without_noise() -> None:
    a = [{"checkpoints": 0.0}] * 3
    b = [{"checkpoints": 2.0}] * 3
    (item,) = evidence.items(*_sides(a, b), paired=True)
    assert (item.delta, item.ci_low, item.ci_high, item.p_value) == (2.0, 2.0, 2.0, 0.0)


def test_every_rule_has_a_name_a_floor_and_wait_events_read_in_any_case() -> None:
    for key, rule in evidence.RULES.items():
        assert rule.name and rule.floor > 0, key
    rule = evidence.rule_of("wait:IO:WalSync")  # PostgreSQL 17's spelling
    assert rule.name == "WalSync waits" and rule.down
    assert evidence.rule_of("wait:CPU:running").name == "running on CPU"
    assert isinstance(evidence.items({}, {}, paired=True), list)
    assert Item.__doc__


def test_a_fall_of_others_cpu_is_ranked_as_any_other_figure() -> None:
    # the server took CPU back from the others on a machine whose CPUs are all in use
    a = [
        {"others_cpu_pct": 150.0 + e, "wait:IO:WALSync": 0.7 + e / 100, "wait:CPU:running": 1.0}
        for e in (0, 4, -3, 1)
    ]
    b = [{"others_cpu_pct": 110.0 + e, "wait:CPU:running": 1.0} for e in (0, 5, -5, 2)]
    found = evidence.items(*_sides(a, b), paired=True)
    assert [i.key for i in found] == ["wait:IO:WALSync", "others_cpu_pct"]
    assert not found[1].outside


def test_a_change_point_of_history_has_the_evidence_of_its_two_levels(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    from helpers.synthetic_runs import fill_executions

    from pglab.analysis import executions
    from pglab.cli import main
    from pglab.store import open_store

    path = tmp_path / "r.sqlite"
    fill_executions(path, "nightly")  # point base 1.5x faster from execution 5 on
    with open_store(str(path)) as store:
        found = executions.executions_of(store, "nightly")
        _, histories = executions.checked_histories(found, "nightly", "tps", None)
        (changed,) = [p for p in histories if p.changes]
        why = evidence.of_changes(store, histories)
        # what of_changes compares: the runs of executions 1-4 against 5-8, each on its own
        base = changed.point
        runs = {e.label: [r for r in e.runs if r.label == base] for e in found}
        a = {r.id: evidence.run_measures(store.get_run(r.id)) for n in "1234" for r in runs[n]}
        b = {r.id: evidence.run_measures(store.get_run(r.id)) for n in "5678" for r in runs[n]}
    assert [t for t, _ in why] == [f"{base} at 5"]  # the synthetic telemetry moved one item
    assert [i.key for _, items in why for i in items] == [
        i.key for i in evidence.items(a, b, paired=False)
    ]
    assert all(i.method == "welch" for _, items in why for i in items)
    assert main(["history", "nightly", "--store", str(path)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    for title, items in why:
        assert f"why it changed ({title})" in shown and items[0].text in shown
    # history --json: each change point with every item of its evidence
    assert main(["history", "nightly", "--json", "--store", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    (change,) = [c for p in out["points"] if p["point"] == base for c in p["changes"]]
    assert [i["key"] for i in change["evidence"]] == [i.key for _, items in why for i in items]
    assert change["evidence"][0]["text"] == why[0][1][0].text
    assert change["evidence"][0]["method"] == "welch" and "ci_low" in change["evidence"][0]


def test_a_bisect_step_has_the_evidence_of_its_middle_against_an_end(tmp_path) -> None:
    from helpers.synthetic_runs import fill

    from pglab.store import open_store

    with open_store(str(tmp_path / "r.sqlite")) as store:
        # the middle and bad commits 1.5x faster than good, interleaved rounds
        fill(store, "c@bisect-abc", variants=("good", "middle", "bad"), scripts=("select-only",),
             clients=(1,), repeats=4, seconds=5, effect=1.5)  # fmt: skip
        moved = evidence.of_variants(store, "c@bisect-abc", "good", "middle")
        alike = evidence.of_variants(store, "c@bisect-abc", "middle", "bad")
    # the synthetic server used 120% of a core whatever its TPS: less CPU per transaction
    (cpu,) = [i for i in moved if i.key == "postgres_cpu_us_xact"]
    assert cpu.method == "paired" and cpu.delta < 0 and cpu.b == pytest.approx(cpu.a / 1.5, 0.05)
    assert "postgres_cpu_us_xact" not in {i.key for i in alike}


def test_what_names_a_cause_ranks_before_a_machine_wide_figure_that_moved_with_it() -> None:
    """synchronous_commit off: the WAL-flush waits and the CPU's iowait both vanish (relative
    change 1); the wait names the cause, so it ranks first whatever their noise (CI once put
    iowait first, by |Δ|/SE)."""
    from pglab.analysis.evidence import Item, rank

    def item(key: str, t: float) -> Item:
        return Item(key, key, "", 1.0, 0.0, -1.0, -1.2, -0.8, 0.001, "paired", 1.0, False, t, "")

    ranked = rank([item("cpu_iowait_pct", 9.0), item("wait:IO:WalSync", 3.0)])
    assert [i.key for i in ranked] == ["wait:IO:WalSync", "cpu_iowait_pct"]


def test_among_functions_that_vanished_the_larger_share_ranks_first() -> None:
    """plan_cache_mode: the planner's chain (27.3 points of the backend's samples) and
    copyObjectImpl (1.9) both vanish (relative change 1); copyObjectImpl's smaller noise put it
    first by |Δ|/SE. Within the tie the functions take their places by the share that moved;
    a wait between them keeps its own place."""
    from pglab.analysis.evidence import Item, rank

    def item(key: str, delta: float, t: float) -> Item:
        return Item(key, key, "", -delta, 0.0, delta, delta * 1.1, delta * 0.9, 0.001,
                    "paired", 1.0, False, t, "")  # fmt: skip

    ranked = rank([
        item("cpu:backend:copyObjectImpl", -1.9, 50.0),
        item("wait:LWLock:LockManager", -0.05, 20.0),
        item("cpu:backend:planner", -27.3, 10.0),
        item("cpu_iowait_pct", -3.0, 90.0),  # the machine's: after the server's own
    ])  # fmt: skip
    assert [i.key for i in ranked] == [
        "cpu:backend:planner",
        "wait:LWLock:LockManager",
        "cpu:backend:copyObjectImpl",
        "cpu_iowait_pct",
    ]


def test_a_function_that_rose_most_ranks_before_one_that_vanished_in_the_noise() -> None:
    """The TPC-C-like kit, plan_cache_mode auto against force_custom_plan (three rounds on the
    loaded development machine): BuildCachedPlan rose 3.35 → 30.4 points (relative 0.89),
    ExecInsert's 5.45 points vanished (relative 1, its interval near zero). The functions'
    places go to them by the share that moved; the others keep theirs."""
    from pglab.analysis.evidence import Item, rank

    def item(key: str, a: float, b: float, t: float) -> Item:
        rel = abs(b - a) / max(a, b)
        return Item(key, key, "", a, b, b - a, b - a - 1, b - a + 1, 0.01, "paired", rel, False,
                    t, "")  # fmt: skip

    ranked = rank([
        item("cpu:backend:ExecInsert", 5.45, 0.0, 5.0),
        item("cpu:backend:BuildCachedPlan", 3.35, 30.4, 4.7),
        item("postgres_cpu_us_xact", 1042.0, 1584.0, 11.1),
        item("cpu:backend:StartReadBuffer", 16.8, 12.0, 60.5),
    ])  # fmt: skip
    assert [i.key for i in ranked] == [
        "cpu:backend:BuildCachedPlan",
        "cpu:backend:ExecInsert",
        "cpu:backend:StartReadBuffer",  # relative 0.3 as the server's CPU, with less noise
        "postgres_cpu_us_xact",
    ]


def test_a_rate_that_merely_follows_the_throughput_is_no_evidence() -> None:
    """TPS doubles: the client's CPU doubles with it (the same per transaction: pruned), the
    disk's writes quadruple (twice as much per transaction: kept), and the throughput itself
    is what the comparison already says (never an item)."""

    def side(tps: float, noise: tuple[float, ...], per_mb: float) -> list[dict[str, float]]:
        return [
            {
                "throughput": tps + e,
                "pgbench_cpu_pct": (tps + e) / 50,
                "disk_write_mb_s": (tps + e) * per_mb,
            }
            for e in noise
        ]

    a = side(1000.0, (0.0, 30.0, -20.0, 10.0), 0.01)
    b = side(2000.0, (10.0, -30.0, 20.0, 0.0), 0.02)
    found = evidence.items(*_sides(a, b), paired=True)
    assert [i.key for i in found] == ["disk_write_mb_s"]
    # the same client CPU with the throughput unchanged: it moved on its own, an item
    steady = [{**m, "throughput": 1000.0 + k} for k, m in enumerate(b)]
    assert "pgbench_cpu_pct" in {i.key for i in evidence.items(*_sides(a, steady), paired=True)}
