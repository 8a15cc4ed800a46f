"""What ``analysis.compare`` gives back: a comparison of two runs, two points or two campaigns.

These are ``TypedDict``s because the comparison is printed as it is by ``pglab compare --json``
(its ``verdicts.Comparison``s as objects) and drawn by ``pglab serve``'s compare page: the keys,
their order and the JSON stay what they were, and mypy checks every reader's keys.

- :data:`CompareResult`: one of :class:`RunsComparison` (``kind`` "runs"),
  :class:`PointsComparison` ("points") or :class:`CampaignsComparison` ("campaigns"); a reader
  tells them apart by ``kind``;
- :class:`PointPair`: two points side by side (:class:`PointSide` each) with their verdict;
- :class:`ScriptComparison`: a script both sides ran in a phase of several (``ScriptSide``
  each);
- :class:`MetricRow`, :class:`WaitsRow`: two runs' figures and top waits;
- :class:`SettingDiff`, :class:`StorageSides`: what differs in the environment and settings,
  and the storage results measured under each side;
- :class:`QueryComparison`: a TPC-H-like query of two points (``analysis.queries``);
- :class:`ItemsComparison`: the items the runs name themselves (a replay's statement classes)
  of two points, :class:`ItemComparison` each (``analysis.named_items``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from pglab.analysis.verdicts import Comparison as Verdict
from pglab.jsonish import JsonObject
from pglab.rows import plain

if TYPE_CHECKING:  # evidence imports this module's types
    from pglab.analysis.evidence import Evidence


class RunSide(TypedDict):
    """Which run a side of a run comparison is."""

    run: int
    campaign: str
    point: str
    repeat: int


class MetricRow(TypedDict):
    """A figure of two runs (``tps``, ``phase.NAME.tps``, …), B's Δ% against A's."""

    metric: str
    a: float | None
    b: float | None
    delta_pct: float | None


class WaitsRow(TypedDict):
    """A measured phase's top waits on each side: (type:event, % of the sampled waits)."""

    phase: str
    a: list[tuple[str, float]]
    b: list[tuple[str, float]]


class ScriptSide(TypedDict):
    """A script's figures on one side: a value per run that has one, and their medians."""

    tps: list[float]
    latency_avg_ms: list[float]
    n: int  # runs with a TPS
    median_tps: float | None
    median_latency_ms: float | None


class ScriptComparison(TypedDict):
    """A script both sides ran in a phase of several, matched by phase and script name;
    ``comparison`` where both sides have 2 runs or more (``compare.compare_scripts``)."""

    phase: str
    script: str
    a: ScriptSide
    b: ScriptSide
    tps_delta_pct: float | None
    latency_delta_pct: float | None
    comparison: Verdict | None


class SettingDiff(TypedDict):
    """An environment fact or setting whose value differs ("varies", "default")."""

    name: str
    a: str
    b: str


class StorageUsed(TypedDict):
    """A storage result (``pglab storage``) measured on the storage a side's runs used."""

    id: int | None
    tool: str
    where: str
    roles: list[str]  # "data", "WAL"
    headline: str


class StorageSides(TypedDict):
    a: list[StorageUsed]
    b: list[StorageUsed]


class PointSide(TypedDict):
    """One point of a pair: its runs' count, median figure and failures."""

    campaign: str
    point: str
    n: int  # ok runs with the figure
    median: float | None
    failed: int


class PointPair(TypedDict):
    """Two points side by side; ``comparison`` None where a side has no ok run."""

    a: PointSide
    b: PointSide
    comparison: Verdict | None
    scripts: NotRequired[list[ScriptComparison]]  # added by compare.compare_scripts


class QueryComparison(TypedDict):
    """A TPC-H-like query of two points: median seconds, the verdict on its rate, and how B's
    plan differs from A's (None: the same shape)."""

    query: int
    a_s: float
    b_s: float
    comparison: Verdict
    plan: str | None


class ItemComparison(TypedDict):
    """An item the runs name themselves (a replay's statement class) of two points: each
    side's median time and the verdict on it (+ slower, − faster)."""

    item: str  # its words
    a: float | None
    b: float | None
    comparison: Verdict


class ItemsComparison(TypedDict):
    """Two points item by item (``analysis.named_items``): their total, how many items were
    compared, those significantly slower and faster (ranked), and the sentence."""

    noun: str  # "statement class"
    unit: str  # of each side's time
    total: Verdict | None
    compared: int
    slower: list[ItemComparison]
    faster: list[ItemComparison]
    said: str
    lines: list[str]  # the slower and the faster items in words (named_items.lines)
    legend: str  # what the Δ% and verdicts are, the tests that made them


class Unmatched(TypedDict):
    a: int  # points of A that matched none of B
    b: int


class RunsComparison(TypedDict):
    """Two runs figure by figure (no significance from one run each: ``note``)."""

    kind: Literal["runs"]
    a: RunSide
    b: RunSide
    metrics: list[MetricRow]
    waits: list[WaitsRow]
    scripts: list[ScriptComparison]
    settings_diff: list[SettingDiff]
    note: str
    storage: NotRequired[StorageSides | None]  # these two added by compare_targets
    figure: NotRequired[str]


class PointsComparison(TypedDict):
    """Two points: one pair, judged."""

    kind: Literal["points"]
    pairs: list[PointPair]
    queries: NotRequired[list[QueryComparison]]  # these added by compare_targets, in order
    items: NotRequired[ItemsComparison]  # a replay's statement classes
    settings_diff: NotRequired[list[SettingDiff]]
    storage: NotRequired[StorageSides | None]
    figure: NotRequired[str]  # "tps", "MB/s", "nopm", "QphH", …


class CampaignsComparison(TypedDict):
    """Two campaigns point by point, Holm-corrected over the pairs (``corrected``)."""

    kind: Literal["campaigns"]
    a: str
    b: str
    matched_by: str  # "label", "matrix coordinates" or "variant"
    unmatched: Unmatched
    corrected: bool
    pairs: list[PointPair]
    settings_diff: NotRequired[list[SettingDiff]]  # these added by compare_targets
    storage: NotRequired[StorageSides | None]
    figure: NotRequired[str]


CompareResult = RunsComparison | PointsComparison | CampaignsComparison


def as_json(
    result: CompareResult,
    profile: Sequence[tuple[str, Sequence[object]]],
    evidence: Sequence[tuple[str, Evidence]] = (),
) -> JsonObject:
    """What ``pglab compare --json`` prints and ``pglab serve``'s ``/compare.json`` gives: the
    comparison as it is (its answers as objects), then the CPU profiles' changes by pair, then
    what moved with each pair's figure (``analysis.evidence``'s items, with their words, and
    what its runs could not measure: ``notes``)."""
    moved = [
        {
            "pair": title,
            "items": [{**plain(i), "text": i.text} for i in items],
            "notes": list(items.notes),
        }
        for title, items in evidence
    ]
    found: JsonObject = plain(
        {
            **result,
            "profile": [{"pair": title, "changes": list(cs)} for title, cs in profile],
            "evidence": moved,
        }
    )
    return found
