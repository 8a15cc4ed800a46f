"""The kinds of warning pglab gives about a campaign, a point or a run (``run_warnings``
makes them; ``pacing`` and ``generator_hosts`` make some), by name, most serious first: what
``show``, ``compare``, the report and the JSON say a warning is."""

from __future__ import annotations

from typing import Literal, get_args

# Warning kinds, most serious first (the order campaign_notices returns them in).
NoticeKind = Literal[
    "failed",  # the run failed: the most specific line of its error (records.reason_of)
    "failures",  # pgbench's failed transactions (serialization, deadlock) over 5% of a phase's
    "inconsistent",  # a workload kit's consistency conditions broken after a phase (its data)
    "skipped",  # TPC-C's Delivery skipped more than 1% of its districts (clause 2.7.4.2)
    "response-time",  # paced TPC-C-like terminals: a type's 90th percentile over its limit
    "assertions",  # the server was built with assertions: not a production build's speed
    "hosts",  # runs pooled into one figure, or compared, ran on different machines (a fleet)
    "differs",  # two compared points differ in what the campaign did not vary (comparable.py)
    "clock",  # a generator host's clock offset measured too loosely to align its seconds
    "unstable",  # a point's repeats vary by more than 10% (CV of TPS)
    "drifting",  # TPS trends within a run, across a point's repeats or over the campaign
    "client-bound",  # pgbench used most of a core (here, or of a generator host's CPUs)
    "busy-machine",  # other processes than the server, pgbench and pglab used the CPU
    "short",  # a write workload measured for less than two checkpoint cycles
    "in-memory",  # the data set fits in shared_buffers: no read IO was measured
    "unresolved",  # comparisons whose runs could not find the effect of interest (verdict ?)
]
KINDS: tuple[NoticeKind, ...] = get_args(NoticeKind)
