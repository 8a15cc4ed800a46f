"""Hardware counters of a profiled phase, where the machine has them: ``perf stat`` counting the
cycles, instructions and cache misses of the server's processes (``-p``: the postmaster and its
children when the phase starts; backends it forks later inherit the counting) until the phase
ends, its text parsed (``parse``) into the phase table ``profile.counters``. The evidence of a
comparison reads instructions per cycle and cache misses per transaction from it
(``analysis.evidence_measures``).

Many virtual machines hide the CPU's counters from their guests (perf stat says ``<not
supported>``, as on the VM pglab is developed on): there nothing is counted (``probe`` says so
once, before the first phase), the run's fingerprint says why (``hardware_counters``) and the
evidence says "unavailable here". A count is never made up.

``perf stat -x,`` writes a line per event, ``VALUE,UNIT,EVENT,RUN_TIME,RUNNING_PCT,METRIC,
METRIC_UNIT`` (``425064193324,,instructions,64701157666,100.00,1.61,insn per cycle``); a value
perf could not count is ``<not supported>`` or ``<not counted>``; ``-o`` writes a ``# started
on`` line first; a hybrid CPU counts an event per kind of core (``cpu_core/cycles/``,
``cpu_atom/cycles/``: added up here); a metric perf derives on a line of its own (no event) is
left out, and so is a modifier (``cycles:u``: the event's name is ``cycles``).
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pglab import procs
from pglab.errors import CommandError
from pglab.profile import perf
from pglab.records import TableJson

EVENTS = ("cycles", "instructions", "cache-misses")
PROBED = ("cycles", "instructions")  # what a machine must count for any figure of these
TABLE = "profile.counters"
COLUMNS = ["event", "count", "running_pct"]
STOP_GRACE_S = 10.0
SUFFIXES = (".stat", ".stat-err", ".stat-ctl", ".stat-ack")  # its files beside perf record's
COUNTABLE = "cycles and instructions (perf stat)"  # the fingerprint's words where it counts
NONE = "none: perf stat cannot count cycles or instructions here (a virtual machine?)"


@dataclass(frozen=True)
class Count:
    """An event as perf stat counted it: ``value`` None where it could not (``why``: ``not
    supported``, ``not counted``); ``running_pct`` the share of the time it was counted (under
    100 when perf multiplexed more events than the CPU has counters: perf scales the value)."""

    event: str
    value: float | None
    running_pct: float | None
    why: str = ""


def parse(text: str, sep: str = ",") -> list[Count]:
    """The events of ``perf stat -x SEP``'s text, in its order, one per event."""
    out: dict[str, Count] = {}
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(sep)]
        if len(fields) < 3 or fields[0].startswith("#") or not fields[2]:
            continue  # a comment, a blank line, a metric of its own line
        event, raw = _event(fields[2]), fields[0]
        running = _float(fields[4]) if len(fields) > 4 else None
        if raw.startswith("<"):
            count = Count(event, None, running, raw.strip("<>"))
        elif (value := _float(raw)) is not None:
            count = Count(event, value, running)
        else:
            continue
        out[event] = _added(out[event], count) if event in out else count
    return list(out.values())


def _event(name: str) -> str:
    """``cpu_core/cycles/`` and ``cycles:u`` are ``cycles``; a raw event (``cpu/event=0x3c/``)
    keeps its name."""
    if name.count("/") >= 2:
        inner = name.split("/")[1]
        name = inner if inner and "=" not in inner else name
    return name.partition(":")[0] if "/" not in name else name


def _added(was: Count, more: Count) -> Count:
    """An event counted on two kinds of core: what each counted, added up."""
    if more.value is None:
        return was
    if was.value is None:
        return more
    return replace(was, value=was.value + more.value)


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class Probe:
    """Whether this machine counts cycles and instructions for perf, and that in words (a
    profiled run's fingerprint: ``hardware_counters``)."""

    countable: bool
    said: str


def probe_of(text: str) -> Probe:
    """What ``perf stat -x, -e cycles,instructions`` printed, judged."""
    counts = {c.event: c for c in parse(text)}
    if not all(e in counts for e in PROBED):
        return Probe(False, "unknown")
    if all(counts[e].value is not None for e in PROBED):
        return Probe(True, COUNTABLE)
    return Probe(False, NONE)


def unavailable(said: str) -> str:
    """The evidence's line for runs whose machine did not count (``said``: their fingerprint's
    ``hardware_counters``)."""
    why = said.partition(": ")[2] if said.startswith("none: ") else f"perf stat said {said!r}"
    if said == COUNTABLE:  # counted on that machine, but these runs have no counts
        why = "these runs were profiled before pglab counted them"
    return (
        "hardware counters (instructions per cycle, cache misses per transaction): "
        f"unavailable here: {why}"
    )


@functools.lru_cache(maxsize=1)
def probe() -> Probe:
    """Whether this machine's CPU counts cycles and instructions for perf (a virtual machine
    often does not): ``perf stat`` run once on ``true``."""
    try:
        done = procs.run(
            [perf.executable(), "stat", "-x,", "-e", ",".join(PROBED), "--", "true"],
            timeout=30,
            check=False,
            what="perf stat",
        )
    except CommandError as exc:
        return Probe(False, f"unknown ({exc.message})")
    return probe_of(done.stderr)


def hardware_counters() -> str:
    """``probe`` in words, for a profiled run's fingerprint."""
    return probe().said


def stat_argv(out: Path | str, pids: Sequence[int], exe: str | None = None) -> list[str]:
    """``perf stat``'s words: ``EVENTS`` of ``pids`` and the processes they fork from now on,
    into ``out`` (``-x,``), until SIGINT."""
    return [
        exe or perf.executable(),
        "stat",
        "-x,",
        "-e",
        ",".join(EVENTS),
        "-o",
        str(out),
        "-p",
        ",".join(str(p) for p in pids),
    ]


def start(out: Path, pids: Sequence[int]) -> subprocess.Popen[Any]:
    """``perf stat`` of ``pids`` into ``out``, counting from when this returns: it starts with
    its events off (``-D -1``) and is told to enable them over a FIFO, and says when it has,
    as ``perf.start`` does ``perf record``. Its errors go beside ``out`` (``.stat-err``); the
    caller stops it with ``stop``."""
    ctl, ack = out.with_suffix(".stat-ctl"), out.with_suffix(".stat-ack")
    for fifo in (ctl, ack):
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo, 0o600)
    argv = [*stat_argv(out, pids), "-D", "-1", f"--control=fifo:{ctl},{ack}"]
    with out.with_suffix(".stat-err").open("w") as err:
        proc = procs.spawn(argv, stderr=err, cwd=out.parent)
    try:
        perf.enable(proc, ctl, ack, what="perf stat")
    except BaseException:
        procs.terminate(proc, signal.SIGKILL)
        raise
    return proc


def stop(proc: subprocess.Popen[Any], out: Path) -> tuple[list[Count], str | None]:
    """Stop perf stat (SIGINT: it writes its counts) and read them: (what it counted, why it
    counted nothing or None)."""
    procs.terminate(proc, signal.SIGINT, STOP_GRACE_S)
    found = parse(_read(out))
    counted = [c for c in found if c.value is not None]
    if counted:
        return counted, None
    if found:
        said = ", ".join(f"{c.event} {c.why}" for c in found)
        return [], f"perf stat could not count them ({said})"
    said = procs.tail(_read(out.with_suffix(".stat-err")), 4)
    return [], f"perf stat counted nothing (exit {proc.returncode}): {said}".rstrip(": ")


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def table(counts: Sequence[Count]) -> TableJson:
    """The phase table of what was counted (events perf could not count left out)."""
    return {
        "columns": COLUMNS,
        "rows": [[c.event, c.value, c.running_pct] for c in counts if c.value is not None],
    }
