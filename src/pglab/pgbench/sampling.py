"""How much of the per-transaction log pgbench writes (``--sampling-rate``), and what the sample
costs the percentiles.

pgbench writes one line per transaction to its log (``latency_log = "full"``); at 100k TPS on two
cores that is pgbench's own work competing with the server's, and it cost pglab 6% of the TPS
that bare pgbench gets (``bench/overhead.py``). Unless a phase sets ``sampling_rate``, pglab keeps
the log at about ``LINE_BUDGET`` lines a second: a point whose earlier run in this campaign made
more transactions a second than that gets ``--sampling-rate`` = budget / TPS. Its first run
(nothing known yet) logs every transaction. pgbench chooses each transaction into the sample at
random, independently, so the sample's percentiles are unbiased estimates; ``interval`` gives the
95% interval of each one (the distribution-free one of order statistics, ``stats/percentiles``: the
ranks ``n·q ± 1.96·√(n·q·(1−q))``), which ``pglab show`` prints beside them. TPS, the transaction
count and pgbench's mean latency always come from every transaction (its summary and ``-P 1``).
"""

from __future__ import annotations

import math

from pglab.pgbench import latency
from pglab.stats.percentiles import Z95, rank_interval

# lines a second that the log may take; 10k costs pgbench well under 1% of a core
LINE_BUDGET = 10_000.0


def auto_rate(expected_tps: float | None, budget: float | None = None) -> float | None:
    """The ``--sampling-rate`` that keeps the log near ``budget`` lines a second at
    ``expected_tps`` (3 significant digits, rounded down), or None to log every transaction."""
    budget = LINE_BUDGET if budget is None else budget
    if expected_tps is None or expected_tps <= budget:
        return None
    rate = budget / expected_tps
    digits = 2 - math.floor(math.log10(rate))
    return float(math.floor(rate * 10**digits) / 10**digits)


def interval(hist: latency.Histogram, q: float, z: float = Z95) -> tuple[float, float]:
    """The 95% interval (ms) of the ``q``-th percentile of the population a sampled
    histogram was drawn from: from the lower edge of the bucket at rank ``n·q/100 −
    z·√(n·p·(1−p))`` to the upper edge of the one at the rank as far above (``stats/percentiles``;
    a value known only by its bucket may be anywhere in it)."""
    n = sum(c for _, c in hist)
    if n == 0:
        raise ValueError("interval of an empty histogram")
    low_q, high_q = rank_interval(n, q, z)
    low = latency.bucket_at(hist, low_q)
    low_edge = latency.bucket_upper_us(low - 1) if low >= 1 else 0.0
    return low_edge / 1000, latency.bucket_upper_us(latency.bucket_at(hist, high_q)) / 1000
