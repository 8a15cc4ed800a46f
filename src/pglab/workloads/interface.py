"""What a kind of workload is to the rest of pglab: a ``Workload`` (its runner, its run
metrics, the dataset it runs on, its figures), and what its runner is given and gives back
(``PhaseContext``, ``PhaseRunner``).

The executor runs each iteration of a phase the same way, whatever the phase is:

    runner = runner_for(phase, iteration, context)   # run/phases: the registry's runner
    with ExitStack() as stack:
        runner.prepare(stack)           # before the watching: an operation's dirtying
        watch = stack.enter_context(PhaseWatch(...))
        result = runner.run(watch)      # the phase's result, with the runner's own tables
    result = runner.finish(result)      # after the watching: a kit's consistency check

These types live here, at the stage of the workloads themselves (before ``store/``, so that
``analysis/`` may read a kind's figures), rather than in ``run/``: a kind's runner implements
them without importing the executor's package. The generator hosts are the executor's
(``run/remote.Hosts``); a runner sees them through ``GeneratorHosts``.
"""

from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pglab.campaign.spec import DatasetSpec, PhaseSpec, RunSpec, ServerSpec
from pglab.metric_units import MetricKey
from pglab.records import PhaseResult, TableJson

if TYPE_CHECKING:  # what a runner is given: imported when a phase runs, not by the registry
    from pglab.fingerprints import Fingerprint
    from pglab.jsonish import JsonObject
    from pglab.pgbench.invoke import ProgressCallback
    from pglab.postgres.dataset import DatasetKind
    from pglab.postgres.interface import Server
    from pglab.postgres.sources import Binaries
    from pglab.telemetry.watch import PhaseWatch
    from pglab.workloads.maintenance.figures import Prior

if TYPE_CHECKING:  # asyncssh is imported only where a host is reached
    from pglab.hosts.ssh import Remote


class GeneratorHosts(Protocol):
    """The campaign's generator hosts, as a runner uses them (``run/remote.Hosts``)."""

    def run_phase(
        self,
        phase: PhaseSpec,
        iteration: int,
        conn_args: list[str],
        env: Mapping[str, str],
        workdir: Path,
        on_progress: ProgressCallback | None = None,
        limits: Mapping[str, int] | None = None,
    ) -> tuple[PhaseResult, TableJson]: ...

    def ssh(self, name: str) -> Remote:
        """The host ``name``, connected (a replay's pgreplay runs there)."""
        ...


@dataclass
class PhaseContext:
    """What every runner of one run's phases may use."""

    server: Server
    binaries: Binaries
    workdir: Path  # the run's own directory (logs, dumps)
    hosts: GeneratorHosts  # the campaign's generator hosts
    on_progress: ProgressCallback  # each second's TPS as it comes
    on_operation: Callable[[str], None]  # an operation's progress in words, once a second
    prior: Callable[[str, int], Prior | None]  # an operation's last stored progress (its ETA)
    client_cpus: frozenset[int] | None = None  # [os]: pgbench/sysbench here confined to these
    client_limits: Mapping[str, int] | None = None  # [os] limits: theirs, soft and hard


class PhaseRunner(Protocol):
    def prepare(self, stack: contextlib.ExitStack) -> None:
        """What must be made before the phase is watched (entered on ``stack``, undone when
        the phase ends)."""
        ...

    def run(self, watch: PhaseWatch) -> PhaseResult:
        """The phase itself, while ``watch`` samples the server; its result."""
        ...

    def finish(self, result: PhaseResult) -> PhaseResult:
        """What is done after the watching has stopped (so not in the phase's telemetry):
        the result with what that adds."""
        ...


class NothingAfter:
    """A runner with nothing to do once the phase's watching has stopped."""

    def finish(self, result: PhaseResult) -> PhaseResult:
        return result


# a kind's runner for one iteration of a phase
RunnerFactory = Callable[[PhaseSpec, int, PhaseContext], PhaseRunner]


@dataclass(frozen=True, slots=True)
class Lazy:
    """A kind's runner named by its module and name, imported when a phase first asks for it:
    a command that only reads the store imports the registry (its figures, its plans) but no
    runner, nor the instruments the runners drive."""

    module: str
    name: str

    def resolve(self) -> RunnerFactory:
        found: RunnerFactory = getattr(importlib.import_module(self.module), self.name)
        return found

    def __call__(self, phase: PhaseSpec, iteration: int, context: PhaseContext) -> PhaseRunner:
        return self.resolve()(phase, iteration, context)


# what a point of a kind makes of its dataset and phases (``Workload.point``)
PointMaker = Callable[
    [DatasetSpec, tuple[PhaseSpec, ...], ServerSpec], tuple[DatasetSpec, tuple[PhaseSpec, ...]]
]

# a kind's figures of a run, from its phases' results, each under its key (the run's or a
# phase's), in the order they are stored in (called on every run: {} when the run has none of
# its phases)
MetricsFunction = Callable[[RunSpec, list[PhaseResult]], dict[MetricKey, float]]


@dataclass(frozen=True, slots=True)
class NamedItems:
    """Items of a figure that its runs name themselves, as many as the workload has (a
    replay's statement classes): each run holds each item's value in a metric of its own
    (``metric``, its key in the braces), the first two columns of a phase table (``table``)
    hold each key and its words, ``total`` is the run metric that is the items' total, in the
    same direction (lower is better: times)."""

    noun: str  # "statement class"
    metric: str  # "replay.class.{}.ms"
    table: str  # the phase table with each item's key and words
    total: str  # the run metric of their total ("replay.exec_ms")
    unit: str  # of each item's value ("ms")
    compare_help: str = ""  # what `pglab compare --help` says of them: a paragraph, or ""

    def metric_of(self, key: str) -> str:
        return self.metric.format(key)

    @property
    def pattern(self) -> re.Pattern[str]:
        """What matches an item's metric, its key the one group."""
        before, _, after = self.metric.partition("{}")
        return re.compile(f"^{re.escape(before)}([0-9A-Za-z_]+){re.escape(after)}$")


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure a kind declares: what the comparison engine and the views judge its runs on.

    ``name`` is what the views call it ("tps", "NOPM", "QphH", "MB/s"); ``metric`` the run
    metric that holds it (``tps``: the run's ``tps`` column, transactions per second only;
    ``nopm``, ``mb_s``, ``power``: a metric of its own, the run's ``tps`` then pgbench's or
    empty); ``items`` the other metrics of the kind, beside it; ``named`` the items its runs
    name themselves, each compared as the figure is."""

    name: str
    metric: str
    unit: str
    direction: Literal["higher", "lower"] = "higher"  # which way is better
    items: tuple[str, ...] = ()
    named: NamedItems | None = None  # items the runs name (a replay's statement classes)
    # the phase table that tells a stored phase of this figure (its report's ``tps`` holds it),
    # where that is not a TPS: what the store's migration to version 6 named them by
    table: str | None = None
    # a plug-in's figure held in the run's ``tps`` (not a TPS): the metric a run has when its
    # ``tps`` is this figure (``workloads.figures_in_tps``)
    held_when: str | None = None


@dataclass(frozen=True)
class PlanReader:
    """How a kind's stored plans are read: the phase table that holds them (a row per query:
    its number and its plan as EXPLAIN's JSON) and, of one plan, its spills (kind -> amount in
    the plan's units) and its nodes' types."""

    table: str
    spills: Callable[[Any], Mapping[str, float]]
    node_types: Callable[[Any], Sequence[str]]
    parse: Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class QueryTables:
    """A kind whose runs time numbered queries, each among a run's metrics as ``qNN_s`` and
    compared as its rate: the phase tables that hold them (``single``: a row per query run on
    one session, ``(query, seconds, rows, timed_out[, seed])``; ``streams``: a row per stream
    and query, ``(stream, query, seconds, rows, timed_out, seed)``), the one with each query's
    plan (``plans``: ``(query, EXPLAIN's JSON)``) and how two plans of a query differ in words
    (``change``, None: alike), the name of the report's chart of each query's time per point
    (its PNG's), and how a campaign file chooses the kind (``pglab export --by query``'s help)."""

    single: str
    streams: str
    plans: str
    change: Callable[[JsonObject, JsonObject], str | None]
    chart: str
    chosen: str
    compare_help: str = ""  # what `pglab compare --help` says of them: a paragraph, or ""


@dataclass(frozen=True, slots=True)
class Objective:
    """A ``[tune] objective`` that is a kind's own figure: its name, the figure in words, and
    what the file's phases must run for it (``kinds``: one of them; the first named in the
    hint), told as ``needs`` (kit = "tpch")."""

    name: str  # "geomean"
    said: str  # "the TPC-H-like power run's figure (...)"
    kinds: tuple[str, ...]
    needs: str
    hint: str  # what to add to [workload]


@dataclass(frozen=True, slots=True)
class Workload:
    """A kind of workload, as the registry (``pglab.workloads.REGISTRY``) holds it."""

    kind: str
    runner: RunnerFactory
    # its run metrics (several kinds may share one function: it is called once per run)
    metrics: tuple[MetricsFunction, ...]
    # the dataset it runs on, its own (``DatasetSpec.kit``: its loader, size and checks), or
    # None: pgbench's tables
    dataset: DatasetKind | None
    # its figures, the headline first (a TPC-H-like run: QphH, or QthH with streams)
    figures: tuple[Figure, ...] = field(default=())
    # what its client adds to a run's fingerprint (sysbench: its version), once per run
    fingerprint: Callable[[Fingerprint], None] | None = None
    # the query plans its runs store, for the evidence of a comparison (TPC-H-like: each
    # query's spills and nodes by type); None: it stores none
    plans: PlanReader | None = None
    # what its load generator's program is called and the option that gives it threads (a
    # client-bound run's warning), None: it runs none of its own
    client_threads: tuple[str, str] | None = None
    # the load generator as a run's fingerprint tells it (sysbench: its version), None when the
    # run did not run it: what a run's environment says instead of pgbench's version
    generator_said: Callable[[Fingerprint], str | None] | None = None
    # the kind of load and the figure a stored phase (``RunSpec.to_dict()``'s) is judged on,
    # None when the phase is not of this kind (the noise of stored points like a plan's)
    likeness: Callable[[Mapping[str, Any]], tuple[str, str] | None] | None = None
    # a phase as the plan lists it, after its name (None: as pgbench's scripts are listed)
    said: Callable[[PhaseSpec], str] | None = None
    # its runs' numbered queries (TPC-H-like), None: it times none
    queries: QueryTables | None = None
    # the [tune] objectives that are its figures
    objectives: tuple[Objective, ...] = ()
    # a point of its phases: its own dataset and what its phases are told of it (a kit's
    # tables and scale, a replay's dump and window), None: pgbench's tables as they are
    point: PointMaker | None = None
    # its lines among ``pglab --help``'s examples (its own command's), or ""
    examples: str = ""

    @property
    def headline(self) -> Figure:
        return self.figures[0]
