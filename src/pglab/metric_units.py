"""What a run's numbers are in: the key tables of its ``metrics`` and ``timings``.

Both are stored as JSON objects of name -> number (``store/numbers``: from a run's
``records.RunMetrics`` and ``records.Timings``, made by ``run/metrics.py``, the kinds' metrics
functions, the lease and the executor; read back as stored, ``RunRow.metrics``); a number does
not say its unit, these tables do, by name:

- a metric is the run's (``tps``, ``mb_s``, ``geomean_s``, ...) or a phase's
  (``phase.NAME.KEY``): its unit is its key's, in :data:`METRIC_UNITS`; ``[[derived]]``
  metrics are ratios (their names are the campaign's);
- the run's figure is its ``tps`` (transactions per second: pgbench, sysbench, the kits by
  pgbench), or, for the kinds whose figure is not one, the metric that holds it under its own
  name (a maintenance operation's ``mb_s``, a TPC-H-like ``power`` or ``throughput``, a
  replay's statements per active second), whose ``tps`` is then empty: the kinds declare them
  (``workloads.interface.Figure`` with a ``table``), ``workloads.figure_of`` and
  ``workloads.figure_value`` read them;
- timings are seconds (:data:`TIMING_FLAGS`: yes/no, stored as 1.0/0.0; in memory a
  ``records.Timings``, whose flags are booleans).

A metric's key is a :class:`MetricKey` (a phase's or the run's, and its name) wherever code
makes or reads one by its parts; its dotted text (``phase.NAME.KEY``) is made and cut apart
there only (``MetricKey.text``, ``MetricKey.parse``), as the store keeps it. A kind may keep
its metrics under its own name (a replay's ``replay.KEY``, a phase's ``phase.NAME.replay.KEY``):
it declares that namespace and its keys' units here (``declare_namespace``), so that this core
module knows no kind.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

PHASE = "phase."  # a phase's metric: "phase.NAME.KEY"
# the namespaces of a kind's metrics kept under its name ("NS.KEY"; a phase's
# "phase.NAME.NS.KEY"), as "NS.": declared by the kinds (``declare_namespace``) when their
# declarations are imported (``workloads/KIND/work``), which the campaign parser and the
# workloads' registry do in every command
NAMESPACES: list[str] = []


@dataclass(frozen=True, slots=True)
class MetricKey:
    """A metric's key: its ``name`` (``tps``, ``nopm``, ``replay.exec_ms``, a ``[[derived]]``
    ratio's) and the ``phase`` it is of (None: the run's, over its measured phases)."""

    name: str
    phase: str | None = None

    @property
    def text(self) -> str:
        """The key as stored: ``tps``, ``phase.main.tps``, ``phase.main.replay.lag_s``."""
        return self.name if self.phase is None else f"{PHASE}{self.phase}.{self.name}"

    @property
    def unit_key(self) -> str:
        """What its unit is found by in :data:`METRIC_UNITS` (a figure kept in a kind's
        namespace without it: ``replay.lag_s``'s ``lag_s``)."""
        space = next((ns for ns in NAMESPACES if self.name.startswith(ns)), "")
        return self.name.removeprefix(space)

    @classmethod
    def parse(cls, text: str) -> MetricKey:
        """A stored key's parts: ``phase.NAME.KEY`` a phase's (its name may hold dots; a
        figure in a kind's namespace is ``NS.KEY``: ``phase.r.replay.lag_s``), anything else
        the run's."""
        if not text.startswith(PHASE):
            return cls(text)
        rest = text.removeprefix(PHASE)
        for space in NAMESPACES:
            phase, dot_space, figure = rest.partition(f".{space}")
            if dot_space and phase and figure:
                return cls(space + figure, phase)
        phase, dot, name = rest.rpartition(".")
        return cls(name, phase) if dot and phase and name else cls(text)


def phase_metric(phase: str, name: str) -> str:
    """The stored key of phase ``phase``'s metric ``name``: ``phase.NAME.KEY``."""
    return MetricKey(name, phase).text


def by_phase(metrics: Mapping[str, float | None], name: str) -> dict[str, float]:
    """Each phase's metric ``name`` among a run's ``metrics``: phase name -> value."""
    out = {}
    for text, value in metrics.items():
        key = MetricKey.parse(text)
        if key.phase is not None and key.name == name and value is not None:
            out[key.phase] = value
    return out


# a metric's key (a run's name, or the part after ``phase.NAME.``) -> its unit
METRIC_UNITS: dict[str, str] = {
    "tps": "transactions/s",  # the run's figure where it is a TPS (FIGURES: the others)
    "tps_steady": "transactions/s",  # after the warm-up (MSER-5)
    "drift_pct": "%",  # the linear trend over a phase
    "latency_avg_ms": "ms",
    "failed": "transactions",
    "mb_s": "MB/s",  # a maintenance operation's
    "elapsed_s": "s",
    "bytes": "bytes",
    "workers_launched": "workers",
    "wal_bytes": "bytes",
    "tuples_s": "tuples/s",
    "io_read_mb_s": "MB/s",
    "leader_cpu_pct": "% of a core",
    "workers_cpu_pct": "% of a core",
    "tpm": "transactions/min",  # a workload kit's
    "nopm": "transactions/min",
    "nopm_pgbench": "transactions/min",
    "tpse": "transactions/s",  # the TPC-E-like kit's Trade-Results per second
    "tpse_pgbench": "transactions/s",
    "results_idle_pct": "%",
    "rollback_pct": "%",
    "delivery_skipped_pct": "%",
    "inconsistent": "conditions",
    "nopm_bound": "transactions/min",  # terminals that think: the most they can commit
    "rt_over_limit": "transaction types",  # their 90th percentiles over clause 5.2.5.3's limit
    "qps": "queries/s",  # sysbench's
    "errors_s": "errors/s",
    "reconnects_s": "reconnects/s",
    "geomean_s": "s",  # a TPC-H-like run's
    "power": "QphH",
    "throughput": "QthH",
    "timeouts": "queries",
    # and the units of the metrics in the kinds' namespaces, as they declare them
    # (``declare_namespace``: a captured workload's replay)
}
_QUERY = re.compile(r"q\d\d_s")  # a TPC-H-like query's seconds
_RESPONSE = re.compile(r"rt90_[a-z_]+_ms")  # a paced TPC-C-like type's 90th percentile, ms
# timings that are yes (1.0) or no (0.0); every other timing is in seconds
TIMING_FLAGS = ("dataset_made_now", "reset_ahead", "reloaded", "restarted")


def declare_namespace(space: str, units: Mapping[str, str]) -> str:
    """A kind's metrics kept under its name ``space`` (``NS.KEY``; a phase's
    ``phase.NAME.NS.KEY``), and the units of their keys (``KEY``): declared by the kind
    (``workloads/KIND/work``, when imported). The namespace's prefix, ``NS.``."""
    prefix = f"{space}."
    if prefix not in NAMESPACES:
        NAMESPACES.append(prefix)
    METRIC_UNITS.update(units)
    return prefix


def metric_unit(name: str) -> str | None:
    """The unit of a run's metric ``name`` (``tps``, ``phase.main.latency_avg_ms``); None for
    a name this table does not know (a ``[[derived]]`` metric: a ratio)."""
    key = MetricKey.parse(name).unit_key
    if _RESPONSE.fullmatch(key):
        return "ms"
    return "s" if _QUERY.fullmatch(key) else METRIC_UNITS.get(key)


def timing_unit(name: str) -> str:
    """A timing's unit: seconds, or "yes/no" for a flag."""
    return "yes/no" if name in TIMING_FLAGS else "s"
