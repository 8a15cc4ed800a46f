"""Why two sides differ: what moved with the figure, each item with its Δ and 95% CI, ranked.

For two sides of runs (two points, or the matched points of two campaigns), each run's measured
phases are read into figures (``evidence_measures.run_measures``): the wait events, in sessions
(the mean number of server processes in that wait: what ``telemetry.waits`` counts per
sample); the OS's CPU split (user, system, iowait, steal: % of all CPUs); the disk's MB/s and
await; WAL bytes, full-page images, temporary files (spills) and buffers read and hit per
transaction; checkpoints; the load generator's CPU and the server's (% of a core, and the
server's µs per transaction); the **busy machine**, the CPU that processes other than the
server, the load generator and pglab used (``os_stats``: % of a core); where the runs were
profiled, each function's inclusive share of its process kind's CPU samples (above the sample
floors of ``analysis.profiles``); where they stored TPC-H-like plans, each query's spills and
its nodes by type.

Each figure is compared as the runs allow it, with the tests the comparison of TPS uses
(``stats.differences``), on the figure itself (a difference, not a ratio: a wait that vanishes
has no log): **paired** by round when both sides are points of one interleaved campaign with
``MIN_OWN_ROUNDS`` rounds in common (drift a round shares cancels), else **Welch**. An item is
evidence when its 95% interval excludes zero and it moved at least its rule's ``floor`` (a
difference too small to say anything). A rise from outside the run (another process's CPU, the
hypervisor's steal: the run cannot have caused it) comes first (a fall can be the run's doing:
on a machine whose CPUs are all in use, a server that waits less takes CPU back from others);
the others are ranked by how much they moved relative to their size (|Δ| over the larger of the
two means, to a tenth: 1 for a wait that vanished or appeared), then relative to their noise
(|Δ| / standard error). Ranked by noise alone, everything that merely follows the throughput
(CPU time, WAL per second, the sessions freed from a wait now running) moves as surely as its
cause, and which comes first is chance; the cause is what appeared or vanished. Profiled
functions take the places they earned in the order of the share that moved (points of one
whole: a planner that rose by 25 before a function of 5 that vanished in the noise). Counts
that would follow the throughput are per transaction; a rate that follows it
(``Rule.follows``: CPU %, MB/s) is an item only where it moved per transaction too, the same
way.

What the runs could not measure is said with the items (``Evidence.notes``): the hardware
counters of runs profiled on a machine that hides them, never a figure made up.

Items that say one thing are one: a chain of profiled calls with the same samples
(``pg_plan_queries = pg_plan_query = planner``), a query's plan nodes that moved (its shape:
what left it, what came). A wait item names the statement class most of it was in, where the
servers computed query ids (``telemetry.waits.STATEMENTS``).

The rules are data, one table (``evidence_rules``): a figure's name, unit, floor and what its
rise or fall says.
Pure functions on stored runs; ``compare_targets`` reads the runs from the store.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, overload

import numpy as np

from pglab.analysis import executions, points, profiles
from pglab.analysis.evidence_measures import run_measures, wait_statements
from pglab.analysis.evidence_rules import (
    CPU,
    CPU_SAMPLES,
    NODE,
    PLAN,
    RULES,
    THROUGHPUT,
    WAIT,
    Rule,
    rule_of,
    scope_of,
    scopes,
)
from pglab.jsonish import JsonObject
from pglab.profile import counters
from pglab.rows import PhaseRow, RunRow, Series, StoredRun, plain
from pglab.stats import differences
from pglab.stats.significance import ALPHA
from pglab.telemetry import os_stats
from pglab.telemetry.summary import tables_of

if TYPE_CHECKING:  # the store's and the comparison's types only
    from pglab.analysis.compare import Target
    from pglab.analysis.comparisons import PointPair
    from pglab.store.base import Store

__all__ = [
    "RULES",
    "TOP",
    "WAIT",
    "Evidence",
    "Item",
    "Rule",
    "items",
    "rank",
    "rule_of",
    "run_measures",
]

TOP = 5  # items a view prints


@dataclass(frozen=True)
class Item:
    """A figure that moved: B's mean minus A's with its 95% CI, both means, the test, and what
    it says in words (``text``)."""

    key: str
    name: str
    unit: str
    a: float
    b: float
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str  # "paired" or "welch"
    relative: float  # |Δ| / max(|a|, |b|): 1 when it appeared or vanished
    outside: bool  # a rise from outside the run (``Rule.outside``): ranked first
    t: float  # |Δ| / its standard error
    says: str  # what the change says ("" for nothing)
    # the keys of the items merged into this one: profiled functions of its kind with the same
    # shares on both sides (a chain of callers whose samples are all the same ones)
    alike: tuple[str, ...] = ()
    # a wait's statement: the text of the statement class (query id) most of the wait was in,
    # on the side where the wait was larger, and its share of that wait there (%)
    statement: str = ""
    statement_pct: float = 0.0

    @property
    def text(self) -> str:
        """``WALSync waits −0.71 sessions [−0.78, −0.64] (0.72 → 0.01): commits wait less
        for the WAL flush``."""
        if self.key.endswith(SHAPE):  # a query's plan nodes (``_shapes``)
            return f"{self.name} changed shape: {self.says}"
        unit = f" {self.unit}" if self.unit else ""
        out = (
            f"{self.name} {_num(self.delta, True)}{unit} [{_num(self.ci_low, True)}, "
            f"{_num(self.ci_high, True)}] ({_num(self.a)} → {_num(self.b)})"
        )
        out = f"{out}: {self.says}" if self.says else out
        if self.statement:
            out += f" ({self.statement_pct:.0f}% of it in `{_short(self.statement)}`)"
        return out


def _short(statement: str, chars: int = 60) -> str:
    """A statement on one line, cut to ``chars``."""
    one = " ".join(statement.split())
    return one if len(one) <= chars else one[: chars - 1] + "…"


def _num(v: float, signed: bool = False) -> str:
    digits = 0 if abs(v) >= 100 else 1 if abs(v) >= 10 else 2 if abs(v) >= 0.1 else 3
    text = f"{v:+,.{digits}f}" if signed else f"{v:,.{digits}f}"
    return text.replace("-", "−")


@dataclass(frozen=True)
class Evidence(Sequence[Item]):
    """A comparison's evidence: its items, ranked (a sequence of them), and what its runs could
    not measure, in words (``notes``: hardware counters unavailable on their machine)."""

    items: tuple[Item, ...] = ()
    notes: tuple[str, ...] = ()

    @overload
    def __getitem__(self, k: int) -> Item: ...
    @overload
    def __getitem__(self, k: slice) -> Sequence[Item]: ...
    def __getitem__(self, k: int | slice) -> Item | Sequence[Item]:
        return self.items[k]

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:  # a pair without items is left out, whatever its notes
        return bool(self.items)


# -- two sides ---------------------------------------------------------------------------------


def items(
    a: Mapping[int, Mapping[str, float]],
    b: Mapping[int, Mapping[str, float]],
    paired: bool,
) -> list[Item]:
    """The ranked evidence of B against A: ``a``/``b`` each run's ``run_measures`` by round
    (its repeat number); ``paired`` when the rounds pair (points of one interleaved campaign)."""
    keys = dict.fromkeys(k for side in (a, b) for m in side.values() for k in m)
    seen = [{r: scopes(dict(m)) for r, m in side.items()} for side in (a, b)]
    out = []
    for key in keys:
        if key.startswith(CPU_SAMPLES) or key == THROUGHPUT or not _above_floor(key, a, b):
            continue
        scope = scope_of(key)
        if scope is not None:  # not seen where its scope was recorded: zero there
            va, vb = (
                {r: m.get(key, 0.0) for r, m in side.items() if scope in s[r]}
                for side, s in zip((a, b), seen, strict=True)
            )
        else:
            va, vb = ({r: m[key] for r, m in side.items() if key in m} for side in (a, b))
        item = _item(key, va, vb, paired)
        if item is not None and not _follows(item, a, b, paired):
            out.append(item)
    return _shapes(_merged(rank(out)))


def _follows(
    item: Item,
    a: Mapping[int, Mapping[str, float]],
    b: Mapping[int, Mapping[str, float]],
    paired: bool,
) -> bool:
    """Whether a rate (``Rule.follows``: CPU %, MB/s, checkpoints in a run) merely followed the
    throughput: per transaction (each run's figure over its transactions per second) it did
    not move beyond its noise the way the rate moved (client CPU rising with TPS, each
    transaction costing the client the same)."""
    if not rule_of(item.key).follows:
        return False
    va, vb = (
        {
            r: m[item.key] / m[THROUGHPUT]
            for r, m in side.items()
            if item.key in m and m.get(THROUGHPUT)
        }
        for side in (a, b)
    )
    if len(va) < 2 or len(vb) < 2:  # no throughput to judge it by (an operation's phases)
        return False
    diff = _difference(va, vb, paired)  # None: the same per transaction in every run
    return diff is None or diff.p() >= ALPHA or diff.diff * item.delta <= 0


def _merged(found: Sequence[Item]) -> list[Item]:
    """Profiled functions of one kind with the same shares on both sides (``pg_plan_queries``,
    ``pg_plan_query``, ``planner``: a chain of calls whose samples are the same ones) as one
    item, where the first of them ranks, named together."""
    out: list[Item] = []
    first: dict[tuple[str, float, float], int] = {}
    for item in found:
        if item.key.startswith(CPU):
            kind, _, function = item.key[len(CPU) :].partition(":")
            same = (kind, round(item.a, 9), round(item.b, 9))
            if same in first:
                was = out[first[same]]
                name = was.name.replace(f" ({kind})", f" = {function} ({kind})")
                out[first[same]] = replace(
                    was, name=name, alike=(*was.alike, item.key), says=was.says or item.says
                )
                continue
            first[same] = len(out)
        out.append(item)
    return out


SHAPE = ":shape"  # a query's node items, merged: "plan:q09:shape"


def _shapes(found: Sequence[Item]) -> list[Item]:
    """A query's plan nodes that moved (``plan:qNN:node:TYPE``) as one item where the first
    of them ranks: its plan's shape, what left it and what came (``q09's plan changed shape:
    hash join ×2 → merge join ×2``), its figures the first's, the others' keys in ``alike``."""
    out: list[Item] = []
    at: dict[str, int] = {}
    nodes: dict[str, list[Item]] = {}
    for item in found:
        query, _, what = item.key[len(PLAN) :].partition(":")
        if not (item.key.startswith(PLAN) and what.startswith(NODE)):
            out.append(item)
            continue
        if query not in at:
            at[query] = len(out)
            out.append(item)
        nodes.setdefault(query, []).append(item)
    for query, moved in nodes.items():
        first = moved[0]
        out[at[query]] = replace(
            first,
            key=f"{PLAN}{query}{SHAPE}",
            name=f"{query}'s plan",
            unit="",
            says=f"{_nodes(moved, -1)} → {_nodes(moved, 1)}",
            alike=tuple(i.key for i in moved),
        )
    return out


def _nodes(moved: Sequence[Item], sign: int) -> str:
    """The node types of a plan's items that fell (``sign`` −1) or rose (1): ``hash ×2``."""
    parts = [
        (i.key.rpartition(NODE)[2].lower(), round(abs(i.delta)))
        for i in moved
        if i.delta * sign > 0
    ]
    return ", ".join(f"{n} ×{k}" if k != 1 else n for n, k in parts) or "nothing"


def _above_floor(
    key: str, a: Mapping[int, Mapping[str, float]], b: Mapping[int, Mapping[str, float]]
) -> bool:
    """A profiled function's figure is compared only when its process kind has
    ``profiles.MIN_KIND_SAMPLES`` on each side (the runs together) and the function (what it
    and its callees took) ``profiles.MIN_FUNCTION_SAMPLES`` on either: shares of fewer
    samples are noise. Every other figure is."""
    if not key.startswith(CPU):
        return True
    kind = CPU_SAMPLES + key[len(CPU) :].partition(":")[0]
    kinds = [sum(m.get(kind, 0.0) for m in side.values()) for side in (a, b)]
    if min(kinds) < profiles.MIN_KIND_SAMPLES:
        return False
    own = [sum(m.get(key, 0.0) / 100 * m.get(kind, 0.0) for m in side.values()) for side in (a, b)]
    return max(own) >= profiles.MIN_FUNCTION_SAMPLES


def rank(found: Sequence[Item]) -> list[Item]:
    """A rise from outside the run first (the run cannot have caused it), then the most
    moved relative to its size (to a tenth), then the server's own figures (a wait event, a
    function, WAL or temporary files per transaction) before the machine's that moved with
    them (the CPU's iowait vanishing with the WAL-flush waits), then relative to its noise.
    The profiled functions then take the places they earned among the others in the order of
    the share that moved, largest first, as the profile's differential has them: shares are
    points of one whole, and a function of 5 points that vanished in the noise of three
    rounds is not what explains a planner that rose from 4 to 30 (nor are 2 points that
    vanished with its 27)."""
    out = sorted(found, key=lambda i: (not i.outside, *_moved(i), -i.t, i.key))
    places = [k for k, i in enumerate(out) if i.key.startswith(CPU)]
    by_share = sorted((out[k] for k in places), key=lambda i: (-abs(i.delta), i.key))
    for k, item in zip(places, by_share, strict=True):
        out[k] = item
    return out


def _moved(i: Item) -> tuple[float, bool]:
    return (-round(i.relative, 1), i.key in MACHINE_WIDE)


# the OS's figures of the whole machine: they move with whatever the server does
MACHINE_WIDE = frozenset(
    {
        "cpu_user_pct",
        "cpu_system_pct",
        "cpu_iowait_pct",
        "cpu_steal_pct",
        "disk_read_mb_s",
        "disk_write_mb_s",
        "disk_await_ms",
    }
)


def _item(key: str, a: Mapping[int, float], b: Mapping[int, float], paired: bool) -> Item | None:
    diff = _difference(a, b, paired)
    if diff is None:
        return None
    rule = rule_of(key)
    low, high = diff.interval(1 - ALPHA)
    p = diff.p()
    if p >= ALPHA or abs(diff.diff) < rule.floor:
        return None
    ma, mb = float(np.mean(list(a.values()))), float(np.mean(list(b.values())))
    size = max(abs(ma), abs(mb))
    return Item(
        key=key,
        name=rule.name,
        unit=rule.unit,
        a=ma,
        b=mb,
        delta=diff.diff,
        ci_low=low,
        ci_high=high,
        p_value=p,
        method=diff.method,
        relative=min(1.0, abs(diff.diff) / size) if size else 0.0,
        outside=rule.outside and diff.diff > 0,
        t=abs(diff.diff) / diff.se if diff.se else math.inf,
        says=rule.up if diff.diff > 0 else rule.down,
    )


def _difference(
    a: Mapping[int, float], b: Mapping[int, float], paired: bool
) -> differences.Difference | None:
    """B − A: paired over the rounds both ran (``MIN_OWN_ROUNDS`` or more), else Welch's (two
    runs a side or more); None when neither can be measured or nothing varied and nothing
    moved."""
    common = sorted(set(a) & set(b))
    if paired and len(common) >= differences.MIN_OWN_ROUNDS:
        d = differences.paired(np.array([b[r] - a[r] for r in common], dtype=float))
    elif len(a) >= 2 and len(b) >= 2:
        d = differences.welch(
            np.array(list(a.values()), dtype=float), np.array(list(b.values()), dtype=float)
        )
    else:
        return None
    if d.se == 0:  # every run alike on each side: a difference without noise, or none
        if d.diff == 0:
            return None
        return differences.Difference(d.diff, 0.0, d.df, d.method, 0.0, d.rounds)
    return d


# -- from the store ----------------------------------------------------------------------------

# what the evidence does not read of a stored run (most of its bytes)
SKIP = (
    "latency",
    "progress",
    "script_latency",
    "pg.top_relations",
    "pg.usage_counts",
    "pg.buffercache",
    "pg.io",
)


def of_runs(
    store: Store, runs_a: Sequence[RunRow], runs_b: Sequence[RunRow], paired: bool
) -> Evidence:
    """The evidence of two sides' ok runs, read from the store (``paired``: by their repeat
    numbers, the rounds of one interleaved campaign; else each run on its own)."""
    loaded = [
        [full for r in runs if r.ok and (full := store.get_run(r.id, skip_kinds=SKIP)) is not None]
        for runs in (runs_a, runs_b)
    ]
    return of_stored(loaded[0], loaded[1], paired)


def of_stored(runs_a: Sequence[StoredRun], runs_b: Sequence[StoredRun], paired: bool) -> Evidence:
    """The evidence of two sides' stored runs (``of_runs``), each wait item with the statement
    class most of it was in where the servers computed query ids; its notes say what the runs
    could not measure (``unmeasured``)."""
    sides = []
    statements: list[dict[str, Counter[int]]] = []  # each side's waits by query id
    texts: dict[int, str] = {}  # a statement of each query id
    for runs in (runs_a, runs_b):
        side, by = {}, dict[str, Counter[int]]()
        for full in runs:
            side[full.repeat if paired else full.id] = run_measures(full)
            for key, counts in wait_statements(full, texts).items():
                by.setdefault(key, Counter()).update(counts)
        sides.append(side)
        statements.append(by)
    found = items(sides[0], sides[1], paired)
    return Evidence(
        tuple(_said_of(i, statements, texts) for i in found),
        unmeasured([*runs_a, *runs_b], [*sides[0].values(), *sides[1].values()]),
    )


def unmeasured(
    runs: Sequence[StoredRun], measures: Sequence[Mapping[str, float]]
) -> tuple[str, ...]:
    """What the runs could not measure, in words: the hardware counters of runs profiled on a
    machine that does not count them (their fingerprint's ``hardware_counters`` says why; a
    virtual machine often hides them), never a figure made up for them."""
    said = {
        run.fingerprint["hardware_counters"]
        for run, m in zip(runs, measures, strict=True)
        if "hardware_counters" in run.fingerprint and "ipc" not in m
    }
    return tuple(counters.unavailable(s) for s in sorted(said))


def _said_of(
    item: Item, statements: Sequence[Mapping[str, Counter[int]]], texts: Mapping[int, str]
) -> Item:
    """A wait's item with the statement class most of it was in, on the side where it was
    larger (``waits.statements``: servers that compute query ids); any other item as it is."""
    counts = statements[1 if item.delta > 0 else 0].get(item.key)
    if not counts:
        return item
    query_id, n = counts.most_common(1)[0]
    pct = 100 * n / sum(counts.values())
    return replace(item, statement=texts.get(query_id, ""), statement_pct=pct)


def compare_targets(
    store: Store, a: Target, b: Target, pairs: Sequence[PointPair]
) -> list[tuple[str, Evidence]]:
    """The evidence of each compared pair of points (``compare.compare_targets``' pairs): a
    list of (title, items), a pair without evidence left out. Two points of one interleaved
    campaign pair by round; two runs have no evidence (no noise measured from one run each)."""
    if a.kind == "run":
        return []
    paired = a.kind == "point" and a.campaign == b.campaign and _interleaved(store, a.campaign)
    out = []
    for pair in pairs:
        la, lb = pair["a"]["point"], pair["b"]["point"]
        ra = [r for r in a.runs if r.label == la and r.campaign == pair["a"]["campaign"]]
        rb = [r for r in b.runs if r.label == lb and r.campaign == pair["b"]["campaign"]]
        found = of_runs(store, ra, rb, paired)
        if found:
            out.append((f"{la} → {lb}", found))
    return out


def of_campaign(
    store: Store, name: str, rows: Sequence[points.PointRow]
) -> list[tuple[str, Evidence]]:
    """The evidence of each significant comparison (verdict + or −) of a campaign's ``rows``
    (``points.campaign_rows``, as ``pglab show`` has them) with its baseline: (title, items)."""
    significant = {r.point for r in rows if r.comparison and r.comparison.verdict in "+-"}
    if not significant:
        return []
    runs = store.list_runs(name)
    camp = store.get_campaign(name)
    out = []
    for base, other, _ in points.compared_labels(runs, camp):
        if other in significant:
            a, b = ([r for r in runs if r.label == label] for label in (base, other))
            found = of_runs(store, a, b, points.blocked_of(camp))
            if found:
                out.append((f"{base} → {other}", found))
    return out


def of_changes(
    store: Store, histories: Sequence[executions.PointHistory]
) -> list[tuple[str, Evidence]]:
    """The evidence of each change point of a campaign's executions (``pglab history``):
    ``of_change``'s, titled by the point and the execution of the change (those without
    evidence left out)."""
    out = []
    for p in histories:
        for k, c in enumerate(p.changes):
            found = of_change(store, p, k)
            if found:
                execution = p.steps[c.index].execution
                out.append((f"{p.point} at {execution.label or execution.campaign}", found))
    return out


def of_change(store: Store, p: executions.PointHistory, k: int) -> Evidence:
    """The evidence of a point's ``k``-th change point: the runs of the executions at the new
    level (up to the next change) against those of the level before it (from the change
    before), unpaired (Welch)."""
    bounds = [0, *(c.index for c in p.changes), len(p.steps)]
    levels = ((bounds[k], bounds[k + 1]), (bounds[k + 1], bounds[k + 2]))
    before, after = (
        [r for s in p.steps[lo:hi] for r in s.execution.runs if r.label == p.point]
        for lo, hi in levels
    )
    return of_runs(store, before, after, paired=False)


def of_variants(store: Store, campaign: str, a: str, b: str) -> Evidence:
    """The evidence of variant ``b`` of a campaign against its variant ``a`` (a bisect step's
    commits), by round when the campaign is interleaved."""
    runs = store.list_runs(campaign)
    side_a, side_b = ([r for r in runs if r.variant == v] for v in (a, b))
    return of_runs(store, side_a, side_b, _interleaved(store, campaign))


def json_of(found: Sequence[Item]) -> list[JsonObject]:
    """Items as ``--json`` prints them: every field, and the ``text`` a view prints."""
    return [{**plain(i), "text": i.text} for i in found]


def _interleaved(store: Store, campaign: str) -> bool:
    return points.blocked_of(store.get_campaign(campaign))


def busy(phases: Sequence[PhaseRow], series: Series) -> list[str]:
    """The "busy machine" warning of a run: the first measured phase in which processes other
    than the server, the load generator and pglab used more than ``BUSY_MACHINE_PCT`` of a core
    (what ``os_stats`` keeps as ``others_cpu_pct``; runs stored before it have none)."""
    for ph in phases:
        used = os_stats.summarize(tables_of(series.get(str(ph.idx), {}))).get("others_cpu_pct")
        if ph.measured and used is not None and used > os_stats.BUSY_MACHINE_PCT:
            return [
                f"other processes used {used:.0f}% of a core in phase "
                f"{ph.name} (neither the server, {ph.client} nor pglab): they took CPU from the "
                "run; measure on a machine of its own, or compare runs made side by side"
            ]
    return []
