"""A phase of kit = "tpch": its power run as a ``PhaseResult`` (the executor stores it as any
phase), and each query's plan from one extra execution before it (outside the timed run and
its watching).

The result's pgbench-shaped report holds what the store's phase row has room for: the queries
run (``transactions``), the QphH-like power figure (``tps``, its ``figure`` "QphH": the
run's headline, stored under that name, not as a TPS), their mean time
(``latency_avg_ms``); the figures are in its tables: ``power.TABLE`` (a row per query: its
seconds, rows, whether it timed out, the seed of its parameters) and ``plans.TABLE``.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

import psycopg

from pglab.campaign.spec import PhaseSpec
from pglab.records import PgbenchReport, PhaseResult, TableJson
from pglab.workloads.tpch import plans, power, throughput
from pglab.workloads.tpch.work import TpchWork
from pglab.workloads.tpch.work.queries import QUERIES

DEFAULT_SEED = 1  # random_seed left out: the same parameters every run (repeatable)
SCALE_DEFINE = "scale factor"  # the phase's define that tells the dataset's scale


def seed_of(phase: PhaseSpec) -> int:
    """The seed of the substitution parameters: ``random_seed`` when a number, a new one each
    run for "time" or "rand", else ``DEFAULT_SEED``."""
    if isinstance(phase.pgbench.random_seed, int):
        return phase.pgbench.random_seed
    if phase.pgbench.random_seed in ("time", "rand"):
        return random.SystemRandom().randrange(1, 2**31)
    return DEFAULT_SEED


def scale_of(phase: PhaseSpec) -> float:
    return float(dict(phase.pgbench.defines).get(SCALE_DEFINE, "1"))


def tpch_work(phase: PhaseSpec) -> TpchWork:
    """A TPC-H-like phase's own work: its mode, queries and their timeout."""
    assert isinstance(phase.work, TpchWork), "a TPC-H-like phase"
    return phase.work


def queries_of(phase: PhaseSpec) -> tuple[int, ...]:
    return tpch_work(phase).queries or QUERIES


def explain(session: Callable[[], psycopg.Connection], phase: PhaseSpec, seed: int) -> TableJson:
    """Each query's plan (``plans.TABLE``), on a session of its own."""
    with session() as conn:
        conn.autocommit = True
        found = plans.plans(
            conn, queries_of(phase), seed, scale_of(phase), tpch_work(phase).query_timeout
        )
    return plans.as_table(found)


def run_phase(
    session: Callable[[], psycopg.Connection],
    phase: PhaseSpec,
    iteration: int,
    seed: int,
    on_status: Callable[[str], None] = lambda msg: None,
) -> PhaseResult:
    """The power run on a session of its own (or, in mode "throughput", the throughput run
    of ``clients`` streams), as a phase result with its queries' table."""
    if tpch_work(phase).mode == "throughput":
        return _throughput(session, phase, iteration, seed, on_status)
    queries = queries_of(phase)
    started, t0 = time.time(), time.perf_counter()
    with session() as conn:
        conn.autocommit = True
        times = power.power_run(
            conn, queries, seed, scale_of(phase), tpch_work(phase).query_timeout, on_status
        )
    elapsed = time.perf_counter() - t0
    table = power.as_table(times)
    table["columns"] = [*table["columns"], "seed"]
    table["rows"] = [[*row, seed] for row in table["rows"]]
    report = PgbenchReport(
        tps=power.power_figure(times, scale_of(phase)),  # the run's headline, under its name
        transactions=len(times),
        failed=0,  # a timeout is recorded in the table, not as a failure
        latency_avg_ms=1000 * statistics.fmean(t.seconds for t in times),
        transaction_type=f"tpch power run of {len(times)} queries",
        duration_s=elapsed,
        figure="QphH",
    )
    return PhaseResult(
        name=phase.name,
        iteration=iteration,
        measured=phase.measured,
        started_at=started,
        elapsed_s=elapsed,
        argv=("tpch", "power", *map(str, queries)),
        report=report,
        tables={power.TABLE: table},
    )


def _throughput(
    session: Callable[[], psycopg.Connection],
    phase: PhaseSpec,
    iteration: int,
    seed: int,
    on_status: Callable[[str], None],
) -> PhaseResult:
    queries, streams, scale = queries_of(phase), phase.clients, scale_of(phase)
    started = time.time()
    found, elapsed = throughput.throughput_run(
        session, queries, seed, scale, streams, tpch_work(phase).query_timeout, on_status
    )
    times = [t for stream in found for t in stream]
    report = PgbenchReport(
        tps=throughput.throughput_figure(streams, len(queries), elapsed, scale),
        transactions=len(times),
        failed=0,  # a timeout is recorded in the table, not as a failure
        latency_avg_ms=1000 * statistics.fmean(t.seconds for t in times),
        transaction_type=f"tpch throughput run of {streams} streams × {len(queries)} queries",
        clients=streams,
        duration_s=elapsed,
        figure="QthH",
    )
    return PhaseResult(
        name=phase.name,
        iteration=iteration,
        measured=phase.measured,
        started_at=started,
        elapsed_s=elapsed,
        argv=("tpch", "throughput", str(streams), *map(str, queries)),
        report=report,
        tables={throughput.TABLE: throughput.as_table(found, seed)},
    )
