"""Each query's plan from one extra execution (``EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)``,
outside the timed runs) and what differs between two plans, named as a person reads it: their
shapes (``hash join → merge join``) and, shape or not, where a node ran out of ``work_mem``
(``bitmap lossy on 66,153 blocks → in memory``: a sort on disk, a hash join in batches, a hash
aggregate on disk, a bitmap heap scan's lossy pages, which ANALYZE reports per node).

A plan is JSON where it enters (``plans``: EXPLAIN's output, stored as a phase's table) and
where it is read back (``change``: two stored plans); ``parse`` makes it a tree of
``PlanNode`` (the node's type, its children, where it outgrew work_mem) once, and
``shape``/``spills`` read the tree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import psycopg

from pglab.jsonish import JsonObject
from pglab.records import TableJson
from pglab.workloads.tpch.power import cancelled
from pglab.workloads.tpch.work.queries import query

TABLE = "tpch.plans"  # a phase's table: a row per query, its plan as JSON


def plans(
    conn: psycopg.Connection,
    queries: Sequence[int],
    seed: int,
    scale: float,
    timeout_s: float | None = None,
) -> dict[int, JsonObject]:
    """Each query's plan as EXPLAIN's JSON (its top object), on ``conn`` (autocommit); a query
    that ``timeout_s`` stops gets EXPLAIN's plan without ANALYZE (what it would have run)."""
    limit = f"SET statement_timeout = {max(1, round((timeout_s or 0) * 1000))}".encode()
    out: dict[int, JsonObject] = {}
    for n in queries:
        sql = query(n, seed, scale).encode()
        try:
            conn.execute(limit if timeout_s else b"SET statement_timeout = 0")
            row = conn.execute(b"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql).fetchone()
        except psycopg.errors.QueryCanceled:
            conn.execute(b"SET statement_timeout = 0")  # planning alone is not limited
            row = conn.execute(b"EXPLAIN (FORMAT JSON) " + sql).fetchone()
        except BaseException:  # Ctrl-C: the query ends with pglab
            cancelled(conn)
            raise
        assert row is not None
        out[n] = row[0][0]
    conn.execute(b"RESET statement_timeout")
    return out


def as_table(found: dict[int, JsonObject]) -> TableJson:
    """A row per query, its plan as EXPLAIN's JSON: a phase's table."""
    return {"columns": ["query", "plan"], "rows": [[n, plan] for n, plan in found.items()]}


@dataclass(frozen=True, slots=True)
class PlanNode:
    """A node of EXPLAIN's JSON plan, with the fields ``shape`` and ``spills`` read: its type,
    where it outgrew work_mem (``Sort Space Type``/``Used`` in kB, ``Hash Batches``, a hash
    aggregate's ``Disk Usage`` in kB, ``Lossy Heap Blocks``; 0 where the plan has none) and
    its children (``Plans``)."""

    node_type: str  # "Hash Join"; "?" when EXPLAIN gave none
    children: tuple[PlanNode, ...] = ()
    sort_on_disk_kb: int | None = None  # a sort that spilled ("Sort Space Type": "Disk")
    hash_batches: int = 1
    disk_usage_kb: int = 0
    lossy_heap_blocks: int = 0


def parse(plan: JsonObject) -> PlanNode:
    """EXPLAIN (FORMAT JSON)'s top object (or one of its nodes) as a typed node tree."""
    node = plan.get("Plan", plan)
    sort_kb = int(node.get("Sort Space Used") or 0)
    return PlanNode(
        node_type=str(node.get("Node Type", "?")),
        children=tuple(parse(child) for child in node.get("Plans") or ()),
        sort_on_disk_kb=sort_kb if node.get("Sort Space Type") == "Disk" else None,
        hash_batches=int(node.get("Hash Batches") or 1),
        disk_usage_kb=int(node.get("Disk Usage") or 0),
        lossy_heap_blocks=int(node.get("Lossy Heap Blocks") or 0),
    )


def _nodes(node: PlanNode) -> Iterator[str]:
    yield node.node_type
    for child in node.children:
        yield from _nodes(child)


def shape(plan: PlanNode) -> tuple[str, ...]:
    """The plan's node types in depth-first order (its shape, without costs or times)."""
    return tuple(_nodes(plan))


def shape_change(a: PlanNode, b: PlanNode) -> str | None:
    """How ``b``'s shape differs from ``a``'s, in words (``hash join → merge join``), or None
    when they have the same shape: the node types one has more of, then the other's."""
    sa, sb = shape(a), shape(b)
    if sa == sb:
        return None
    ca, cb = Counter(sa), Counter(sb)
    gone = sorted((ca - cb).elements())
    came = sorted((cb - ca).elements())
    if not gone and not came:
        return "same nodes in another order"
    left = ", ".join(dict.fromkeys(n.lower() for n in gone)) or "nothing"
    right = ", ".join(dict.fromkeys(n.lower() for n in came)) or "nothing"
    return f"{left} → {right}"


# where a node outgrew work_mem, in words: its kind's text with the amount (kB shown as MB)
SPILL_TEXT: dict[str, Callable[[int], str]] = {
    "sort": lambda kb: f"sort on disk ({kb / 1024:,.1f} MB)",
    "hash": lambda n: f"hash in {n:,} batches",
    "hashagg": lambda kb: f"hash aggregate on disk ({kb / 1024:,.1f} MB)",
    "bitmap": lambda n: f"bitmap lossy on {n:,} blocks",
}


def _spills(node: PlanNode) -> Iterator[tuple[str, int]]:
    """Where a plan's nodes outgrew work_mem, as (kind, amount) pairs: the kB of a sort on
    disk, the batches of a hash join (over 1), the kB a hash aggregate wrote, the lossy pages
    of a bitmap heap scan (whose rows are then all rechecked)."""
    if node.sort_on_disk_kb is not None:
        yield "sort", node.sort_on_disk_kb
    if node.hash_batches > 1:
        yield "hash", node.hash_batches
    if node.disk_usage_kb > 0:
        yield "hashagg", node.disk_usage_kb
    if node.lossy_heap_blocks > 0:
        yield "bitmap", node.lossy_heap_blocks
    for child in node.children:
        yield from _spills(child)


def spills(plan: PlanNode) -> dict[str, int]:
    """A plan's nodes that outgrew work_mem, summed by kind (empty: all in memory)."""
    out: Counter[str] = Counter()
    for kind, amount in _spills(plan):
        out[kind] += amount
    return dict(out)


def spill_text(found: dict[str, int]) -> str:
    """``spills`` in words (``sort on disk (12.5 MB), hash in 8 batches``)."""
    return ", ".join(SPILL_TEXT[kind](n) for kind, n in found.items()) or "in memory"


def change(a: JsonObject, b: JsonObject) -> str | None:
    """How plan ``b`` differs from plan ``a`` (each EXPLAIN's JSON as stored: ``parse``) in
    words: its shape (``shape_change``) and where their nodes outgrew work_mem (``sort on disk
    (12.5 MB) → in memory``), or None when neither differs. The same shape with other spills
    is ``same nodes; ...``."""
    pa, pb = parse(a), parse(b)
    shaped = shape_change(pa, pb)
    sa, sb = spills(pa), spills(pb)
    spilled = None if set(sa) == set(sb) else f"{spill_text(sa)} → {spill_text(sb)}"
    if shaped and spilled:
        return f"{shaped}; {spilled}"
    if spilled:
        return f"same nodes; {spilled}"
    return shaped
