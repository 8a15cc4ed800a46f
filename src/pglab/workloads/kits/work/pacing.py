"""Terminals that think: kit = "tpcc" with ``pacing = "spec"`` (TPC-C clause 5.2.5).

Each pgbench client is a terminal with a fixed home warehouse (10 terminals per warehouse:
clients = 10 × warehouses) that, for every transaction pgbench picks at its weight, waits
the type's keying time, runs the transaction, then waits a think time drawn from a
negative exponential (Tt = -ln(r) × mean, r uniform in (0, 1], truncated at 10 × the mean).
``think_time`` (New-Order's mean think time, the specification's 12 s) scales every keying
and think time in proportion, for studies of throughput against think time.

pgbench's latency of a script includes its ``\\sleep``s, so the response time the
specification defines (the transaction alone) is measured apart: the server's
``clock_timestamp()`` is read (``\\gset``) before the transaction's first statement and
after its last, and their difference in µs (with the script's code, ``CODES``) is told by
pgbench's ``debug()`` on stderr (``pgbench/responses.py`` reads those lines). The two reads
are two more round trips per transaction, outside the time measured.

The scripts of a paced phase are the kit's, wrapped (and their home warehouse set from
``:client_id``): new files with their own digests, so a phase without pacing runs the very
scripts it ran before and its point keeps its key (a point's phases are paced by
``workloads/kits/point``).

A declaration: the standard library, pglab's core modules and the kits' table only.
"""

from __future__ import annotations

import hashlib
import math

from pglab.script import Script
from pglab.workloads.kits.work.kits import TPCC, written

SPEC = "spec"
PACINGS = (SPEC,)
TERMINALS_PER_WAREHOUSE = 10  # clause 4.2.2
SPEC_THINK_S = 12.0  # New-Order's mean think time: what ``think_time`` sets
CAP = 10.0  # each think time is truncated at 10 × its mean (clause 5.2.5.4)
# clause 5.2.5.2 and 5.2.5.4: minimum keying time and mean think time, seconds, by script
KEYING_S = {
    "new_order": 18.0,
    "new_order_rollback": 18.0,
    "payment": 3.0,
    "order_status": 2.0,
    "delivery": 2.0,
    "stock_level": 2.0,
}
THINK_S = {
    "new_order": 12.0,
    "new_order_rollback": 12.0,
    "payment": 12.0,
    "order_status": 10.0,
    "delivery": 5.0,
    "stock_level": 5.0,
}
# clause 5.2.5.3: the 90th percentile of each type's response times, at most (seconds). The kit
# runs Delivery at once, so its response is the whole delivery's (the deferred part's limit
# is 80 s): the terminal's 5 s is the one checked, the stricter
RESPONSE_LIMIT_S = {
    "new_order": 5.0,
    "payment": 5.0,
    "order_status": 5.0,
    "delivery": 5.0,
    "stock_level": 5.0,
}
SPEC_NOPM_PER_WAREHOUSE = 12.86  # the specification's bound (clause 5.2.5.4's times)
# what a script tells with its response time (debug()'s one integer: code × UNIT + µs), since
# pgbench's threads write debug()'s "debug(script=N,command=M): " and its value apart, and
# their writes interleave: only the value's line can be read whole
CODES = {
    "new_order": 1,
    "new_order_rollback": 2,
    "payment": 3,
    "order_status": 4,
    "delivery": 5,
    "stock_level": 6,
}
UNIT = 10**12

HOME = "\\set w_id random(1, :warehouses)\n"
HOME_PACED = "\\set w_id (:client_id + :terminal_from) / 10 % :warehouses + 1\n"
DISTRICT = "\\set d_id random(1, 10)\n"  # Stock-Level: each terminal its own (clause 2.8.1.1)
DISTRICT_PACED = "\\set d_id (:client_id + :terminal_from) % 10 + 1\n"

BEFORE = """\
-- pglab: paced as a terminal of TPC-C clause 5.2.5: keying time, the transaction timed by the
-- server's clock (told by debug() on stderr), think time; :think_scale = think_time / 12 s
\\set pacing_keying_us int({keying_us} * :think_scale)
\\sleep :pacing_keying_us us
SELECT extract(epoch FROM clock_timestamp()) AS pacing_t0 \\gset
"""
AFTER = """\
SELECT {code} * {unit}
    + round((extract(epoch FROM clock_timestamp()) - :pacing_t0) * 1000000)::bigint AS pacing_told
\\gset
\\set pacing_told debug(:pacing_told)
\\set pacing_r random(1, 1000000000) / 1000000000.0
\\set pacing_think_us int(least(-ln(:pacing_r), {cap}) * {think_us} * :think_scale)
\\sleep :pacing_think_us us
"""


def think_scale(think_time: float | None) -> float:
    """The factor on the specification's keying and think times: ``think_time`` (seconds,
    New-Order's mean think time; None: the specification's 12 s) over 12 s."""
    return 1.0 if think_time is None else think_time / SPEC_THINK_S


def wrapped(stem: str, text: str) -> str:
    """The kit's script ``stem`` (expanded) as a terminal runs it: its home warehouse (and
    Stock-Level's district) from the client's number, the keying time before, the response
    time told and the think time after."""
    if HOME not in text:
        raise ValueError(f"tpcc script {stem}: no line {HOME.strip()!r} to set its home from")
    body = text.replace(HOME, HOME_PACED)
    if stem == "stock_level":
        if DISTRICT not in body:
            raise ValueError(f"tpcc script {stem}: no line {DISTRICT.strip()!r}")
        body = body.replace(DISTRICT, DISTRICT_PACED)
    if not body.endswith("\n"):
        body += "\n"
    before = BEFORE.format(keying_us=round(KEYING_S[stem] * 1e6))
    after = AFTER.format(
        code=CODES[stem], unit=UNIT, think_us=round(THINK_S[stem] * 1e6), cap=f"{CAP:.1f}"
    )
    return before + body + after


def scripts(mode: str) -> tuple[Script, ...]:
    """The paced scripts of kit = "tpcc"'s ``mode``, at the kit's weights, each written to a
    folder named by its content (``kits.written``) under its own stem's file name."""
    folder = TPCC.directory() / mode
    mix = TPCC.mix[mode] if isinstance(TPCC.mix, dict) else TPCC.mix
    out = []
    for stem, weight in mix:
        text = wrapped(stem, TPCC.expanded(folder / f"{stem}.sql"))
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        path = written(f"tpcc/{digest}/{mode}-paced", f"{stem}.sql", text)
        out.append(Script(path=str(path), weight=weight, sha256=digest))
    return tuple(out)


def from_terminal(defines: tuple[tuple[str, str], ...], first: int) -> tuple[tuple[str, str], ...]:
    """A paced phase's variables for a generator host whose clients start at ``first``
    (its terminals' home warehouses follow those of the hosts before it)."""
    return tuple((k, str(first) if k == "terminal_from" else v) for k, v in defines)


def mean_cycle_s(scale: float = 1.0) -> float:
    """A terminal's mean time between transactions without their response times: keying plus
    the truncated exponential's mean think time (mean × (1 - e^-10)), over the kit's mix."""
    mix = TPCC.mix if not isinstance(TPCC.mix, dict) else ()
    total = sum(w for _, w in mix)
    truncated = 1 - math.exp(-CAP)
    return scale * sum(w * (KEYING_S[s] + THINK_S[s] * truncated) for s, w in mix) / total


def nopm_bound(warehouses: float, think_time: float | None) -> float | None:
    """The most committed New-Orders per minute the terminals can make (the kit's ``nopm``
    counts committed ones; the specification's 12.86 per warehouse counts the 1% rolled back
    too): 10 terminals per warehouse, each one transaction per mean cycle with no response
    time at all. None when nothing paces (think_time 0)."""
    scale = think_scale(think_time)
    if scale <= 0:
        return None
    mix = TPCC.mix if not isinstance(TPCC.mix, dict) else ()
    committed = dict(mix)["new_order"] / sum(w for _, w in mix)
    terminals = TERMINALS_PER_WAREHOUSE * warehouses
    return terminals * 60.0 * committed / mean_cycle_s(scale)
