"""What ``pgbench -i`` says as it initializes a dataset, read line by line: its progress through
the generated rows ("600000 of 6000000 tuples (10%) of pgbench_accounts done (elapsed 0.31 s,
remaining 2.83 s)"; 15 and 16 leave out the table), the step it starts ("vacuuming...") and,
at the end, each step's time ("done in 4.79 s (drop tables 0.00 s, create tables 0.02 s,
client-side generate 3.27 s, vacuum 0.15 s, primary keys 1.34 s).")."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PROGRESS = re.compile(
    r"^(\d+) of (\d+) tuples \((\d+)%\)(?: of (\w+))? done \(elapsed ([0-9.]+) s, "
    r"remaining ([0-9.]+) s\)"
)
_DONE = re.compile(r"^done in ([0-9.]+) s \((.*)\)\.?\s*$")
_PART = re.compile(r"^(.+) ([0-9.]+) s$")  # "client-side generate 3.27 s"
_STEP = re.compile(r"^([a-z][a-z ()-]+)\.\.\.$")  # "creating primary keys..."


@dataclass(frozen=True, slots=True)
class InitProgress:
    done: int
    total: int
    pct: int
    table: str  # pgbench_accounts where pgbench does not say (15, 16: the only one it counts)
    elapsed_s: float
    remaining_s: float


def progress(line: str) -> InitProgress | None:
    found = _PROGRESS.match(line.strip())
    if not found:
        return None
    done, total, pct, table, elapsed, remaining = found.groups()
    return InitProgress(
        int(done),
        int(total),
        int(pct),
        table or "pgbench_accounts",
        float(elapsed),
        float(remaining),
    )


def step(line: str) -> str | None:
    """The step a line starts ("vacuuming", "generating data (client-side)"), else None."""
    found = _STEP.match(line.strip())
    return found.group(1) if found else None


def step_times(text: str) -> dict[str, float]:
    """Each step's seconds from the final "done in" line ({} without one)."""
    for line in reversed(text.splitlines()):
        found = _DONE.match(line.strip())
        if found:
            parts = (_PART.match(part.strip()) for part in found.group(2).split(","))
            return {m.group(1): float(m.group(2)) for m in parts if m}
    return {}


def said(p: InitProgress) -> str:
    """A progress line in words: "pgbench_accounts 40% (2,400,000 of 6,000,000), ETA 0:05"."""
    left = round(p.remaining_s)
    return (
        f"{p.table} {p.pct}% ({p.done:,} of {p.total:,} tuples), ETA {left // 60}:{left % 60:02d}"
    )
