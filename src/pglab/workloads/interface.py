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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pglab.campaign.spec import PhaseSpec, RunSpec
from pglab.fingerprints import Fingerprint
from pglab.pgbench.invoke import ProgressCallback
from pglab.postgres.interface import Server
from pglab.postgres.sources import Binaries
from pglab.records import PhaseResult, TableJson
from pglab.telemetry.watch import PhaseWatch
from pglab.workloads.maintenance.figures import Prior


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
# a kind's figures of a run, from its phases' results (called on every run: {} when the run
# has none of its phases)
MetricsFunction = Callable[[RunSpec, list[PhaseResult]], dict[str, float]]


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure a kind declares: what the comparison engine and the views judge its runs on.

    ``name`` is what the views call it ("tps", "NOPM", "QphH", "MB/s"); ``metric`` the run
    metric that holds it (``tps``: the run's ``tps`` column, transactions per second only;
    ``nopm``, ``mb_s``, ``power``: a metric of its own, the run's ``tps`` then pgbench's or
    empty); ``items`` the other metrics of the kind, beside it."""

    name: str
    metric: str
    unit: str
    direction: Literal["higher", "lower"] = "higher"  # which way is better
    items: tuple[str, ...] = ()
    # the phase table that tells a stored phase of this figure (its report's ``tps`` holds it),
    # where that is not a TPS: what the store's migration to version 6 named them by
    table: str | None = None


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
class Workload:
    """A kind of workload, as the registry (``pglab.workloads.REGISTRY``) holds it."""

    kind: str
    runner: RunnerFactory
    # its run metrics (several kinds may share one function: it is called once per run)
    metrics: tuple[MetricsFunction, ...]
    # the dataset it runs on: ``DatasetSpec.kit`` (None: pgbench's tables)
    dataset: str | None
    # its figures, the headline first (a TPC-H-like run: QphH, or QthH with streams)
    figures: tuple[Figure, ...] = field(default=())
    # what its client adds to a run's fingerprint (sysbench: its version), once per run
    fingerprint: Callable[[Fingerprint], None] | None = None
    # the query plans its runs store, for the evidence of a comparison (TPC-H-like: each
    # query's spills and nodes by type); None: it stores none
    plans: PlanReader | None = None

    @property
    def headline(self) -> Figure:
        return self.figures[0]
