"""The phase runners: one interface for every kind of measured work a phase can be.

The executor runs each iteration of a phase the same way, whatever the phase is:

    runner = runner_for(phase, iteration, context)
    with ExitStack() as stack:
        runner.prepare(stack)           # before the watching: an operation's dirtying
        watch = stack.enter_context(PhaseWatch(...))
        result = runner.run(watch)      # the phase's result, with the runner's own tables
    result = runner.finish(result)      # after the watching: a kit's consistency check

Six runners today: pgbench here (``LocalPgbench``), pgbench on the generator hosts at once
(``GeneratorPgbench``, its per-host table with the result), a maintenance operation
(``MaintenanceOperation``: VACUUM, CREATE INDEX, pg_dump... in MB/s), and a workload kit's
scripts by either pgbench, its consistency checked after (``KitPgbench``), sysbench's
OLTP tests (``Sysbench``), the TPC-H-like kit's power run (``TpchPower``), and a captured
workload replayed by pgreplay (``Replay``). A new load
generator or workload kit is a class with ``prepare``, ``run`` and ``finish``, and one line in
``runner_for``; the executor does not change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from pglab.campaign.kits import KITS
from pglab.campaign.spec import PhaseSpec
from pglab.maintenance import clients, operations
from pglab.maintenance.figures import Prior
from pglab.pgbench import invoke as pgbench
from pglab.pgbench.generators import TABLE as GENERATORS
from pglab.pgbench.invoke import ProgressCallback
from pglab.postgres import kit_load
from pglab.postgres.interface import Server
from pglab.postgres.sources import Binaries
from pglab.records import PhaseResult, TableJson
from pglab.replay import phase as replay
from pglab.run.remote import Hosts
from pglab.sysbench import invoke as sysbench
from pglab.telemetry.watch import PhaseWatch
from pglab.tpch import phase as tpch
from pglab.tpch.plans import TABLE as PLANS


@dataclass
class PhaseContext:
    """What every runner of one run's phases may use."""

    server: Server
    binaries: Binaries
    workdir: Path  # the run's own directory (logs, dumps)
    hosts: Hosts  # the campaign's generator hosts
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


class _NothingAfter:
    """A runner with nothing to do once the phase's watching has stopped."""

    def finish(self, result: PhaseResult) -> PhaseResult:
        return result


def runner_for(phase: PhaseSpec, iteration: int, context: PhaseContext) -> PhaseRunner:
    """The runner of one iteration of ``phase``: the one place that tells kinds of phase apart."""
    if phase.operation is not None:
        return MaintenanceOperation(phase, iteration, context)
    if phase.kit == "tpch":
        return TpchPower(phase, iteration, context)
    if phase.kit is not None:
        return KitPgbench(phase, iteration, context)
    if phase.replay is not None:
        return Replay(phase, iteration, context)
    if phase.generator == "sysbench":
        return Sysbench(phase, iteration, context)
    if phase.remote:
        return GeneratorPgbench(phase, iteration, context)
    return LocalPgbench(phase, iteration, context)


@dataclass
class LocalPgbench(_NothingAfter):
    """pgbench on this machine; the watch is told its pid (its CPU is the client's)."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack  # nothing to make first

    def run(self, watch: PhaseWatch) -> PhaseResult:
        c = self.context
        return pgbench.run_phase(
            c.binaries,
            self.phase,
            self.iteration,
            c.server.pgbench_conn_args(),
            c.workdir,
            on_progress=c.on_progress,
            on_spawn=watch.set_pgbench,
            env=c.server.pgbench_env(),
            cpus=c.client_cpus,
            limits=c.client_limits,
        )


@dataclass
class GeneratorPgbench(_NothingAfter):
    """pgbench on the phase's generator hosts at once, merged; each host's figures in the
    result's ``generators`` table."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack

    def run(self, watch: PhaseWatch) -> PhaseResult:
        del watch  # pgbench runs elsewhere: no pid of this machine's to watch
        c = self.context
        result, table = c.hosts.run_phase(
            self.phase,
            self.iteration,
            c.server.pgbench_conn_args(),
            c.server.pgbench_env() or {},
            c.workdir / f"{self.phase.name}-{self.iteration}",
            c.on_progress,
            c.client_limits,
        )
        return replace(result, tables={**result.tables, GENERATORS: table})


@dataclass
class MaintenanceOperation(_NothingAfter):
    """A maintenance operation on pgbench's tables, timed on its own session and watched from
    another; prepared (a VACUUM's dirtying) before the phase is watched."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext
    _op: operations.Operation | None = None

    def prepare(self, stack: contextlib.ExitStack) -> None:
        c = self.context
        client = clients.Client(
            pg_dump=c.binaries.exe("pg_dump"),
            pg_restore=c.binaries.exe("pg_restore"),
            pg_basebackup=c.binaries.exe("pg_basebackup"),
            conninfo=c.server.client_conninfo,
            workdir=c.workdir,
            env=dict(c.server.pgbench_env() or {}),
        )
        prior = c.prior(self.phase.name, self.iteration)
        self._op = stack.enter_context(
            operations.Operation(
                c.server.bench_session, self.phase, client, prior, local=c.server.local_processes
            )
        )

    def run(self, watch: PhaseWatch) -> PhaseResult:
        del watch  # the operation watches its own progress views
        assert self._op is not None, "prepare first"
        return self._op.run(self.iteration, self.context.on_operation)


@dataclass
class KitPgbench:
    """A workload kit's scripts, run by pgbench here or on the generator hosts. Before the
    watching, the kit's refreshed SQL (``Kit.refresh``); around pgbench, its counters
    (``kit_load.COUNTERS_TABLE``: TPC-C's orders written, from which NOPM); after the watching,
    its consistency conditions checked on its data (``kit_load.CONSISTENCY_TABLE``: it reads
    every order line, so it is neither measured nor sampled)."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext

    @property
    def kit(self) -> str:
        assert self.phase.kit is not None
        return self.phase.kit

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack
        if KITS[self.kit].refresh:
            with self.context.server.connect() as conn:
                kit_load.refresh(conn, self.kit)

    def run(self, watch: PhaseWatch) -> PhaseResult:
        c = self.context
        runner: PhaseRunner = (
            GeneratorPgbench(self.phase, self.iteration, c)
            if self.phase.remote
            else LocalPgbench(self.phase, self.iteration, c)
        )
        if not KITS[self.kit].has("counters"):
            return runner.run(watch)
        with c.server.connect() as conn:
            before = kit_load.counters(conn, self.kit)
        result = runner.run(watch)
        with c.server.connect() as conn:
            after = kit_load.counters(conn, self.kit)
        table = kit_load.counters_table(before, after)
        return replace(result, tables={**result.tables, kit_load.COUNTERS_TABLE: table})

    def finish(self, result: PhaseResult) -> PhaseResult:
        if not KITS[self.kit].has("consistency"):
            return result
        with self.context.server.connect() as conn:
            table = kit_load.check(conn, self.kit)
        return replace(result, tables={**result.tables, kit_load.CONSISTENCY_TABLE: table})


@dataclass
class Sysbench(_NothingAfter):
    """sysbench's OLTP test on this machine, connected where pglab's own session is; the
    watch is told its pid (its CPU is the client's)."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext
    _target: kit_load.Target | None = None

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack
        with self.context.server.connect() as conn:
            self._target = kit_load.Target.of(conn)

    def run(self, watch: PhaseWatch) -> PhaseResult:
        assert self._target is not None, "prepare first"
        c = self.context
        return sysbench.run_phase(
            self.phase, self.iteration, self._target, c.workdir / f"{self.phase.name}-sysbench",
            on_progress=c.on_progress, on_spawn=watch.set_pgbench, cpus=c.client_cpus,
            limits=c.client_limits,
        )  # fmt: skip


@dataclass
class TpchPower(_NothingAfter):
    """kit = "tpch": each query's plan from one extra execution (before the watching, so not
    timed), then the power run on a session as pgbench's are (the run's session settings)."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext
    _seed: int = 0
    _plans: TableJson | None = None

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack
        self._seed = tpch.seed_of(self.phase)
        self.context.on_operation(f"tpch: the plans of {len(tpch.queries_of(self.phase))} queries")
        self._plans = tpch.explain(self.context.server.bench_session, self.phase, self._seed)

    def run(self, watch: PhaseWatch) -> PhaseResult:
        del watch  # the queries run in the server: no client process of pglab's to watch
        assert self._plans is not None, "prepare first"
        c = self.context
        result = tpch.run_phase(
            c.server.bench_session, self.phase, self.iteration, self._seed, c.on_operation
        )
        return replace(result, tables={**result.tables, PLANS: self._plans})


@dataclass
class Replay(_NothingAfter):
    """A captured workload replayed by pgreplay on the variant's server (``replay/phase``):
    its sessions connect as their users to their databases, which the dataset restored."""

    phase: PhaseSpec
    iteration: int
    context: PhaseContext

    def prepare(self, stack: contextlib.ExitStack) -> None:
        del stack

    def run(self, watch: PhaseWatch) -> PhaseResult:
        del watch  # pgreplay's pid is not told: its CPU is counted with the machine's
        c = self.context
        offset = c.server.log_size()
        return replay.run_phase(
            self.phase, self.iteration, c.server.client_conninfo, c.server.pgbench_env(),
            c.workdir / f"{self.phase.name}-{self.iteration}-replay",
            lambda: c.server.log_since(offset),
        )  # fmt: skip
