"""How long until a new user's first result? ``pglab quick`` timed, part by part.

Runs ``pglab quick`` (the README's first command after the install) in a fresh lab home per
round, reads its output line by line as it comes and times its parts from the lines it
prints: the start (the command's imports, the plan and the embedded PostgreSQL found or
unpacked), the dataset (``initializing dataset`` to ``dataset ready``), the runs (to the last
``✓``; of which the measured seconds are ``--duration`` × runs), and the summary and the report
(to the ``report:`` line and the command's exit). With ``--rounds N`` (N ≥ 2) each figure gets
a 95% interval of its mean over the rounds. The last line is ``quick_total_s: X`` (goal: ≤ 120
on a quiet machine of 2 cores, issue 57 item 4).

    .venv/bin/python bench/quick.py [--rounds 3] [--duration 7] [--repeats 2]

The pip install is not timed here: it depends on the network and pip's cache, not on pglab.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scipy import stats

PARTS = ("start", "dataset", "runs", "report", "total")


def one_round(duration: int, repeats: int) -> dict[str, float]:
    """One ``pglab quick`` in a fresh lab home: the seconds of each part."""
    home = Path(tempfile.mkdtemp(prefix="pglab-quick-bench-"))
    home.chmod(0o755)  # the servers run as an unprivileged user, who must reach the lab
    pglab = Path(sys.executable).with_name("pglab")
    argv = [str(pglab), "quick", "--duration", str(duration), "--repeats", str(repeats)]
    env = {**os.environ, "PGLAB_HOME": str(home / "home"), "COLUMNS": "120"}
    marks: dict[str, float] = {}
    said: list[str] = []
    t0 = time.monotonic()
    try:
        with subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                now = time.monotonic() - t0
                text = line.strip()
                said.append(text)
                if text.startswith("initializing dataset"):
                    marks.setdefault("dataset_start", now)
                elif text.startswith("dataset ready"):
                    marks["dataset_end"] = now
                elif text.startswith("✓"):
                    marks.setdefault("first_run", now)
                    marks["last_run"] = now
            if proc.wait() != 0:
                tail = "\n".join(said[-15:])
                raise SystemExit(f"pglab quick failed (exit {proc.returncode}):\n{tail}")
        end = time.monotonic() - t0
    finally:
        shutil.rmtree(home, ignore_errors=True)
    start = marks.get("dataset_start", marks.get("first_run", end))
    dataset = marks.get("dataset_end", start) - start
    return {
        "start": start,
        "dataset": dataset,
        "runs": marks.get("last_run", end) - start - dataset,
        "report": end - marks.get("last_run", end),
        "total": end,
    }


def interval(values: list[float]) -> str:
    if len(values) < 2:
        return ""
    mean, sem = statistics.fmean(values), stats.sem(values)
    lo, hi = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=sem)
    return f" (95% CI {lo:.1f}–{hi:.1f})"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=7, help="quick's --duration (s)")
    ap.add_argument("--repeats", type=int, default=2, help="quick's --repeats")
    args = ap.parse_args()
    rounds = []
    for i in range(args.rounds):
        r = one_round(args.duration, args.repeats)
        rounds.append(r)
        print(f"round {i + 1}: " + ", ".join(f"{k} {r[k]:.1f} s" for k in PARTS), flush=True)
    measured = 6 * args.repeats * args.duration  # 6 points: 2 scripts × 3 client counts
    print(f"measured seconds per round (pgbench -T): {measured}")
    for part in PARTS:
        vals = [r[part] for r in rounds]
        print(f"{part}: mean {statistics.fmean(vals):.1f} s{interval(vals)}")
    runs = [r["runs"] for r in rounds]
    print(f"per run beyond -T: {(statistics.fmean(runs) - measured) / (6 * args.repeats):.2f} s")
    print(f"quick_total_s: {statistics.fmean(r['total'] for r in rounds):.1f}")


if __name__ == "__main__":
    main()
