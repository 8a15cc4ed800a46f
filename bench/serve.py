"""How long does each page of `pglab serve` take on a store of 10,000 runs?

Fills a fresh SQLite store with ``--runs`` synthetic runs (tests/helpers/synthetic_runs.py, the
report bench's runs with every telemetry table at one row per second, ``--seconds`` each) as
campaigns of 100 runs (2 variants × 2 scripts × 5 client counts × 5 repeats), starts `pglab serve`
on it (uvicorn, as a user starts it) and asks for every page ``--rounds`` times, the pages in turn
within each round, timing each answer on loopback (the server's time and a local socket's). A
campaign's page is timed twice: cold (the first visit of a campaign, a different campaign each
round: its outline read from the store, no run's per-second series) and warm (kept until its
runs change); then what the page fetches after it shows: a point's body when it is opened
(that point's runs read, before the whole report is), and the parts of the whole report (the
summary's latency and wait cells, the warnings: every run read, no goal: the page is shown
meanwhile). Prints each page's median seconds with a 95% bootstrap CI of the median over the
rounds, its 95th percentile over the rounds (nearest rank) and its ratio to the goal: every
page's p95 ≤ 0.5 s (lists, a campaign's page and what it fetches), a run with all its series
≤ 1 s; the goal is judged on the p95.

    .venv/bin/python bench/serve.py                  # 10,000 runs, 10 rounds (the real figures)
    .venv/bin/python bench/serve.py --quick          # 200 runs, 2 rounds: proves it runs
"""

from __future__ import annotations

import argparse
import math
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _common import bootstrap_median_ci  # noqa: E402
from helpers.synthetic_runs import fill  # noqa: E402

from pglab.store import open_store  # noqa: E402

PER_CAMPAIGN = 100  # 2 variants × 2 scripts × 5 clients × 5 repeats
GOALS: dict[str, float | None] = {
    "campaigns": 0.5,
    "campaigns search": 0.5,
    "campaign cold": 0.5,
    "campaign warm": 0.5,
    "campaign point": 0.5,
    "campaign chart": 0.5,
    "campaign parts": None,
    "run": 1.0,
    "compare points": 0.5,
    "compare picker": 0.5,
    "live": 0.5,
    "fleet": 0.5,
}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--seconds", type=int, default=60, help="seconds of series per run")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="200 runs of 10 s, 2 rounds")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.seconds, args.rounds = 200, 10, 2
    campaigns = max(args.runs // PER_CAMPAIGN, args.rounds)
    with tempfile.TemporaryDirectory(prefix="pglab-bench-serve-") as tmp:
        db = Path(tmp) / "results.sqlite"
        t = time.perf_counter()
        with open_store(db) as store:
            for n in range(campaigns):
                fill(store, f"bench-serve-{n:03d}", seconds=args.seconds, seed=n)
            runs = len(store.list_runs())
        print(
            f"store: {runs} runs in {campaigns} campaigns, {db.stat().st_size / 2**20:.0f} MiB "
            f"(filled in {time.perf_counter() - t:.0f} s)"
        )
        took = measure(db, Path(tmp), args.rounds, campaigns)
    for page, seconds in took.items():
        print(summary(page, seconds))


def measure(db: Path, home: Path, rounds: int, campaigns: int) -> dict[str, list[float]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}/"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pglab",
            "serve",
            "--store",
            str(db),
            "--lab-dir",
            str(home),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_up(base, server)
        first = "bench-serve-000:base script=tpcb-like clients=4"
        other = "bench-serve-000:tuned script=tpcb-like clients=4"
        took: dict[str, list[float]] = {page: [] for page in GOALS}
        for r in range(rounds):
            name = quote(f"bench-serve-{r % campaigns:03d}", safe="")
            pages = {
                "campaigns": "campaigns",
                "campaigns search": "campaigns?q=serve-00&since=2020-01-01",
                "campaign cold": f"campaigns/{name}",
                "campaign warm": f"campaigns/{name}",
                "campaign point": f"points/3/{name}",
                "campaign chart": f"charts/0/{name}",
                "campaign parts": f"parts/{name}",
                "run": f"runs/{1 + r * 7}",
                "compare points": "compare?" + urlencode({"a": first, "b": other}),
                "compare picker": "compare",
                "live": "live",
                "fleet": "fleet",
            }
            for page, path in pages.items():
                took[page].append(timed(base + path))
            print(f"round {r + 1}: " + ", ".join(f"{p} {s[-1]:.3f}" for p, s in took.items()))
        return took
    finally:
        server.terminate()
        server.wait(timeout=30)


def wait_up(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert server.poll() is None, "pglab serve ended"
        try:
            urllib.request.urlopen(base + "live.json", timeout=5).read()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("pglab serve never answered")


def timed(url: str) -> float:
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as answer:
        answer.read()
        assert answer.status == 200, url
    return time.perf_counter() - t


def p95(seconds: list[float]) -> float:
    """The 95th percentile of the rounds (nearest rank: the slowest of up to 19 rounds)."""
    ranked = sorted(seconds)
    return ranked[max(0, math.ceil(0.95 * len(ranked)) - 1)]


def summary(page: str, seconds: list[float]) -> str:
    """``serve_<page>_seconds: median (95% bootstrap CI of the median)``, the 95th percentile
    of the rounds, and the median's ratio to the page's goal with the same interval; the goal
    is said met or missed by the 95th percentile."""
    med = statistics.median(seconds)
    low, high = bootstrap_median_ci(seconds)
    goal = GOALS[page]
    key = "serve_" + page.replace(" ", "_") + "_seconds"
    top = p95(seconds)
    if goal is None:
        return (
            f"{key}: {med:.3f} (95% CI {low:.3f}–{high:.3f}, {len(seconds)} rounds), "
            f"p95 {top:.3f}; no goal"
        )
    verdict = "met" if top <= goal else "MISSED"
    return (
        f"{key}: {med:.3f} (95% CI {low:.3f}–{high:.3f}, {len(seconds)} rounds), p95 {top:.3f}; "
        f"ratio to the {goal} s goal {med / goal:.2f} (95% CI {low / goal:.2f}–{high / goal:.2f}); "
        f"goal by p95 {verdict}"
    )


if __name__ == "__main__":
    main()
