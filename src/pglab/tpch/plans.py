"""Each query's plan from one extra execution (``EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)``,
outside the timed runs) and what differs between two plans, named as a person reads it: their
shapes (``hash join → merge join``) and, shape or not, where a node ran out of ``work_mem``
(``bitmap lossy on 66,153 blocks → in memory``: a sort on disk, a hash join in batches, a hash
aggregate on disk, a bitmap heap scan's lossy pages, which ANALYZE reports per node).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from pglab.campaign.kits.tpch_queries import query
from pglab.tpch.power import cancelled

TABLE = "tpch.plans"  # a phase's table: a row per query, its plan as JSON


def plans(
    conn: psycopg.Connection,
    queries: Sequence[int],
    seed: int,
    scale: float,
    timeout_s: float | None = None,
) -> dict[int, Any]:
    """Each query's plan as EXPLAIN's JSON (its top object), on ``conn`` (autocommit); a query
    that ``timeout_s`` stops gets EXPLAIN's plan without ANALYZE (what it would have run)."""
    limit = f"SET statement_timeout = {max(1, round((timeout_s or 0) * 1000))}".encode()
    out = {}
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


def as_table(found: dict[int, Any]) -> dict[str, object]:
    """A row per query, its plan as EXPLAIN's JSON: a phase's table."""
    return {"columns": ["query", "plan"], "rows": [[n, plan] for n, plan in found.items()]}


def _nodes(node: dict[str, Any]) -> Iterator[str]:
    yield str(node.get("Node Type", "?"))
    for child in node.get("Plans") or ():
        yield from _nodes(child)


def shape(plan: dict[str, Any]) -> tuple[str, ...]:
    """The plan's node types in depth-first order (its shape, without costs or times)."""
    return tuple(_nodes(plan.get("Plan", plan)))


def shape_change(a: dict[str, Any], b: dict[str, Any]) -> str | None:
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
SPILL_TEXT = {
    "sort": lambda kb: f"sort on disk ({kb / 1024:,.1f} MB)",
    "hash": lambda n: f"hash in {n:,} batches",
    "hashagg": lambda kb: f"hash aggregate on disk ({kb / 1024:,.1f} MB)",
    "bitmap": lambda n: f"bitmap lossy on {n:,} blocks",
}


def _spills(node: dict[str, Any]) -> Iterator[tuple[str, int]]:
    """Where a plan's nodes outgrew work_mem, as (kind, amount) pairs: the kB of a sort on
    disk, the batches of a hash join (over 1), the kB a hash aggregate wrote, the lossy pages
    of a bitmap heap scan (whose rows are then all rechecked)."""
    if node.get("Sort Space Type") == "Disk":
        yield "sort", int(node.get("Sort Space Used") or 0)
    if int(node.get("Hash Batches") or 1) > 1:
        yield "hash", int(node["Hash Batches"])
    if int(node.get("Disk Usage") or 0) > 0:
        yield "hashagg", int(node["Disk Usage"])
    if int(node.get("Lossy Heap Blocks") or 0) > 0:
        yield "bitmap", int(node["Lossy Heap Blocks"])
    for child in node.get("Plans") or ():
        yield from _spills(child)


def spills(plan: dict[str, Any]) -> dict[str, int]:
    """A plan's nodes that outgrew work_mem, summed by kind (empty: all in memory)."""
    out: Counter[str] = Counter()
    for kind, amount in _spills(plan.get("Plan", plan)):
        out[kind] += amount
    return dict(out)


def spill_text(found: dict[str, int]) -> str:
    """``spills`` in words (``sort on disk (12.5 MB), hash in 8 batches``)."""
    return ", ".join(SPILL_TEXT[kind](n) for kind, n in found.items()) or "in memory"


def change(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """How ``b`` differs from ``a`` in words: its shape (``shape_change``) and where their
    nodes outgrew work_mem (``sort on disk (12.5 MB) → in memory``), or None when neither
    differs. The same shape with other spills is ``same nodes; ...``."""
    shaped = shape_change(a, b)
    sa, sb = spills(a), spills(b)
    spilled = None if set(sa) == set(sb) else f"{spill_text(sa)} → {spill_text(sb)}"
    if shaped and spilled:
        return f"{shaped}; {spilled}"
    if spilled:
        return f"same nodes; {spilled}"
    return shaped
