"""Two builds of one source run a few % apart (issue 58): the spread of identical builds kept
per lab and machine (postgres/build_spread.py), carried by a build's facts, held against every
"+"/"-" between two builds (verdicts.beyond_spread, through the one engine) and named by the
comparability guard; the parts that make two builds' servers alike (a fixed-length install
path, one environment for every server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pglab import procs
from pglab.analysis import engine, points, spreads, verdicts
from pglab.analysis.run_warnings import notices_of
from pglab.analysis.verdicts import Comparison
from pglab.lab import Lab
from pglab.postgres import build, build_spread
from pglab.rows import CampaignRow, StoredRun

# the c7 against c0: identical source, "+9.5% [+4.6, +14.6]"
C7 = Comparison(delta_pct=9.5, ci_low=4.6, ci_high=14.6, p_value=0.001, verdict="+",
                p_holm=0.003, n_a=3, n_b=3)  # fmt: skip


def test_a_plus_whose_interval_reaches_into_the_spread_is_not_the_sources() -> None:
    held = verdicts.beyond_spread(C7, 8.0)
    assert held.verdict == "?"
    assert held.reason.startswith("within the spread of identical builds: ±8.0%")
    assert "'+' without it" in held.reason and "[+4.6, +14.6]" in held.reason
    kept = verdicts.beyond_spread(C7, 4.0)  # the whole interval above +4%: it stands
    assert kept.verdict == "+" and kept.warnings[-1] == (
        "beyond the spread of identical builds (±4.0%)"
    )


def test_a_minus_is_held_the_same_way_and_other_verdicts_only_name_it() -> None:
    minus = Comparison(-12.0, -16.0, -7.5, 0.001, "-", p_holm=0.002)
    assert verdicts.beyond_spread(minus, 7.0).verdict == "-"
    assert verdicts.beyond_spread(minus, 8.0).verdict == "?"
    same = Comparison(1.0, -2.0, 4.0, 0.5, "~")
    named = verdicts.beyond_spread(same, 3.0)
    assert named.verdict == "~"
    assert "within the spread of identical builds: ±3.0%" in named.warnings[-1]
    assert verdicts.beyond_spread(C7, None) is C7 and verdicts.beyond_spread(C7, 0.0) is C7


ROUNDS = [1.0, 0.93, 1.06, 0.97]  # what each round shares


def test_the_engine_holds_a_pair_of_builds_to_its_spread() -> None:
    a = {r: 20_000 * d for r, d in enumerate(ROUNDS, 1)}
    b = {r: 20_000 * d * (1.07 + 0.01 * (r % 2)) for r, d in enumerate(ROUNDS, 1)}
    how = engine.Pairing(engine.ROUNDS, "runs of one interleaved campaign pair by round")
    (free,) = engine.ask(engine.Question([engine.Pair(a, b)], how))
    (held,) = engine.ask(engine.Question([engine.Pair(a, b, spread_pct=9.0)], how))
    assert free.verdict == "+" and free.ci_low is not None and free.ci_low < 9.0
    assert held.verdict == "?" and "identical builds: ±9.0%" in held.reason
    assert held.delta_pct == free.delta_pct  # the measurement is the same; the claim is not


FP: dict[str, Any] = {"kernel": "Linux 6.1.0", "server_build": {"assertions": "off"}}


def run(i: int, variant: str, tps: float, key: str, spread: float | None) -> StoredRun:
    built: dict[str, Any] = {"key": key, "version": "15.18"}
    if spread is not None:
        built["spread_pct"] = spread
    return StoredRun(
        id=i, campaign="c", run_key=f"{variant}/{i}", point_key=variant, variant=variant,
        label=variant, repeat=(i + 1) // 2, status="ok", tps=tps, started_at=float(i),
        finished_at=float(i) + 1, error=None, metrics={"tps": tps},
        spec={"server": {"settings": []}}, fingerprint={**FP, "build": built},
    )  # fmt: skip


def builds(spread: float | None, b_key: str = "bbbbbbbbbbbbbbbb") -> list[StoredRun]:
    out = []
    for r, d in enumerate(ROUNDS):
        out.append(run(2 * r + 1, "c0", 20_000 * d, "aaaaaaaaaaaaaaaa", spread))
        out.append(run(2 * r + 2, "c7", 20_000 * d * (1.07 + 0.01 * (r % 2)), b_key, spread))
    return out


CAMPAIGN: CampaignRow = {"id": 1, "name": "c", "created_at": 0.0, "updated_at": 0.0,  # type: ignore[typeddict-item]
                         "source_file": None, "pglab_version": "0", "runs_ok": 8,
                         "runs_failed": 0, "last_run_at": None,
                         "spec": {"name": "c", "repeats": 4,
                                  "variants": {"c0": {}, "c7": {}}}}  # fmt: skip


def test_show_holds_two_builds_to_the_spread_their_runs_carry() -> None:
    (c7,) = [p for p in points.campaign_rows(builds(9.0), CAMPAIGN) if p.comparison]
    assert c7.comparison is not None and c7.comparison.verdict == "?"
    (free,) = [p for p in points.campaign_rows(builds(None), CAMPAIGN) if p.comparison]
    assert free.comparison is not None and free.comparison.verdict == "+"
    # one build against itself: no spread applies
    (one,) = [p for p in points.campaign_rows(builds(9.0, "aaaaaaaaaaaaaaaa"), CAMPAIGN)
              if p.comparison]  # fmt: skip
    assert one.comparison is not None and one.comparison.verdict == "+"


def test_the_comparability_guard_names_the_spread_or_that_it_was_never_measured() -> None:
    said = [n.message for n in notices_of(builds(9.0), baseline="c0") if n.kind == "differs"]
    expected = ("compared with c0: two builds compared: identical builds run within ±9.0% of "
                "each other on this machine; a '+'/'-' must lie beyond it")  # fmt: skip
    assert said == [expected]
    (never,) = [n.message for n in notices_of(builds(None), baseline="c0")
                if n.kind == "differs"]  # fmt: skip
    assert "never measured (bench/build_bias.py --keep)" in never
    assert spreads.guard(builds(9.0)[:1], builds(9.0)[:1]) is None


def test_the_spread_is_kept_per_lab_and_machine(tmp_path: Path) -> None:
    lab = Lab(tmp_path, None)
    assert build_spread.known(lab) is None
    build_spread.record(lab, 4.123, builds=3, comparisons=6, by="test")
    kept = build_spread.known(lab)
    assert kept is not None and kept["spread_pct"] == 4.12 and kept["builds"] == 3
    info = build.BuildInfo(key="aaaaaaaaaaaaaaaa", version="15.18")
    facts = build.facts_of(build_spread.with_spread(info, lab))
    assert facts.get("spread_pct") == 4.12 and "spread_pct" not in info
    doc = json.loads((tmp_path / build_spread.FILE).read_text())
    doc["machine"] = "another machine"
    (tmp_path / build_spread.FILE).write_text(json.dumps(doc))
    assert build_spread.known(lab) is None  # measured elsewhere: not this machine's
    assert "spread_pct" not in build.facts_of(build_spread.with_spread(info, lab))
    (tmp_path / build_spread.FILE).write_text("{damaged")
    assert build_spread.known(lab) is None


def test_every_build_is_installed_at_a_path_of_one_length(tmp_path: Path) -> None:
    keys = [build.build_key(src, opts, [], libs)
            for src in ("a" * 64, "0" * 64, "git-tree:" + "f" * 40)
            for opts in ((), ("--enable-debug",), ("CFLAGS=-O3 -march=native",))
            for libs in ([], ["lz4", "zstd", "icu"])]  # fmt: skip
    assert len(set(keys)) == len(keys) and {len(k) for k in keys} == {16}
    paths = {str(build.Build(tmp_path / k, build.BuildInfo()).bindir / "postgres") for k in keys}
    assert len({len(p) for p in paths}) == 1


def test_every_server_gets_one_fixed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    first = procs.server_env()
    monkeypatch.setenv("A_LONG_VARIABLE_OF_THE_CALLER", "x" * 500)
    monkeypatch.setenv("PATH", "/somewhere/else:/usr/bin")
    monkeypatch.setenv("PGDATA", "/elsewhere")
    assert procs.server_env() == first == {"PATH": procs.SERVER_PATH, "LC_ALL": "C", "LANG": "C"}


def test_compare_holds_two_builds_points_to_the_spread_too() -> None:
    from pglab.analysis.compare import Target, compare_points

    runs = builds(9.0)
    a, b = (Target("point", p, "c", p, runs=[r for r in runs if r.label == p])
            for p in ("c0", "c7"))  # fmt: skip
    # the campaign's own answer (as show has it), and the two points compared apart
    for how, campaign_runs in ((engine.pairing(CAMPAIGN), runs),
                               (engine.Pairing(engine.APART, "apart"), [])):  # fmt: skip
        said = compare_points(a, b, 10.0, None, how, campaign_runs, CAMPAIGN)
        c = said["pairs"][0]["comparison"]
        assert c is not None and c.verdict == "?"  # Welch's apart: '?' without the spread too
        assert "identical builds: ±9.0%" in " ".join((c.reason, *c.warnings))
    free = compare_points(*(Target("point", p, "c", p, runs=[r for r in builds(None)
                                                               if r.label == p])
                            for p in ("c0", "c7")), 10.0, None, engine.pairing(CAMPAIGN),
                          builds(None), CAMPAIGN)  # fmt: skip
    assert free["pairs"][0]["comparison"] is not None
    assert free["pairs"][0]["comparison"].verdict == "+"


def test_history_holds_a_change_between_two_builds_to_the_spread() -> None:
    """Nightly executions on builds of one source (issue 58): a −7% step between two builds is
    said "?" within a ±9% spread, and --fail-above does not fail on it; without the spread
    (never measured, or one build throughout) the same step is a regression."""
    from pglab.analysis import executions as ex

    def nightly(
        spread: float | None, keys: list[str]
    ) -> tuple[list[ex.Execution], ex.FingerprintOf]:
        found, prints = [], {}
        for night in range(10):
            level = 20_000 * (0.93 if night >= 5 else 1.0)
            runs = [run(10 * night + k, "p", level * (1 + 0.002 * k), keys[night], spread)
                    for k in range(3)]  # fmt: skip
            prints.update({r.id: r.fingerprint for r in runs})
            found.append(ex.Execution(f"n@{night}", str(night), float(night), None, tuple(runs)))
        return found, prints.get

    keys = [f"{n:016x}" for n in range(10)]
    found, fingerprint_of = nightly(9.0, keys)
    (free,) = ex.point_histories(found)
    (held,) = ex.point_histories(found, fingerprint_of=fingerprint_of)
    assert [c.index for c in free.changes] == [5] == [c.index for c in held.changes]
    assert free.changes[0].comparison.verdict == "-" and free.regression(5.0) is not None
    assert held.changes[0].comparison.verdict == "?" and held.regression(5.0) is None
    assert "within the spread of identical builds: ±9.0%" in held.changes[0].comparison.reason
    for spread, ks in ((None, keys), (9.0, ["a" * 16] * 10)):  # never measured; one build
        found, fingerprint_of = nightly(spread, ks)
        (same,) = ex.point_histories(found, fingerprint_of=fingerprint_of)
        assert same.changes[0].comparison.verdict == "-" and same.regression(5.0) is not None
