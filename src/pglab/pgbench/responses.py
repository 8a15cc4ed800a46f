"""Response times of terminals that think (kit = "tpcc" with ``pacing``: ``workloads/kits/
work/pacing.py``): each paced transaction tells its script's code and its response time, read from
the server's clock, as one integer by pgbench's ``debug()`` on stderr (``int CODE×10¹²+µs``).
pgbench writes debug()'s prefix ``debug(script=N,command=M): `` and its value apart, and its
threads' writes interleave, so a line may hold other transactions' prefixes (before a progress
line, or in the middle of one): they are stripped (``Responses.strip``) and only values are read.

They are gathered per type as pgbench runs (none kept in the phase's output) and kept as the
phase's ``response_times`` table: per transaction type (a rolled-back New-Order is a
New-Order, as clause 5.2.5.3 counts it), how many, the 50th and 90th percentiles and the
maximum (ms), and clause 5.2.5.3's limit of the 90th."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from pglab.records import TableJson
from pglab.workloads.kits.work.pacing import CODES, RESPONSE_LIMIT_S, UNIT

TABLE = "response_times"
COLUMNS = ["type", "transactions", "p50_ms", "p90_ms", "max_ms", "limit_ms"]
PREFIXES = re.compile(r"debug\(script=\d+,command=\d+\): ")  # anywhere in a line
VALUE = re.compile(r"int (\d+)\s*")
STEMS = {code: stem for stem, code in CODES.items()}


def type_of(stem: str) -> str:
    """The transaction type a script counts for: its stem, a rolled-back one its type's."""
    return stem.removesuffix("_rollback")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by nearest rank: the smallest value with at least q% of
    them at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


class Responses:
    """The response times pgbench's debug lines tell, in ms per transaction type."""

    def __init__(self) -> None:
        self.by_type: dict[str, list[float]] = {}

    def strip(self, line: str) -> str:
        """``line`` without debug()'s prefixes; "" when what is left was a response time (then
        kept)."""
        line = PREFIXES.sub("", line)
        found = VALUE.fullmatch(line)
        if found is None:
            return line
        code, us = divmod(int(found[1]), UNIT)
        stem = STEMS.get(code)
        if stem is None:
            return line
        self.by_type.setdefault(type_of(stem), []).append(us / 1000)
        return ""

    def strip_all(self, text: str) -> str:
        """``text`` (a generator host's stderr) with its response times kept and taken out."""
        return "".join(self.strip(line) for line in text.splitlines(keepends=True))

    def table(self) -> TableJson:
        """Per transaction type, in the kit's order; every type, even one never run."""
        rows = []
        for kind, limit_s in RESPONSE_LIMIT_S.items():
            times = self.by_type.get(kind, [])
            figures = (
                [len(times), percentile(times, 50), percentile(times, 90), max(times)]
                if times
                else [0, None, None, None]
            )
            rows.append([kind, *figures, limit_s * 1000])
        return {"columns": list(COLUMNS), "rows": rows}


def over_limit(table: TableJson) -> list[str]:
    """The types of a ``response_times`` table whose 90th percentile passed its limit."""
    out = []
    for row in table["rows"]:
        got = dict(zip(table["columns"], row, strict=True))
        if got["p90_ms"] is not None and got["p90_ms"] > got["limit_ms"]:
            out.append(str(got["type"]))
    return out
