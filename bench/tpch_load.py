"""Generating and loading the TPC-H-like kit's data through pglab against tpchgen-cli plus COPY
by hand, interleaved (their order alternating by round), on one cluster pglab makes.

pglab: ``workloads/tpch/load.load`` (tpchgen-cli's CSV streamed into parallel COPY, parts per
connection, keys, indexes, VACUUM ANALYZE). By hand: ``tpchgen-cli csv`` to files, each file
COPYed in turn on one connection, then the same keys.sql and VACUUM ANALYZE. Each round's ratio
is pglab's seconds over the by-hand seconds; the last line is ``tpch_load_ratio: X`` (the
median over rounds, with its 95% bootstrap CI), goal ≤ 1.15.

    .venv/bin/python bench/tpch_load.py [--scale 1] [--rounds 5]
    .venv/bin/python bench/tpch_load.py --quick      # SF 0.01, one round: proves it runs
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _common import bootstrap_median_ci, open_lab, parser

from pglab.campaign.spec import ServerSpec
from pglab.postgres.server import Cluster, initdb
from pglab.postgres.sources import resolve
from pglab.workloads.loading import Connect
from pglab.workloads.tpch import load as tpch_load


def by_hand(connect: Connect, scale: float, scratch: Path) -> float:
    t0 = time.monotonic()
    out = scratch / "csv"
    shutil.rmtree(out, ignore_errors=True)
    exe = tpch_load.tpchgen_exe()
    subprocess.run([exe, "csv", "-s", f"{scale:g}", "-o", str(out), "-q"], check=True)
    with connect() as conn:
        conn.execute((tpch_load.KIT_DIR / "schema.sql").read_text().encode())
        for table in tpch_load.ROWS_PER_SF:
            sql = f"COPY {table} FROM STDIN (FORMAT csv, HEADER true)".encode()
            with conn.cursor() as cur, open(out / f"{table}.csv", "rb") as f, cur.copy(sql) as c:
                while chunk := f.read(1 << 20):
                    c.write(chunk)
        conn.execute((tpch_load.KIT_DIR / "keys.sql").read_text().encode())
    with connect() as conn:
        conn.execute("VACUUM ANALYZE")
    shutil.rmtree(out, ignore_errors=True)
    return time.monotonic() - t0


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="SF 0.01, one round")
    args = ap.parse_args()
    if args.quick:
        args.scale, args.rounds = 0.01, 1
    lab = open_lab(args)
    binaries = resolve(ServerSpec(), lab)
    datadir = lab.clusters / "w-bench-tpch"
    shutil.rmtree(datadir, ignore_errors=True)
    initdb(binaries, lab, datadir)
    ratios: list[float] = []
    with (
        tempfile.TemporaryDirectory() as scratch,
        Cluster(binaries, lab, datadir, "bench-tpch") as cl,
    ):
        cl.start()
        for i in range(args.rounds):
            order = ("pglab", "hand") if i % 2 == 0 else ("hand", "pglab")
            took = {}
            for arm in order:
                if arm == "pglab":
                    t0 = time.monotonic()
                    tpch_load.load(cl.connect, args.scale)
                    took[arm] = time.monotonic() - t0
                else:
                    took[arm] = by_hand(cl.connect, args.scale, Path(scratch))
            ratios.append(took["pglab"] / took["hand"])
            print(
                f"round {i + 1}: pglab {took['pglab']:.2f} s, by hand {took['hand']:.2f} s, "
                f"ratio {ratios[-1]:.3f}"
            )
        cl.stop("fast")
    shutil.rmtree(datadir, ignore_errors=True)
    low, high = bootstrap_median_ci(ratios) if len(ratios) > 1 else (ratios[0], ratios[0])
    print(
        f"tpch_load_ratio: {statistics.median(ratios):.4f} (95% CI {low:.4f}–{high:.4f}, "
        f"SF {args.scale:g}, {args.rounds} rounds)"
    )


if __name__ == "__main__":
    main()
