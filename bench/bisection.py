"""How many steps (each one new build and one campaign) ``pglab bisect`` takes over N commits,
against log2(N): the search of ``bisect/search.py`` replayed for every possible first bad commit
of N, with a share of commits that do not build (skipped, as a bisection skips them).

Prints per N: the mean and worst number of steps, log2(N) rounded up, the builds (steps + the
two ends) and how often skipped commits left more than one suspect. The last line is
``bisect_steps_over_log2: X`` (the worst steps over ceil(log2 N), all N; 1.0 is the ideal).

    .venv/bin/python bench/bisection.py [--skip 0.1] [--max-n 1024]
"""

from __future__ import annotations

import argparse
import math
import random

from pglab.bisect.search import Search


def steps_for(n: int, first_bad: int, broken: set[int]) -> tuple[int, int]:
    """(steps measured, suspects left) for commits 0..n-1 (the last is the bad end)."""
    s, steps = Search([f"c{i}" for i in range(n)]), 0
    while (i := s.next()) is not None:
        steps += 1
        if i in broken:
            s.skipped.add(i)
            continue
        s.record(i, bad=i >= first_bad)
    return steps, len(s.suspects())


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--skip", type=float, default=0.1, help="share of commits that do not build")
    ap.add_argument("--max-n", type=int, default=1024)
    a = ap.parse_args()
    rng = random.Random(1)
    worst_ratio = 0.0
    n = 8
    print(f"{'N':>6} {'log2':>5} {'steps mean':>10} {'worst':>6} {'builds':>7} {'unsure':>7}")
    while n <= a.max_n:
        ideal = math.ceil(math.log2(n))
        counts, unsure = [], 0
        for first_bad in range(n):
            broken = {i for i in range(n - 1) if i != first_bad and rng.random() < a.skip}
            steps, suspects = steps_for(n, first_bad, broken)
            counts.append(steps)
            unsure += suspects > 1
        worst = max(counts)
        clean = max(steps_for(n, b, set())[0] for b in range(n))
        worst_ratio = max(worst_ratio, clean / ideal)
        print(
            f"{n:>6} {ideal:>5} {sum(counts) / n:>10.2f} {worst:>6} {worst + 2:>7} "
            f"{unsure / n:>7.3f}"
        )
        n *= 2
    print(f"bisect_steps_over_log2: {worst_ratio:.3f} (no skipped commits)")


if __name__ == "__main__":
    main()
