"""The search of ``pglab bisect FILE --good A --bad B``, apart from running and printing.

The commits are those on the ancestry path from the good commit to the bad one (``git rev-list
--ancestry-path``), oldest first; the bad is the last. Each step measures the middle commit
between the last known good and the first known bad beside both ends, in one interleaved
campaign (``step_document``: the file's server, dataset and workload, its variants replaced by
``good``, ``middle`` and ``bad``, each a build of that commit), so that whatever drifts between
steps cancels. The middle is judged bad when its figure is nearer the bad commit's than the good
one's (on log scale), each distance with its comparison (Δ%, CI, verdict) to show how sure; a
commit that does not build is skipped and its nearest neighbour between the ends tried instead.
Each step is stored as the campaign ``NAME@bisect-COMMIT``: a bisection stopped anywhere resumes
from its stored steps, its builds in the cache.
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from pglab.analysis import engine, points, spreads, verdicts
from pglab.analysis.executions import value_of
from pglab.campaign.execution import SEP
from pglab.jsonish import TomlTable
from pglab.rows import CampaignRow, RunRow

ENDS = ("good", "middle", "bad")


@dataclass(frozen=True)
class Judged:
    bad: bool  # the middle commit behaves as the bad one
    middle_vs_good: verdicts.Comparison
    middle_vs_bad: verdicts.Comparison
    good_vs_bad: verdicts.Comparison  # bad against good: the effect being looked for


@dataclass
class Search:
    """Binary search over ``commits`` (the bad one last): ``lo`` the last known good index
    (−1: the good end), ``hi`` the first known bad (the bad end at first)."""

    commits: list[str]
    lo: int = -1
    hi: int = -1
    skipped: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.hi < 0:
            self.hi = len(self.commits) - 1

    def next(self) -> int | None:
        """The commit to measure next (the middle, or the nearest that was not skipped), or
        None when the first bad one is known (or every one between was skipped)."""
        if self.hi - self.lo <= 1:
            return None
        mid = (self.lo + self.hi) // 2
        for offset in range(self.hi - self.lo):
            for i in (mid - offset, mid + offset):
                if self.lo < i < self.hi and i not in self.skipped:
                    return i
        return None

    def record(self, index: int, bad: bool) -> None:
        if bad:
            self.hi = index
        else:
            self.lo = index

    @property
    def done(self) -> bool:
        return self.hi - self.lo <= 1

    def suspects(self) -> list[str]:
        """The commits the first bad one may be: one when done, more when skips hid it."""
        return self.commits[self.lo + 1 : self.hi + 1]


def step_name(campaign: str, commit: str) -> str:
    return f"{campaign}{SEP}bisect-{commit[:12]}"


def step_document(doc: TomlTable, name: str, commits: dict[str, str], repeats: int) -> TomlTable:
    """The step's campaign: the file's document without its variants and matrix, its server's
    build (git, options, patches) at each commit of ``commits`` (good, middle, bad) as a
    variant of its own, interleaved rounds."""
    out = {k: copy.deepcopy(v) for k, v in doc.items() if k not in ("variants", "matrix", "name")}
    server = dict(out.pop("server", {}))
    build = dict(server.pop("build"))
    out.update(name=name, repeats=repeats, order="interleaved", server=server)
    out["variants"] = {
        end: {"server": {"build": {**build, "ref": commit}}} for end, commit in commits.items()
    }
    return out


# a step's three commits run in rounds, interleaved: its comparisons pair by round
STEP = engine.Pairing(engine.ROUNDS, "a bisect step's commits run interleaved: they pair by round")


def judge(
    runs: Sequence[RunRow], campaign: CampaignRow | None, figure: str = "tps"
) -> Judged | None:
    """How the middle commit's runs compare with the ends' (None: an end has no value). The
    middle and the bad end against the good one are the step campaign's own comparisons, as
    ``pglab show`` gives them on the same runs (``points.campaign_rows``: one question, one
    answer, in the bisection's lines and in the step's table); the middle against the bad end,
    which the table does not show, is asked alone, its runs paired by round."""
    rounds = {
        end: {
            r.repeat: v
            for r in runs
            if r.variant == end
            for v in [value_of(r, figure)]
            if v is not None
        }
        for end in ENDS
    }
    if any(len(rounds[end]) == 0 for end in ENDS):
        return None

    def log_mean(xs: Sequence[float]) -> float:
        return statistics.fmean(math.log(x) for x in xs)

    good, middle, bad = (log_mean(list(rounds[end].values())) for end in ENDS)
    ran = {end: [r for r in runs if r.variant == end] for end in ENDS}
    shown = {row.variant: row.comparison for row in points.campaign_rows(runs, campaign)}
    gm, gb = shown.get("middle"), shown.get("bad")
    if gm is None or gb is None:
        return None
    # held to the spread of identical builds, if known, as the table's are
    spread = spreads.spread_between(ran["bad"], ran["middle"])
    asked = engine.Pair(rounds["bad"], rounds["middle"], "bad", spread_pct=spread)
    (bm,) = engine.ask(engine.Question([asked], STEP))
    return Judged(
        bad=abs(middle - bad) < abs(middle - good),
        middle_vs_good=gm,
        middle_vs_bad=bm,
        good_vs_bad=gb,
    )
