"""What the stored runs say item by item where the runs name their items themselves (a
replay's statement classes: ``workloads.named_items``): each item's time per point over its
repeats, compared with the reference point as the headline is (``points.families_rows``:
the blocked analysis of each item's rounds, every item's comparisons one Holm family), their
total (the replay's total execution time) compared as the campaign's own family is, and for
each compared point what a person acts on, the same in every view: "your workload's
statements take −12.0% [−15.0, −9.0] in total; 5 statement classes got slower: …", the
items whose verdict is significant ranked by Δ%.

The values are times (lower is better): Δ% is of the time, + slower, − faster.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pglab.analysis import engine, points, verdicts
from pglab.analysis.comparisons import ItemComparison, ItemsComparison
from pglab.analysis.points import PointRow
from pglab.analysis.verdicts import Comparison
from pglab.rows import CampaignRow, RunRow
from pglab.store import Store
from pglab.workloads import named_items
from pglab.workloads.interface import NamedItems

NAMED = 5  # items a sentence names, of the slower and of the faster


def named_of(runs: Sequence[RunRow]) -> NamedItems | None:
    """The kind of named items the ok runs hold (None: none)."""
    for named in named_items():
        if any(named.pattern.match(k) for r in runs if r.ok for k in r.metrics):
            return named
    return None


def item_keys(runs: Sequence[RunRow], named: NamedItems) -> list[str]:
    """The items the ok runs timed, the most time per call first (the largest of the points'
    medians), then by key."""
    pattern = named.pattern
    values: dict[str, dict[str, list[float]]] = {}
    for r in (r for r in runs if r.ok):
        for k, v in r.metrics.items():
            if m := pattern.match(k):
                values.setdefault(m.group(1), {}).setdefault(r.label, []).append(v)
    most = {key: max(statistics.median(vs) for vs in by.values()) for key, by in values.items()}
    return sorted(most, key=lambda key: (-most[key], key))


def as_figure(runs: Sequence[RunRow], metric: str) -> list[RunRow]:
    """The runs with ``metric`` as their figure: their ``tps`` (None without it), and no other
    metric that would name another figure (a replay's own, statements per active second)."""
    return [
        replace(r, tps=(v := r.metrics.get(metric)), metrics={} if v is None else {"tps": v})
        for r in runs
    ]


def texts(store: Store, runs: Sequence[RunRow], named: NamedItems) -> dict[str, str]:
    """Each item's words (its phase table's first two columns: key, words), from each
    point's first ok run."""
    first: dict[str, RunRow] = {}
    for r in runs:
        if r.ok:
            first.setdefault(r.label, r)
    out: dict[str, str] = {}
    for r in first.values():
        stored = store.get_run(r.id, skip_kinds=("latency", "progress"))
        for tables in stored.series.values() if stored is not None else ():
            table = tables.get(named.table)
            for row in table["rows"] if table else ():
                out.setdefault(str(row[0]), str(row[1]))
    return out


@dataclass(frozen=True, slots=True)
class ItemPoints:
    key: str
    text: str
    rows: list[PointRow]  # the item's time per point, each compared with its reference
    medians: dict[str, float]  # each point's median time, by label


@dataclass(frozen=True, slots=True)
class PointItems:
    """One compared point's answer: the items' total and the items that moved, ranked."""

    point: str
    reference: str
    total: Comparison | None
    slower: list[ItemComparison]  # significant, most slower first
    faster: list[ItemComparison]  # significant, most faster first
    compared: int  # items compared
    every: tuple[Comparison, ...] = ()  # every compared item's answer


@dataclass(frozen=True, slots=True)
class ItemsAnswer:
    named: NamedItems
    items: list[ItemPoints]
    points: list[PointItems]


def campaign_items(
    store: Store, runs: Sequence[RunRow], campaign: CampaignRow | None
) -> ItemsAnswer | None:
    """Each item's points and each compared point's answer (``pglab show``, the report):
    the items' comparisons Holm-corrected together, the total's with the campaign's."""
    named = named_of(runs)
    if named is None:
        return None
    keys = item_keys(runs, named)
    words = texts(store, runs, named)
    families = [as_figure(runs, named.metric_of(k)) for k in keys]
    found = points.families_rows(families, campaign)
    items = []
    for key, rows in zip(keys, found, strict=True):
        medians = {r.point: r.tps_median for r in rows if r.tps_median is not None}
        items.append(ItemPoints(key, words.get(key, key), rows, medians))
    totals = {r.point: r for r in points.campaign_rows(as_figure(runs, named.total), campaign)}
    answers = []
    for ref, other, _ in points.compared_labels(runs, campaign):
        moved = []
        for item in items:
            row = next((r for r in item.rows if r.point == other), None)
            if row is None or row.comparison is None:
                continue
            moved.append(_item(item.text, item.medians, ref, other, row.comparison))
        total = totals[other].comparison if other in totals else None
        answers.append(_ranked(other, ref, total, moved))
    return ItemsAnswer(named, items, answers)


def _item(
    text: str, medians: dict[str, float], a: str, b: str, comparison: Comparison
) -> ItemComparison:
    return ItemComparison(item=text, a=medians.get(a), b=medians.get(b), comparison=comparison)


def _ranked(
    point: str, reference: str, total: Comparison | None, moved: list[ItemComparison]
) -> PointItems:
    """The items whose verdict is + (slower) or − (faster), each ranked by Δ%."""
    slower = [m for m in moved if m["comparison"].verdict == "+"]
    faster = [m for m in moved if m["comparison"].verdict == "-"]
    slower.sort(key=lambda m: -m["comparison"].delta_pct)
    faster.sort(key=lambda m: m["comparison"].delta_pct)
    every = tuple(m["comparison"] for m in moved)
    return PointItems(point, reference, total, slower, faster, len(moved), every)


def said(answer: PointItems, named: NamedItems, label: str, reference: str) -> str:
    """The sentence of a compared point: "on LABEL your workload's statements take −12.0%
    [−15.0, −9.0] − in total (against REFERENCE); 2 statement classes of 12 got slower, none
    faster"."""
    t = answer.total
    if t is None:
        total = "the total could not be compared"
    else:
        ci = f" [{t.ci_low:+,.1f}, {t.ci_high:+,.1f}]" if t.ci_low is not None else ""
        total = f"your workload's statements take {t.delta_pct:+,.1f}%{ci} {t.verdict} in total"
    plural = _plural(named.noun)
    slower, faster = len(answer.slower), len(answer.faster)
    moved = (
        f"{slower or 'no'} {plural if slower != 1 else named.noun} of {answer.compared} got "
        f"slower, {faster or 'none'} faster"
    )
    return f"on {label} (against {reference}) {total}; {moved}"


def item_line(m: ItemComparison, word: str, unit: str) -> str:
    """An item that moved, in words: "slower +9,900.0% [+9,500.0, +10,300.0] +  0.050 → 5.100
    ms  UPDATE …" (Δ% of time, its 95% interval, the verdict, both sides' median time)."""
    c = m["comparison"]
    ci = f" [{c.ci_low:+,.1f}, {c.ci_high:+,.1f}]" if c.ci_low is not None else ""
    times = f"{_time(m['a'])} → {_time(m['b'])} {unit}"
    return f"{word} {c.delta_pct:+,.1f}%{ci} {c.verdict}  {times}  {m['item']}"


def lines(answer: PointItems, unit: str, most: int = NAMED) -> list[str]:
    """The slower then the faster items of a compared point, ``most`` of each, in words."""
    out = []
    for word, moved in (("slower", answer.slower), ("faster", answer.faster)):
        out += [item_line(m, word, unit) for m in moved[:most]]
        if len(moved) > most:
            out.append(f"and {len(moved) - most} more {word}")
    return out


def _time(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if value < 10 else f"{value:,.1f}"


def legend(named: NamedItems, comparisons: Sequence[Comparison | None], items: int) -> str:
    """What the items' Δ% and verdicts are, and the tests that made them."""
    found = [c for c in comparisons if c is not None]
    m = max((c.comparisons for c in found), default=0)
    return (
        f"{named.noun} Δ%: of the mean time per call (+ slower, − faster), each interval its "
        f"own 95%, the verdicts Holm-corrected over all {m} comparisons of the {items} "
        f"{_plural(named.noun)} together; total: of the execution time; "
        f"{verdicts.methods_text(found)}"
    )


def _plural(noun: str) -> str:
    return f"{noun}es" if noun.endswith("s") else f"{noun}s"


def compare_items(
    store: Store,
    a: Sequence[RunRow],
    b: Sequence[RunRow],
    effect_pct: float,
    how: engine.Pairing | None = None,
    campaign_runs: Sequence[RunRow] = (),
    campaign: CampaignRow | None = None,
) -> ItemsComparison | None:
    """Two points item by item (``pglab compare``): when B against A is one of the campaign's
    comparisons (``campaign_runs``), the campaign's own answer (as ``pglab show`` has it);
    else each item's time and the total asked of ``engine`` (paired by round when the runs
    pair, ``how``; else Welch's test), the items one Holm family."""
    named = named_of([*a, *b])
    if named is None or not a or not b:
        return None
    label_a, label_b = a[0].label, b[0].label
    answer: PointItems | None = None
    if how is not None and how.how != engine.APART and campaign_runs:
        pairs = {(x, y) for x, y, _ in points.compared_labels(campaign_runs, campaign)}
        if (label_a, label_b) in pairs:
            found = campaign_items(store, campaign_runs, campaign)
            answer = next((p for p in found.points if p.point == label_b), None) if found else None
    if answer is None:
        answer = _asked(store, a, b, named, effect_pct, how)
    return ItemsComparison(
        noun=named.noun,
        unit=named.unit,
        total=answer.total,
        compared=answer.compared,
        slower=answer.slower,
        faster=answer.faster,
        said=said(answer, named, label_b, label_a),
        lines=lines(answer, named.unit),
        legend=legend(named, answer.every, answer.compared),
    )


def _asked(
    store: Store,
    a: Sequence[RunRow],
    b: Sequence[RunRow],
    named: NamedItems,
    effect_pct: float,
    how: engine.Pairing | None,
) -> PointItems:
    how = how or engine.Pairing(engine.APART, "the points' runs do not pair")
    theirs = set(item_keys(b, named))
    keys = [k for k in item_keys(a, named) if k in theirs]
    words = texts(store, [*a, *b], named)

    def side(runs: Sequence[RunRow], metric: str) -> dict[int, float]:
        found = [(r.repeat, v) for r in runs if r.ok and (v := r.metrics.get(metric))]
        if how.how == engine.APART:
            return engine.apart([v for _, v in found])
        return dict(found)

    asked = [engine.Pair(side(a, named.metric_of(k)), side(b, named.metric_of(k))) for k in keys]
    found = engine.ask(engine.Question(asked, how, effect_pct)) if asked else []
    moved = []
    for key, pair, c in zip(keys, asked, found, strict=True):
        medians = {"a": statistics.median(pair.a.values()), "b": statistics.median(pair.b.values())}
        moved.append(_item(words.get(key, key), medians, "a", "b", c))
    total_pair = engine.Pair(side(a, named.total), side(b, named.total))
    total = None
    if total_pair.a and total_pair.b:
        total = engine.ask(engine.Question([total_pair], how, effect_pct))[0]
    return _ranked(b[0].label, a[0].label, total, moved)
