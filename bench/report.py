"""How long does `pglab report` take on a campaign of 100 (or 1,000) runs with full telemetry,
and how long does its page take to open?

Fills a fresh SQLite store with a synthetic campaign (tests/helpers/synthetic_runs.py: variants ×
2 scripts × 5 client counts, 5 repeats, 60 s measured per run, every telemetry table at one row
per second: 2 variants for ``--runs 100``, 20 for ``--runs 1000``), then times the `pglab report`
command as a user runs it (a new process, imports included), ``--rounds`` times. Then headless
Chromium (where installed) opens the page from disk and dumps its DOM, beside the same for an
empty page (the browser's own start), ``--rounds`` times each, alternating. Prints every round,
the page's size, ``page_open_seconds`` (median, and less the browser's start) and, as the last
line, ``report_seconds: X (95% CI a–b)``: the median wall time of the warm rounds with a
bootstrap interval of that median, the first (cold) round apart: the later ones read each
run's latency histogram from what the first kept in the lab (``report/cache.py``). Targets:
100 runs ≤ 3 s, 1,000 runs ≤ 6 s, a page ≤ 15 MiB that opens in ≤ 3 s.

The command runs with its bytecode cached, as an installed pglab does: a
``PYTHONDONTWRITEBYTECODE`` in the environment is left out of the command's (with it, every
round compiled pglab's 200 modules again: 1.5 s of a profiled round).

    .venv/bin/python bench/report.py [--runs 100] [--rounds 6] [--repeats 5] [--seconds 60]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _common import bootstrap_median_ci  # noqa: E402
from helpers.synthetic_runs import fill  # noqa: E402

from pglab.store import open_store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=6, help="rounds (the first is cold)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument(
        "--runs",
        type=int,
        default=100,
        help="runs in all: points of 2 scripts × 5 client counts × variants",
    )
    ap.add_argument("--keep", type=Path, help="copy the page here (to open it in a browser)")
    args = ap.parse_args()
    n_variants = max(1, args.runs // (args.repeats * 10))
    variants = ("base", "tuned", *(f"v{i}" for i in range(3, n_variants + 1)))[:n_variants]
    with tempfile.TemporaryDirectory(prefix="pglab-bench-report-") as tmp:
        db = Path(tmp) / "results.sqlite"
        with open_store(str(db)) as store:
            ids = fill(
                store, "bench-report", variants=variants, repeats=args.repeats, seconds=args.seconds
            )
        print(f"store: {len(ids)} runs, {db.stat().st_size / 2**20:.1f} MiB")
        out = Path(tmp) / "report.html"
        cmd = [
            sys.executable,
            "-m",
            "pglab",
            "report",
            "bench-report",
            "--store",
            str(db),
            "--lab-dir",
            tmp,
            "-o",
            str(out),
        ]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        if "PYTHONDONTWRITEBYTECODE" in os.environ:
            print(
                "PYTHONDONTWRITEBYTECODE left out of the command's environment (bytecode "
                "cached, as an installed pglab has it)"
            )
        times = []
        for n in range(1, args.rounds + 1):
            t = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
            times.append(time.perf_counter() - t)
            cold = " (cold: the lab has kept nothing of the runs yet)" if n == 1 else ""
            print(f"round {n}: {times[-1]:.2f} s{cold}")
        charts = list(out.with_name(out.stem + "-charts").glob("*.png"))
        print(f"page: {out.stat().st_size / 2**20:.1f} MiB, {len(charts)} charts as PNG")
        if args.keep:
            args.keep.write_bytes(out.read_bytes())
        browser_open(out, Path(tmp), args.rounds)
    warm = times[1:] or times
    low, high = bootstrap_median_ci(warm)
    spread = (
        f"95% CI {low:.2f}–{high:.2f}, {len(warm)} warm rounds "
        f"{min(warm):.2f}–{max(warm):.2f}; the first, cold, {times[0]:.2f}"
    )
    print(f"report_seconds: {statistics.median(warm):.2f} ({spread})")


def browser_open(page: Path, tmp: Path, rounds: int) -> None:
    """Headless Chromium opening ``page`` (load, scripts run, DOM dumped) against an empty page."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("page_open_seconds: not measured (no chromium: apt-get install chromium)")
        return
    empty = tmp / "empty.html"
    empty.write_text("<!DOCTYPE html><html><body></body></html>")
    took: dict[Path, list[float]] = {page: [], empty: []}
    for _ in range(rounds):
        for what in (page, empty):
            t = time.perf_counter()
            subprocess.run(
                [
                    chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    f"--user-data-dir={tmp / 'chromium'}",
                    "--dump-dom",
                    what.as_uri(),
                ],
                check=True,
                capture_output=True,
                timeout=120,
            )
            took[what].append(time.perf_counter() - t)
    page_s, empty_s = statistics.median(took[page]), statistics.median(took[empty])
    rounds_text = ", ".join(f"{x:.2f}" for x in took[page])
    low, high = bootstrap_median_ci(took[page])
    print(
        f"page_open_seconds: {page_s:.2f} (95% CI {low:.2f}–{high:.2f}, rounds {rounds_text}; "
        f"an empty page {empty_s:.2f}: {page_s - empty_s:.2f} for this page)"
    )


if __name__ == "__main__":
    main()
