"""One question, one answer: the one place a comparison is judged, whichever view asks.

A **question** (``Question``) is two sides of runs per comparison — points, campaigns,
executions, items of a point (a script, a query) — each side's figure by round (its repeat
number), how the runs may be paired (``Pairing``: the design of the campaigns they come from
decides it, ``pairing``), the effect of interest and the equivalence margin. ``ask`` gives
back the **answer** of each comparison asked, a ``verdicts.Comparison``: Δ%, its 95% CI, the
verdict and its reason, the test used (``method``) and why (``why``), the runs per side
(``n_a``, ``n_b``), the runs per point that would resolve the effect (``runs_needed``) and
what the reader should know of it (``warnings``).

The rule of pairing, the same for every figure, items included:

- runs of one **interleaved** campaign (a fixed number of repeats) pair by round: their
  within-round log ratios, the blocked analysis of ``stats.differences`` (the noise pooled over
  the comparisons of one pool, a comparison noisier than the rest on its own variance);
- a campaign of ``repeats = "auto"``: paired by round too, on the anytime-valid confidence
  sequence of the within-round log ratios its rounds stopped on
  (``verdicts.compare_sequential``), in the same words ("=" within the equivalence margin);
- anything else (points of two campaigns, a campaign in sequential order, executions): Welch's
  test on the runs apart.

Every comparison asked together is one Holm family. ``show``, ``compare`` (and ``--json``),
the report, ``serve`` and ``history`` render these answers and compute none of their own (a
test in ``tests/unit/test_architecture.py`` checks that the view packages hold no statistics).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from pglab.analysis import verdicts
from pglab.analysis.verdicts import METHOD_TEXT, Comparison
from pglab.campaign.spec import DEFAULT_EFFECT_PCT
from pglab.rows import CampaignRow, spec_of
from pglab.stats import differences
from pglab.stats.differences import Difference, Rounds

ROUNDS, SEQUENTIAL, APART = "rounds", "sequential", "apart"  # the pairings


@dataclass(frozen=True)
class Pairing:
    """How a question's runs pair: ``how`` one of ROUNDS, SEQUENTIAL or APART, ``why`` in
    words (the answers' ``why`` begins with it)."""

    how: str
    why: str
    precision: float | None = None  # repeats = "auto"'s [sequential] precision


def pairing(a: CampaignRow | None, b: CampaignRow | None = None) -> Pairing:
    """The pairing runs of campaign ``a`` allow (with ``b``: runs of ``a`` against runs of
    ``b``, which pair only when they are one campaign)."""
    name = a.get("name") if a is not None else None
    if b is not None and (a is None or name != b.get("name")):
        return Pairing(APART, f"runs of two campaigns ({name}, {b.get('name')}) do not pair")
    doc = spec_of(a)
    called = f" {name}" if name else ""
    if doc.get("repeats") == "auto":
        table = doc.get("sequential") or {}
        return Pairing(
            SEQUENTIAL,
            f'runs of the campaign{called} (repeats = "auto") pair by round',
            table.get("precision"),
        )
    if doc.get("order", "interleaved") != "interleaved":
        return Pairing(
            APART, f"the campaign{called} ran in sequential order: its repeats are not rounds"
        )
    return Pairing(
        ROUNDS, f"runs of one interleaved campaign{f' ({name})' if name else ''} pair by round"
    )


@dataclass(frozen=True)
class Pair:
    """One comparison of a question: A (the reference) and B, each's figure by round."""

    a: Rounds
    b: Rounds
    group: Hashable = 0  # comparisons with the same group share A's point (ROUNDS)
    pool: Hashable = 0  # comparisons whose noise is pooled together (ROUNDS)
    judged: bool = True  # False: it only lends its noise to its pool, no answer of its own
    # A and B are two builds: the spread of identical builds here (verdicts.beyond_spread)
    spread_pct: float | None = None


@dataclass(frozen=True)
class Question:
    """Comparisons asked together (one Holm family) and how their runs pair."""

    pairs: Sequence[Pair]
    pairing: Pairing
    effect_pct: float = DEFAULT_EFFECT_PCT
    equivalence_pct: float | None = None


def ask(question: Question) -> list[Comparison]:
    """The answer of each judged pair of ``question``, in order (the module says how)."""
    asked = [p for p in question.pairs if p.judged]
    if question.pairing.how == SEQUENTIAL:
        found = verdicts.compare_sequential(
            [(p.a, p.b) for p in asked],
            question.effect_pct,
            question.pairing.precision,
            question.equivalence_pct,
        )
    else:
        diffs = _measured(question)
        samples = [(list(p.a.values()), list(p.b.values())) for p in asked]
        found = verdicts.judged(samples, diffs, question.effect_pct, question.equivalence_pct)
    return [
        verdicts.beyond_spread(_explained(c, p, question.pairing), p.spread_pct)
        for c, p in zip(found, asked, strict=True)
    ]


def _measured(question: Question) -> list[Difference | None]:
    """Each judged pair's difference: within rounds, pooled by ``pool``; or Welch's."""
    if question.pairing.how != ROUNDS:
        return [_welch(p.a, p.b) for p in question.pairs if p.judged]
    pools: dict[Hashable, list[int]] = {}
    for i, p in enumerate(question.pairs):
        pools.setdefault(p.pool, []).append(i)
    found: dict[int, Difference | None] = {}
    for members in pools.values():
        pairs = [question.pairs[i] for i in members]
        measured = differences.measure([(p.a, p.b) for p in pairs], [p.group for p in pairs])
        found.update(zip(members, measured, strict=True))
    return [found[i] for i, p in enumerate(question.pairs) if p.judged]


def _welch(a: Rounds, b: Rounds) -> Difference | None:
    if len(a) < 2 or len(b) < 2:
        return None
    return differences.welch(np.log(list(a.values())), np.log(list(b.values())))


def _explained(c: Comparison, p: Pair, how: Pairing) -> Comparison:
    """The answer with the test's why and its warnings."""
    test = METHOD_TEXT.get(c.method, c.method) if c.p_value is not None else "no test"
    warnings = []
    if how.how == ROUNDS:
        common = len(set(p.a) & set(p.b))
        if c.method == "welch" and c.p_value is not None:
            warnings.append(f"{common} round(s) in common: the runs compared apart (Welch)")
        unpaired = len(set(p.a) ^ set(p.b))
        if unpaired and common:
            warnings.append(
                f"{unpaired} run(s) without their round's counterpart left out of "
                f"the pairing ({common} rounds paired)"
            )
    if 0 < min(c.n_a, c.n_b) < verdicts.MIN_INTERVAL_RUNS:
        warnings.append(f"{min(c.n_a, c.n_b)} run(s) on a side: an interval this wide says little")
    return replace(c, why=f"{test}: {how.why}", warnings=tuple(warnings))


def apart(values: Sequence[float]) -> dict[int, float]:
    """Values that are not rounds (runs of two campaigns, executions) as a side of a ``Pair``
    (keyed by their order: a question that pairs them not by round never reads the keys)."""
    return dict(enumerate(values))


def in_common_rounds(sides: Sequence[Mapping[int, float]]) -> list[list[float]]:
    """The sides' values (each by round) in the rounds every side has, in round order: what
    pairing by round keeps of them (a round where one side's run failed is left out of all;
    paired by list position, round 3 of one side would stand beside round 2 of another)."""
    rounds = sorted(set.intersection(*(set(side) for side in sides))) if sides else []
    return [[side[r] for r in rounds] for side in sides]
