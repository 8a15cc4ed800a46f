"""The compare page: two runs, points or campaigns picked in the page (the choices offered as
the user types), compared as ``pglab compare`` compares them (``analysis.compare``: the same
figures), at a URL that can be shared (``/compare?a=…&b=…``). What the template draws is a
``ComparePage``."""

from __future__ import annotations

from typing import TypedDict

from pglab.analysis import compare, comparisons, evidence, points, profiles, spreads, verdicts
from pglab.analysis.comparisons import CompareResult
from pglab.analysis.profiles import Change
from pglab.campaign.spec import DEFAULT_EFFECT_PCT
from pglab.errors import LabError
from pglab.jsonish import JsonObject
from pglab.rows import plain
from pglab.store import Store

MAX_CHOICES = 2000  # points offered in the picker (any other can still be typed)


class ComparePage(TypedDict):
    """The compare page's data, as its template reads it."""

    choices: list[str]  # what the picker offers
    result: CompareResult | None  # analysis.compare.compare_targets's, once A and B are given
    profile: list[tuple[str, list[Change]]]  # CPU profile changes where both sides have them
    evidence: list[tuple[str, evidence.Evidence]]  # why each pair changed (analysis.evidence)
    error: LabError | None  # what is wrong with A or B
    legend: str  # what the verdicts mean


def choices(store: Store) -> list[str]:
    """What the picker offers: every campaign, then each point as CAMPAIGN:POINT."""
    names = [c["name"] for c in store.list_campaigns()]
    return names + [f"{name}:{label}" for name, label in store.point_labels(MAX_CHOICES)]


def page(store: Store, a: str, b: str) -> ComparePage:
    """The picker's choices, and the comparison of ``a`` and ``b`` when both are given:
    ``result`` as ``analysis.compare.compare_targets`` makes it, ``profile`` the CPU profile
    changes where both sides have them, ``evidence`` what moved with each pair's figure, or
    ``error`` (a LabError) naming what is wrong."""
    out: ComparePage = {
        "choices": choices(store),
        "result": None,
        "profile": [],
        "evidence": [],
        "error": None,
        "legend": "",
    }
    if not a or not b:
        if a or b:
            out["error"] = LabError(
                "pick both A (the baseline) and B", hint="a run id, a campaign, or CAMPAIGN:POINT"
            )
        return out
    try:
        ta, tb = compare.resolve(store, a), compare.resolve(store, b)
        result = compare.compare_targets(store, ta, tb)
        pairs = [] if result["kind"] == "runs" else result["pairs"]
        out["profile"] = profiles.compare_targets(store, ta, tb, pairs)
        out["evidence"] = evidence.compare_targets(store, ta, tb, pairs)
    except LabError as exc:
        out["error"] = exc
        return out
    out["result"] = result
    out["legend"] = _legend(result)
    return out


def _legend(result: CompareResult) -> str:
    """What the verdicts mean and how they were reached, as ``pglab compare`` says it."""
    if result["kind"] == "runs":
        return result["note"]
    judged = [p["comparison"] for p in result["pairs"] if p["comparison"]]
    effect = judged[0].effect_pct if judged else DEFAULT_EFFECT_PCT
    margin = next((c.equivalence_pct for c in judged if c.equivalence_pct), effect)
    holm = result["kind"] == "campaigns" and result["corrected"]
    return (
        f"verdict: + / − significant ({verdicts.methods_text(judged)}; p < 0.05"
        f"{' after Holm' if holm else ''}); = shown within ±{margin:g}%; "
        f"~ not significant, and the runs could have found ±{effect:g}%; ? they could not tell "
        "(hover it for the reason)"
    )


def compared_json(store: Store, a: str, b: str) -> JsonObject:
    """``/compare.json?a=…&b=…``: what ``pglab compare A B --json`` prints (a ``LabError``
    when A or B names nothing)."""
    ta, tb = compare.resolve(store, a), compare.resolve(store, b)
    result = compare.compare_targets(store, ta, tb)
    pairs = [] if result["kind"] == "runs" else result["pairs"]
    return comparisons.as_json(
        result,
        profiles.compare_targets(store, ta, tb, pairs),
        evidence.compare_targets(store, ta, tb, pairs),
    )


def points_json(store: Store, name: str) -> JsonObject | None:
    """``/points.json/NAME``: the campaign's points with their answers, as ``pglab show NAME
    --json`` and the report's table have them (``points.campaign_rows``); None: no campaign."""
    camp = store.get_campaign(name)
    if camp is None:
        return None
    runs = spreads.fingerprinted(store, store.list_runs(name))  # which build each point ran
    found: JsonObject = {
        "campaign": name,
        "figure": points.figure_of(runs),
        "points": plain(points.campaign_rows(runs, camp)),
    }
    return found
