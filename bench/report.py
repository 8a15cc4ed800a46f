"""How long does `pglab report` take on a 100-run campaign with full telemetry?

Fills a fresh SQLite store with a synthetic campaign (tests/synthetic_runs.py: 2 variants ×
2 scripts × 5 client counts = 20 points × 5 repeats, 60 s measured per run, every telemetry
table at one row per second), then times the `pglab report` command as a user runs it (a new
process, imports included), ``--rounds`` times. Prints the page's size and the chart count, and
``report_seconds: X`` (the median wall time) as the last line; the target is 10 or less.

    .venv/bin/python bench/report.py [--rounds 3] [--repeats 5] [--seconds 60]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from synthetic_runs import fill  # noqa: E402

from pglab.store import open_store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=60)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="pglab-bench-report-") as tmp:
        db = Path(tmp) / "results.sqlite"
        with open_store(str(db)) as store:
            ids = fill(store, "bench-report", repeats=args.repeats, seconds=args.seconds)
        print(f"store: {len(ids)} runs, {db.stat().st_size / 2**20:.1f} MiB")
        out = Path(tmp) / "report.html"
        cmd = [sys.executable, "-m", "pglab", "report", "bench-report", "--store", str(db),
               "--lab-dir", tmp, "-o", str(out)]  # fmt: skip
        times = []
        for n in range(1, args.rounds + 1):
            t = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t)
            print(f"round {n}: {times[-1]:.2f} s")
        charts = list(out.with_name(out.stem + "-charts").glob("*.png"))
        print(f"page: {out.stat().st_size / 2**20:.1f} MiB, {len(charts)} charts")
    print(f"report_seconds: {statistics.median(times):.2f}")


if __name__ == "__main__":
    main()
