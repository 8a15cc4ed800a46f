"""Debian's pgreplay (1.2) as the replay's engine: a workload file written back as the stderr
log pgreplay parses (``log_for``: each session's connection, statements with their parameters
and disconnection at their captured times, ``logfile.PREFIX``), and the statistics pgreplay
prints at the end of a replay read (``statistics``).

``engine`` runs it and reads the target; ``phase`` makes it a campaign's phase.
"""

from __future__ import annotations

import re
from datetime import timedelta

from pglab.workloads.replay.workload_file import Workload


def _stamp(workload: Workload, t: float) -> str:
    when = workload.start + timedelta(seconds=t)
    return when.strftime("%Y-%m-%d %H:%M:%S.") + f"{when.microsecond // 1000:03d} UTC"


def log_for(workload: Workload) -> str:
    """The stderr log pgreplay replays: sessions that the window saw begin, each closed at
    its end (or the window's, when it was still connected)."""
    events: list[tuple[float, int, str]] = []
    for n, s in enumerate(workload.sessions):
        pre = f"{s.user}|{s.database}|{s.id}|"
        events.append(
            (s.start, n, f"{pre}LOG:  connection authorized: user={s.user} database={s.database}")
        )
        for e in s.entries:
            lines = [f"{pre}LOG:  {e.message}".replace("\n", "\n\t")]
            if e.detail is not None:
                lines.append(f"{pre}DETAIL:  {e.detail}".replace("\n", "\n\t"))
            events.append((e.t, n, "\n".join(lines)))
        end = s.end if s.end is not None else workload.duration
        events.append(
            (
                end,
                n,
                f"{pre}LOG:  disconnection: session time: 0:00:00.000 "
                f"user={s.user} database={s.database} host=[local]",
            )
        )
    events.sort(key=lambda ev: ev[0])  # stable: a session's own order kept at equal times
    out = []
    for t, _n, text in events:
        stamp = _stamp(workload, t)
        first, *rest = text.split("\n")
        # a DETAIL line gets the prefix too (its own record)
        out.append(f"{stamp}|{first}")
        for line in rest:
            out.append(line if line.startswith("\t") else f"{stamp}|{line}")
    return "\n".join(out) + "\n"


_UNIT = {"hour": 3600.0, "minute": 60.0, "second": 1.0}
_FIGURES = {
    "max_lag_seconds": r"Maximum lag behind schedule: (\d+) seconds",
    "calls": r"Calls to the server: (\d+)",
    "connections": r"Total number of connections: (\d+)",
    "statements": r"SQL statements executed: (\d+)",
    "errors": r"\((\d+) or [\d.]+% of these completed with error\)",
    "statement_avg_seconds": r"Average SQL statement duration: ([\d.]+) seconds",
    "statement_max_seconds": r"Maximum SQL statement duration: ([\d.]+) seconds",
    "speed": r"Speed factor for replay: ([\d.]+)",
}


def statistics(output: str) -> dict[str, float]:
    """The figures of pgreplay's "Replay statistics" (those it printed)."""
    found = {}
    run_time = re.search(r"Total run time: ([^\n]*)", output)
    if run_time:  # "11.822 seconds", "1 minute 4.123 seconds", "2 hours 1 minute ..."
        parts = re.findall(r"([\d.]+) (hour|minute|second)", run_time.group(1))
        found["run_seconds"] = sum(float(n) * _UNIT[u] for n, u in parts)
    for key, pattern in _FIGURES.items():
        m = re.search(pattern, output)
        if m:
            found[key] = float(m.group(1))
    return found


def merged(found: list[dict[str, float]]) -> dict[str, float]:
    """The statistics of pgreplays that replayed disjoint sets of a workload's sessions at
    once (one per generator host), as one replay's: the run time and the lag behind schedule
    the slowest's, statements, calls, connections and errors summed; the average statement
    duration weighted by statements, the longest the longest."""
    out: dict[str, float] = {}
    for key in ("run_seconds", "max_lag_seconds", "statement_max_seconds", "speed"):
        if values := [f[key] for f in found if key in f]:
            out[key] = max(values)
    for key in ("statements", "calls", "connections", "errors"):
        if values := [f[key] for f in found if key in f]:
            out[key] = sum(values)
    weighted = [
        (f["statement_avg_seconds"], f.get("statements", 0.0))
        for f in found
        if "statement_avg_seconds" in f
    ]
    if weighted and (n := sum(w for _, w in weighted)) > 0:
        out["statement_avg_seconds"] = sum(v * w for v, w in weighted) / n
    return out
