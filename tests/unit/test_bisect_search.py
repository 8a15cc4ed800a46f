"""``pglab bisect``'s search apart from running: the binary search with skipped commits, the
step's campaign document, and the judgement of a step's runs."""

from __future__ import annotations

import pytest

from pglab.analysis import points
from pglab.bisect.search import Search, judge, step_document, step_name
from pglab.rows import CampaignRow, RunRow


def bisect(commits: list[str], first_bad: int, skip: set[int] = frozenset()) -> tuple:
    s, steps = Search(commits), 0
    while (i := s.next()) is not None:
        steps += 1
        if i in skip:
            s.skipped.add(i)
            continue
        s.record(i, bad=i >= first_bad)
    return s.suspects(), steps


@pytest.mark.parametrize("first_bad", range(7))
def test_the_first_bad_of_seven_is_found_in_three_steps(first_bad: int) -> None:
    commits = [f"c{i}" for i in range(1, 8)]  # c7 is the bad end
    suspects, steps = bisect(commits, first_bad)
    assert suspects == [commits[first_bad]] and steps <= 3


def test_a_skipped_commit_is_stepped_around_or_named_among_the_suspects() -> None:
    commits = [f"c{i}" for i in range(1, 8)]
    assert bisect(commits, 4, skip={2})[0] == ["c5"]  # c3 skipped: c2 or c4 measured instead
    assert bisect(commits, 3, skip={2})[0] == ["c3", "c4"]  # c3 hides which one it is


def test_the_step_is_the_file_s_point_at_three_commits() -> None:
    doc = {"name": "n", "repeats": 9, "server": {"build": {"git": "pg", "ref": "main",
           "options": ["--enable-debug"]}, "settings": {"work_mem": "8MB"}},
           "workload": {"clients": 2}, "matrix": {"clients": [1, 2]},
           "variants": {"x": {}}}  # fmt: skip
    out = step_document(doc, step_name("n", "a" * 40), {"good": "g", "middle": "m", "bad": "b"}, 3)
    assert out["name"] == "n@bisect-aaaaaaaaaaaa" and out["repeats"] == 3
    assert "matrix" not in out and list(out["variants"]) == ["good", "middle", "bad"]
    assert out["variants"]["middle"]["server"]["build"] == {
        "git": "pg", "ref": "m", "options": ["--enable-debug"]
    }  # fmt: skip
    assert out["server"] == {"settings": {"work_mem": "8MB"}} and doc["server"]["build"]


def runs(**tps: list[float]) -> list[RunRow]:
    out = []
    for variant, values in tps.items():
        for i, v in enumerate(values):
            out.append(RunRow(id=len(out), campaign="c", run_key=f"{variant}{i}", point_key=variant,
                              variant=variant, label=variant, repeat=i + 1, status="ok", tps=v,
                              started_at=0.0, finished_at=1.0, error=None))  # fmt: skip
    return out


def step_row(name: str = "c") -> CampaignRow:
    """A step campaign as the store gives it: its three variants, good first."""
    doc = step_document({"name": "n", "repeats": 3, "workload": {"clients": 2},
                         "server": {"build": {"git": "pg", "ref": "main"}}}, name,
                        {"good": "g", "middle": "m", "bad": "b"}, 3)  # fmt: skip
    return CampaignRow(id=1, name=name, created_at=0.0, updated_at=0.0, source_file=None,
                       pglab_version="", runs_ok=9, runs_failed=0, last_run_at=1.0,
                       spec=doc)  # fmt: skip


def test_the_middle_is_bad_when_nearer_the_bad_end() -> None:
    row = step_row()
    j = judge(runs(good=[1000, 1010, 990], middle=[520, 500, 510], bad=[500, 505, 495]), row)
    assert j is not None and j.bad and j.good_vs_bad.verdict == "-"
    assert j.middle_vs_good.verdict == "-" and j.middle_vs_bad.delta_pct > 0
    j = judge(runs(good=[1000, 1010, 990], middle=[1005, 995, 1000], bad=[500, 505, 495]), row)
    assert j is not None and not j.bad
    assert judge(runs(good=[1000], middle=[], bad=[500]), row) is None  # no value: not judged


def test_a_step_says_what_its_table_says_of_the_same_comparisons() -> None:
    """The bisection's line and ``pglab show``'s table of the step (issue 58: the line said c7
    +5.4% [+0.6, +10.3] '+' under a table saying +5.4% [-4.3, +16.1] '?', the line asking three
    comparisons with Holm over them, the table two): one question, one answer."""
    ran = runs(good=[57226, 57506, 54473], middle=[59428, 58825, 59984], bad=[3083, 3096, 2941])
    row = step_row()
    j = judge(ran, row)
    assert j is not None
    shown = {r.variant: r.comparison for r in points.campaign_rows(ran, row)}
    assert j.middle_vs_good == shown["middle"] and j.good_vs_bad == shown["bad"]
    assert j.middle_vs_good.verdict != "+"  # the table's '?' (or '='), not the line's old '+'
