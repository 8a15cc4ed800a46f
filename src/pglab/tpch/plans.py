"""Each query's plan from one extra execution (``EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)``,
outside the timed runs) and what differs between two plans' shapes, named as a person reads
it: ``hash join → merge join``.
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
