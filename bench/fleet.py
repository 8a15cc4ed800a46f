"""A fleet's speedup: the same 24-run campaign (2 variants x 4 client counts x 3 repeats,
rate-limited select-only so that two workers on this machine's 2 cores do not measure each
other) run by 1 worker and by 2, each round in a fresh database of one PostgreSQL results store
this script starts, the order alternating between rounds. Each worker has its own lab home
(its datasets made by its first job, as on a new lab host).

Prints per round the wall time from submission to the last job's end, then
``fleet_speedup: X (95% CI a–b)`` (the median over rounds of T(1 worker) / T(2 workers); the
target is 1.8 or more) and ``fleet_overhead_per_job_s: Y``: the time a one-worker round spends
outside its jobs (submission, picking a job, starting the child pglab), per job.

    .venv/bin/python bench/fleet.py [--rounds 3] [--duration 3]

``--spread``: a single-coordinate campaign (2 variants × 6 repeats, no matrix: one job without
spreading) with ``[fleet] spread = "rounds"``, so its 6 rounds are 6 jobs; prints
``fleet_spread_time_ratio: X (95% CI a–b)``, T(2 workers) / T(1 worker) (the issue's target:
0.6 or less) instead of the speedup.
"""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import bootstrap_median_ci, parser

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from helpers.pg_store import fresh_database, pg_store_server  # noqa: E402

from pglab.fleet import queue as fleet  # noqa: E402

CAMPAIGN = """
name = "fleet-bench"
repeats = 3
[dataset]
scale = 1
[workload]
script = "select-only"
duration = {duration}
rate = 100
[matrix]
clients = [1, 2, 3, 4]
[variants.a]
settings = {{ work_mem = "4MB" }}
[variants.b]
settings = {{ work_mem = "8MB" }}
"""


SPREAD_CAMPAIGN = """
name = "fleet-bench"
repeats = 6
[dataset]
scale = 1
[workload]
script = "select-only"
duration = {duration}
rate = 100
clients = 2
[fleet]
spread = "rounds"
[variants.a]
settings = {{ work_mem = "4MB" }}
[variants.b]
settings = {{ work_mem = "8MB" }}
"""


def job_seconds(url: str) -> float:
    """The time jobs ran (first "started" to last event, per job), summed."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT job_id, min(at) FILTER (WHERE type = 'started'), max(at) "
            "FROM procrastinate_events GROUP BY job_id"
        ).fetchall()
    return float(sum((end - start).total_seconds() for _, start, end in rows if start and end))


def one_round(server: str, workers: int, campaign: Path, root: Path) -> tuple[float, float, int]:
    """(wall seconds, seconds inside jobs, jobs) of the campaign on ``workers`` workers."""
    with fresh_database(server) as url:
        procs = []
        try:
            for i in range(workers):
                home = root / f"w{i}"
                home.mkdir(mode=0o755, parents=True, exist_ok=True)
                log = open(root / f"w{i}.log", "ab")  # noqa: SIM115 - the worker writes to it
                argv = [
                    sys.executable,
                    "-m",
                    "pglab",
                    "worker",
                    "--store",
                    url,
                    "--lab-dir",
                    str(home),
                    "--name",
                    f"w{i}",
                ]
                procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT))
                log.close()
            time.sleep(3)  # the workers are up and waiting
            t0 = time.monotonic()
            said = subprocess.run(
                [sys.executable, "-m", "pglab", "run", str(campaign), "--fleet", "--store", url],
                capture_output=True,
                text=True,
            )
            if said.returncode != 0:
                raise SystemExit(f"the submission failed:\n{said.stdout}{said.stderr}")
            while True:
                rows = fleet.jobs_of(url, "fleet-bench")
                if rows and all(r.status in ("succeeded", "failed") for r in rows):
                    break
                time.sleep(0.2)
            wall = time.monotonic() - t0
            assert all(r.status == "succeeded" for r in rows), rows
            return wall, job_seconds(url), len(rows)
        finally:
            for p in procs:
                p.send_signal(signal.SIGTERM)
            for p in procs:
                p.wait(60)


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=3)
    ap.add_argument("--spread", action="store_true", help='one coordinate, spread = "rounds"')
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="pglab-fleet-bench-", dir="/tmp"))
    root.chmod(0o755)
    campaign = root / "fleet-bench.toml"
    campaign.write_text(
        (SPREAD_CAMPAIGN if args.spread else CAMPAIGN).format(duration=args.duration)
    )
    ratios, overheads = [], []
    try:
        with pg_store_server() as server:
            for i in range(args.rounds):
                order = (1, 2) if i % 2 == 0 else (2, 1)
                walls = {}
                for n in order:
                    wall, inside, jobs = one_round(server, n, campaign, root / f"r{i}-{n}")
                    walls[n] = wall
                    if n == 1:
                        overheads.append((wall - inside) / jobs)
                    print(f"round {i + 1}: {n} worker(s): {wall:.1f} s ({jobs} jobs)", flush=True)
                ratios.append(walls[1] / walls[2])
                print(f"round {i + 1}: speedup {ratios[-1]:.3f}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.spread:
        ratios = [1 / r for r in ratios]
    low, high = bootstrap_median_ci(ratios) if len(ratios) > 1 else (ratios[0], ratios[0])
    name = "fleet_spread_time_ratio" if args.spread else "fleet_speedup"
    print(
        f"{name}: {statistics.median(ratios):.3f} (95% CI {low:.3f}–{high:.3f}, "
        f"{len(ratios)} rounds)"
    )
    print(f"fleet_overhead_per_job_s: {statistics.median(overheads):.2f}")


if __name__ == "__main__":
    os.umask(0o022)
    main()
