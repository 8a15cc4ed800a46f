"""``perf script``'s text as folded stacks per process kind, and those stacks kept compressed.

A folded stack is one line ``outermost;...;innermost COUNT``: the format flamegraph.pl,
speedscope and inferno read. Samples are grouped by the kind of PostgreSQL process that took
them, told by its process title (``postgres: checkpointer``, ``postgres: bench postgres [local]
SELECT``, ...), which the watcher reads while the phase runs (``kind_of``); pgbench run here
is ``pgbench`` (the load generator's own CPU). perf samples every CPU: the samples of other
programs are left out. A process of the server that lived less than the watcher's poll (half a
second: every backend of ``connect = true``, pgbench -C; a parallel worker of a short query)
never had its title read; the recording's fork events (``perf script --show-task-events``) say
the server forked it, and its samples are kept as ``short-lived``.

A phase keeps them as the table ``profile``: a row per kind, its sample count and its stacks,
zlib-compressed and base64-encoded (``pack``/``unpack``), so that the store keeps them as any
phase table, without a migration.
"""

from __future__ import annotations

import base64
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pglab.records import TableJson

TABLE = "profile"
NOTES = "profile.notes"
COLUMNS = ["process", "samples", "stacks"]
NOTE_COLUMNS = ["sampler", "note"]
UNKNOWN = "[unknown]"
CLIENT = "pgbench"
SHORT_LIVED = "short-lived"  # forked by the server, gone before its title was read
_FORK = re.compile(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)")
# the auxiliary processes by the start of their title (after "postgres: " and a cluster name)
AUX = (
    ("checkpointer", "checkpointer"),
    ("walwriter", "walwriter"),
    ("background writer", "background writer"),
    ("autovacuum worker", "autovacuum"),
    ("autovacuum launcher", "autovacuum launcher"),
    ("parallel worker", "parallel worker"),
    ("io worker", "io worker"),
    ("walsummarizer", "walsummarizer"),
    ("walsender", "walsender"),
    ("walreceiver", "walreceiver"),
    ("archiver", "archiver"),
    ("startup", "startup"),
    ("logical replication", "logical replication"),
    ("stats collector", "stats collector"),
)
_FRAME = re.compile(r"^\s*[0-9a-f]+ (.*) \((.*)\)$")


def kind_of(title: str) -> str:
    """The kind of a PostgreSQL process from its title: an auxiliary process by name, any
    other child of the postmaster a ``backend``; the postmaster's own is ``postmaster``."""
    if not title.startswith("postgres:"):
        return "postmaster"
    rest = title.removeprefix("postgres:").strip()
    for part in (rest, rest.split(": ", 1)[-1]):  # with and without a cluster_name
        for prefix, kind in AUX:
            if part.startswith(prefix):
                return kind
    return "backend"


@dataclass
class Folded:
    """A recording's samples: folded stacks per process kind, and per binary how many of its
    frames had a symbol (``named``) and how many not (``unnamed``)."""

    stacks: dict[str, Counter[str]] = field(default_factory=dict)
    named: Counter[str] = field(default_factory=Counter)
    unnamed: Counter[str] = field(default_factory=Counter)
    others: int = 0  # samples of other processes, left out

    def samples(self, kind: str) -> int:
        return sum(self.stacks.get(kind, Counter()).values())

    def stripped(self, threshold: float = 0.5) -> list[str]:
        """Binaries most of whose frames had no symbol (stripped, no debug symbols)."""
        return sorted(
            dso
            for dso, n in self.unnamed.items()
            if dso != UNKNOWN and n > threshold * (n + self.named[dso])
        )


def fold(text: str, kinds: Mapping[int, str]) -> Folded:
    """Parse ``perf script -F comm,pid,ip,sym,dso --show-task-events`` output; ``kinds``: pid ->
    process kind, as the watcher read them (a ``postgres`` the server forked and the watcher
    never saw: ``SHORT_LIVED``)."""
    out = Folded()
    kind_of_pid = _with_short_lived(text, kinds)
    for block in text.split("\n\n"):
        lines = [ln for ln in block.splitlines() if ln.strip() and "PERF_RECORD_" not in ln]
        if not lines:
            continue
        head = lines[0].split()
        try:
            kind = kind_of_pid(" ".join(head[:-1]), int(head[-1]))
        except (ValueError, IndexError):
            continue
        if kind is None:
            out.others += 1
            continue
        frames: list[str] = []
        for line in lines[1:]:
            m = _FRAME.match(line)
            if m is None:
                continue
            sym, dso = _clean(m.group(1)), m.group(2)
            (out.unnamed if sym == UNKNOWN else out.named)[dso] += 1
            frames.append(sym)
        while len(frames) > 1 and frames[-1] == UNKNOWN:  # a broken unwind's tail
            frames.pop()
        if frames:
            stack = ";".join(reversed(frames))
            out.stacks.setdefault(kind, Counter())[stack] += 1
    return out


def _with_short_lived(text: str, kinds: Mapping[int, str]) -> Callable[[str, int], str | None]:
    """The kind of a sample's process by its comm and pid: the watcher's, else ``SHORT_LIVED``
    for a ``postgres`` whose parent (by the recording's fork events) is one of the server's."""
    server = {pid for pid, kind in kinds.items() if kind != CLIENT}
    parents = {int(c): int(p) for c, p in _FORK.findall(text) if c != p}  # c == p: a thread

    def kind_of_pid(comm: str, pid: int) -> str | None:
        if pid in kinds:
            return kinds[pid]
        return SHORT_LIVED if comm == "postgres" and parents.get(pid) in server else None

    return kind_of_pid


def _clean(sym: str) -> str:
    sym = sym.split("@@", 1)[0]  # __libc_start_main@@GLIBC_2.34
    return sym.replace(";", ":") or UNKNOWN  # a ';' would break the folded format


def text_of(stacks: Mapping[str, int]) -> str:
    """Folded stacks as lines ``stack count``, the most frequent first."""
    return "".join(f"{s} {n}\n" for s, n in sorted(stacks.items(), key=lambda kv: (-kv[1], kv[0])))


def parse_text(text: str) -> Counter[str]:
    """Folded lines back to stack -> count (what flamegraph.pl reads, and what we write)."""
    out: Counter[str] = Counter()
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if stack and count.isdigit():
            out[stack] += int(count)
    return out


def pack(stacks: Mapping[str, int]) -> str:
    return base64.b64encode(zlib.compress(text_of(stacks).encode(), 9)).decode("ascii")


def unpack(data: str) -> Counter[str]:
    return parse_text(zlib.decompress(base64.b64decode(data)).decode())


def table(folded: Folded) -> TableJson:
    """The phase table ``profile``: a row per process kind, the most sampled first."""
    rows = [
        [kind, sum(c.values()), pack(c)]
        for kind, c in sorted(folded.stacks.items(), key=lambda kv: -sum(kv[1].values()))
    ]
    return {"columns": COLUMNS, "rows": rows}


def stacks_of(tables: Mapping[str, Mapping[str, Any]]) -> dict[str, Counter[str]]:
    """A stored phase's stacks by process kind (empty when it was not profiled)."""
    data = tables.get(TABLE)
    if not data:
        return {}
    cols = data["columns"]
    k, s = cols.index("process"), cols.index("stacks")
    return {row[k]: unpack(row[s]) for row in data["rows"]}


def merged(phases: Iterable[Mapping[str, Counter[str]]]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for stacks in phases:
        for kind, c in stacks.items():
            out.setdefault(kind, Counter()).update(c)
    return out
