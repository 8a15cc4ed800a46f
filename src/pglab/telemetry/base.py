"""What every sampler is, and the table it hands back.

A sampler watches one thing (the OS, a statistics view, wait events, ...) beside a measured
phase. The runner (``telemetry.runner``) calls, from one thread per sampler:

- ``start(t)`` once, just before pgbench starts: take the "before" snapshot, open connections;
- ``sample(t)`` every ``interval`` seconds while pgbench runs;
- ``finish(t)`` once, just after pgbench exits: take the "after" snapshot, close connections, and
  return the sampler's tables, ``{kind: Table}``.

``t`` is wall-clock time (``time.time()``), so rows line up with pgbench's per-second series.
A sampler that cannot work (a view this version lacks, a missing extension, no privilege) raises
``SamplerOff`` with the reason, from any of the three calls; the runner then stops calling it,
records the reason and the run goes on. Its series is then absent, never zeros.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from pglab.records import TableJson


class SamplerOff(Exception):
    """The sampler cannot work here; the message says why (shown to the user)."""


@dataclass(slots=True)
class Table:
    """Columnar rows, as stored: ``{"columns": [...], "rows": [[...], ...]}`` in JSON
    (``records.TableJson``: ``to_json``/``from_json``).

    Time series have ``t`` (epoch seconds, float) as their first column; each row is the change
    over the interval that ends at ``t`` (counters as deltas) or the value at ``t`` (gauges).
    """

    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def add(self, *values: Any) -> None:
        if len(values) != len(self.columns):
            raise ValueError(f"{len(values)} values for {len(self.columns)} columns")
        self.rows.append(list(values))

    def to_json(self) -> TableJson:
        return {"columns": list(self.columns), "rows": self.rows}

    @classmethod
    def from_json(cls, data: TableJson) -> Table:
        return cls(list(data["columns"]), list(map(list, data["rows"])))


class Sampler(Protocol):
    name: str  # short, unique within a run, e.g. "os", "pg_stats", "waits"
    interval: float  # seconds between sample() calls

    def start(self, t: float) -> None: ...

    def sample(self, t: float) -> None: ...

    def finish(self, t: float) -> dict[str, Table]: ...
