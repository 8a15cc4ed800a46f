"""What reading a server's code afresh at every start costs (``postgres/code_pages.py``).

One cluster of the embedded PostgreSQL (initdb once) is started and stopped ``--pairs`` times
with its code read afresh (the default) and as many with its cached pages kept
(``PGLAB_KEEP_CODE_PAGES=1``), alternating which goes first; each start is timed from the call
to ready (the postmaster accepting connections), then one connection runs ``--query`` so that
the first backend's code is paged in too. Prints each arm's median with its 95% bootstrap
interval and, last, ``code_pages_start_ratio: X`` (afresh over kept, the median of the
within-pair ratios, with its interval).

    .venv/bin/python bench/code_pages.py [--pairs 20]
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from _common import bootstrap_median_ci, open_lab, parser

from pglab.campaign.spec import ServerSpec
from pglab.postgres import code_pages, server
from pglab.postgres.sources import resolve


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--query", default="select count(*) from pg_class")
    args = ap.parse_args()
    lab = open_lab(args)
    binaries = resolve(ServerSpec(), lab)
    datadir = Path(tempfile.mkdtemp(prefix="code-pages-", dir=lab.clusters))
    datadir.rmdir()
    server.initdb(binaries, lab, datadir)
    times: dict[str, list[float]] = {"afresh": [], "kept": []}
    try:
        with server.Cluster(binaries, lab, datadir, datadir.name) as cluster:
            for i in range(args.pairs):
                for arm in ("afresh", "kept") if i % 2 == 0 else ("kept", "afresh"):
                    if arm == "kept":
                        os.environ[code_pages.KEEP] = "1"
                    else:
                        os.environ.pop(code_pages.KEEP, None)
                    t0 = time.monotonic()
                    cluster.start()
                    with cluster.connect() as conn:
                        conn.execute(args.query).fetchall()
                    times[arm].append(time.monotonic() - t0)
                    cluster.stop("fast")
                print(
                    f"pair {i + 1}: afresh {times['afresh'][-1] * 1000:7.1f} ms, "
                    f"kept {times['kept'][-1] * 1000:7.1f} ms",
                    flush=True,
                )
    finally:
        os.environ.pop(code_pages.KEEP, None)
    for arm, secs in times.items():
        lo, hi = bootstrap_median_ci(secs)
        print(
            f"{arm:7s} start to first query: median {statistics.median(secs) * 1000:.1f} ms "
            f"(95% CI {lo * 1000:.1f}–{hi * 1000:.1f})"
        )
    ratios = [a / k for a, k in zip(times["afresh"], times["kept"], strict=True)]
    lo, hi = bootstrap_median_ci(ratios)
    print(f"code_pages_start_ratio: {statistics.median(ratios):.4f} (95% CI {lo:.4f}-{hi:.4f})")


if __name__ == "__main__":
    main()
