"""A pytest plugin (loaded by ``tests/conftest.py``): where the suite's minutes go, by test file,
and whether the machine's CPUs were busy meanwhile. At the end of a run of 5 files or more it
prints the 25 slowest files (setup, call and teardown together) with, for each, how busy all of
the machine's CPUs were while its tests ran (``/proc/stat``: 100% is every core busy), the same
over all the tests, and over the whole session from its start (collection included: the
session's wall time, which is what CI's budget counts).

On CI's machine, which runs nothing else, that share says what running test files side by side
(pytest-xdist) could gain: a file whose tests kept the CPUs 30% busy waited (pgbench ``-T``,
sleeps, heartbeats, a server starting) for most of its time, and another file could have used
the CPUs meanwhile; a suite near 100% would gain nothing. On a shared machine the share counts
the other sessions' work too."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# per file: seconds of its tests' reports, and the machine's busy and total CPU ticks meanwhile
_SECONDS: dict[str, float] = {}
_BUSY: dict[str, list[int]] = {}
_CORES = os.cpu_count() or 1
# the machine's ticks and the time when the session started (collection included)
_START: list[tuple[tuple[int, int] | None, float]] = []


def cpu_ticks(stat: Path = Path("/proc/stat")) -> tuple[int, int] | None:
    """The machine's CPU time so far, in clock ticks summed over its cores: (busy, total), busy
    being all but idle and iowait; None where there is no /proc/stat."""
    try:
        fields = stat.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    # guest time is counted in user time already
    total = sum(ticks[:8])
    return total - idle, total


def pytest_sessionstart(session: pytest.Session) -> None:
    _START[:] = [(cpu_ticks(), time.monotonic())]


def _file(nodeid: str) -> str:
    return nodeid.split("::")[0]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    before = cpu_ticks()
    yield
    after = cpu_ticks()
    if before is None or after is None:
        return
    acc = _BUSY.setdefault(_file(item.nodeid), [0, 0])
    acc[0] += after[0] - before[0]
    acc[1] += after[1] - before[1]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = _file(report.nodeid)
    _SECONDS[path] = _SECONDS.get(path, 0.0) + report.duration


def busy_pct(busy: int, total: int) -> str:
    """``busy`` of ``total`` ticks as a percentage of every core, or ``-`` without ticks."""
    return f"{100 * busy / total:3.0f}%" if total > 0 else "   -"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Where CI's minutes go, by test file: with the 30 slowest tests pytest prints, what to
    look at when the suite nears its time budget."""
    slowest = sorted(_SECONDS.items(), key=lambda kv: -kv[1])[:25]
    if len(_SECONDS) < 5 or not slowest:
        return
    terminalreporter.section("slowest 25 test files")
    terminalreporter.write_line(f"{'seconds':>9} {'share':>6} {'CPUs busy':>9}  file")
    total = sum(_SECONDS.values())
    for path, seconds in slowest:
        busy = busy_pct(*_BUSY.get(path, [0, 0]))
        terminalreporter.write_line(
            f"{seconds:8.1f}s {100 * seconds / total:5.1f}% {busy:>9}  {path}"
        )
    ticks = [sum(v[i] for v in _BUSY.values()) for i in (0, 1)]
    # under pytest-xdist the ticks are counted in the workers: the controller has none
    said = f"{busy_pct(*ticks).strip()} busy while their tests ran"
    if not ticks[1]:
        said = "busy: not counted per file (pytest-xdist's workers ran the tests)"
    terminalreporter.write_line(
        f"{total:8.1f}s in {len(_SECONDS)} files; the machine's {_CORES} CPU(s) were {said}"
    )
    if _START and _START[0][0] is not None and (now := cpu_ticks()) is not None:
        (busy_then, total_then), started = _START[0]
        wall = time.monotonic() - started
        terminalreporter.write_line(
            f"{wall:8.1f}s the session (collection included): the CPUs "
            f"{busy_pct(now[0] - busy_then, now[1] - total_then).strip()} busy"
        )
