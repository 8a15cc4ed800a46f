"""The kinds of workload pglab runs, one package each, and the registry that maps a kind to
its plug-in (``interface.Workload``: its runner, its run metrics, its dataset, its figures).

``kind_of(phase)`` is the one place that tells a phase's kind; ``run/phases.runner_for`` and
``run/metrics.run_metrics`` look the kind up here. Adding a kind is a package beside these
and one line in ``REGISTRY``. Its runner is named (``interface.Lazy``), imported when a phase
first runs: a command that only reads the store imports no runner.

The registry's order is the order of a run's metrics as they are stored (each kind's
functions called once per run, in this order).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pglab.campaign.spec import DatasetSpec, PhaseSpec, ServerSpec
from pglab.fingerprints import Fingerprint
from pglab.postgres import dataset as datasets
from pglab.postgres.dataset import DatasetKind
from pglab.workloads import maintenance, replay, sysbench, tpch
from pglab.workloads.interface import (
    Figure,
    Lazy,
    MetricsFunction,
    NamedItems,
    Objective,
    PlanReader,
    QueryTables,
    Workload,
)
from pglab.workloads.kits import load as kits_load
from pglab.workloads.kits import metrics as kits_metrics
from pglab.workloads.kits import pacing_metrics
from pglab.workloads.kits.point import kit_point
from pglab.workloads.kits.work import NOPM, TPSE
from pglab.workloads.maintenance import metrics as maintenance_metrics
from pglab.workloads.maintenance.figures import OPERATION_KIND
from pglab.workloads.replay import load as replay_load
from pglab.workloads.replay import metrics as replay_metrics
from pglab.workloads.replay.point import replay_point
from pglab.workloads.sysbench import load as sysbench_load
from pglab.workloads.sysbench import metrics as sysbench_metrics
from pglab.workloads.tpce import load as tpce_load
from pglab.workloads.tpch import load as tpch_load
from pglab.workloads.tpch import metrics as tpch_metrics
from pglab.workloads.tpch import plans as tpch_plans
from pglab.workloads.tpch.work import GEOMEAN

_TPS = "transactions/s"
TPCH_QUERIES, TPCH_STREAMS = "tpch.queries", "tpch.streams"  # tpch.power.TABLE, throughput.TABLE
_KITS = Lazy("pglab.workloads.kits.runner", "KitPgbench")
_KIT_ITEMS = ("tpm", "rollback_pct", "inconsistent")
_KIT_KINDS = ("tpcc", "ycsb", "tpce", "tpch")  # the kits (DatasetSpec.kit of a phase's own)

REGISTRY: dict[str, Workload] = {
    w.kind: w
    for w in (
        Workload(
            "maintenance",
            Lazy("pglab.workloads.maintenance.runner", "MaintenanceOperation"),
            (maintenance_metrics.operation_metrics,),
            None,
            (
                Figure(
                    "MB/s",
                    "mb_s",
                    "MB/s",
                    items=(
                        "elapsed_s",
                        "bytes",
                        "workers_launched",
                        "wal_bytes",
                        "tuples_s",
                        "io_read_mb_s",
                        "leader_cpu_pct",
                        "workers_cpu_pct",
                    ),
                    table=OPERATION_KIND,
                ),
            ),
            likeness=maintenance.likeness,
        ),
        Workload(
            "tpcc",
            _KITS,
            (kits_metrics.kit_metrics, pacing_metrics.pacing_metrics),
            kits_load.TPCC,
            (
                Figure(
                    "NOPM",
                    "nopm",
                    "transactions/min",
                    items=(
                        *_KIT_ITEMS,
                        "nopm_pgbench",
                        "delivery_skipped_pct",
                        "nopm_bound",
                        "rt_over_limit",
                    ),
                ),
            ),
            point=kit_point,
            objectives=(
                Objective(
                    NOPM.name,
                    "a workload kit's figure (New-Orders per minute)",
                    _KIT_KINDS,
                    "kit",
                    'kit = "tpcc"',
                ),
            ),
        ),
        Workload(
            "ycsb",
            _KITS,
            (kits_metrics.kit_metrics,),
            kits_load.YCSB,
            (Figure("tps", "tps", _TPS, items=("latency_avg_ms", "inconsistent")),),
            point=kit_point,
        ),
        Workload(
            "tpce",
            _KITS,
            (kits_metrics.kit_metrics,),
            tpce_load.DATASET,
            (
                Figure(
                    "tpsE",
                    "tpse",
                    _TPS,
                    items=("tpse_pgbench", "results_idle_pct", "rollback_pct", "inconsistent"),
                ),
            ),
            point=kit_point,
            objectives=(
                Objective(
                    TPSE.name,
                    "the TPC-E-like kit's figure (Trade-Results per second)",
                    ("tpce",),
                    'kit = "tpce"',
                    'kit = "tpce"',
                ),
            ),
        ),
        Workload(
            "sysbench",
            Lazy("pglab.workloads.sysbench.runner", "Sysbench"),
            (sysbench_metrics.sysbench_metrics,),
            sysbench_load.DATASET,
            (Figure("tps", "tps", _TPS, items=("qps", "errors_s", "reconnects_s")),),
            fingerprint=sysbench.fingerprint,
            client_threads=("sysbench", "--threads"),
            generator_said=sysbench.generator_said,
            likeness=sysbench.likeness,
            point=sysbench.point,
        ),
        Workload(
            "replay",
            Lazy("pglab.workloads.replay.runner", "Replay"),
            (replay_metrics.replay_metrics,),
            replay_load.DATASET,
            (
                Figure(
                    "statements/active s",
                    replay_metrics.FIGURE,
                    "statements/s",
                    items=tuple(f"replay.{k}" for k in replay_metrics.REPLAY_HEADLINE),
                    named=NamedItems(
                        "statement class",
                        replay_metrics.CLASS_METRIC,
                        replay_metrics.CLASSES_TABLE,
                        "replay.exec_ms",
                        "ms",
                        replay.COMPARE_HELP,
                    ),
                    table=replay_metrics.SUMMARY_TABLE,
                ),
            ),
            point=replay_point,
            examples=replay.EXAMPLES,
        ),
        Workload(
            "tpch",
            Lazy("pglab.workloads.tpch.runner", "TpchPower"),
            (tpch_metrics.tpch_metrics,),
            tpch_load.DATASET,
            (
                Figure(
                    "QphH", "power", "QphH", items=("geomean_s", "timeouts"), table=TPCH_QUERIES
                ),
                Figure("QthH", "throughput", "QthH", items=("timeouts",), table=TPCH_STREAMS),
            ),
            plans=PlanReader(
                tpch_plans.TABLE, tpch_plans.spills, tpch_plans.shape, tpch_plans.parse
            ),
            likeness=tpch.likeness,
            said=tpch.said,
            point=kit_point,
            queries=QueryTables(
                TPCH_QUERIES,
                TPCH_STREAMS,
                tpch_plans.TABLE,
                tpch_plans.change,
                "tpch-queries",
                'kit = "tpch"',
                tpch.COMPARE_HELP,
            ),
            objectives=(
                Objective(
                    GEOMEAN.name,
                    "the TPC-H-like power run's figure (the geometric mean of its queries' "
                    "seconds)",
                    ("tpch",),
                    'kit = "tpch"',
                    'kit = "tpch"',
                ),
            ),
        ),
        Workload(
            "pgbench",
            Lazy("pglab.workloads.pgbench.runner", "runner"),
            (),
            None,
            (Figure("tps", "tps", _TPS, items=("tps_steady", "latency_avg_ms", "failed")),),
            client_threads=("pgbench", "-j"),
        ),
    )
}


def kind_of(phase: PhaseSpec) -> str:
    """A phase's kind, a key of ``REGISTRY``: its work's (``workloads/work.Work``: a maintenance
    operation, a workload kit by its name, a captured workload's replay, sysbench, else
    pgbench, here or on generator hosts), decided once when the campaign was parsed
    (``campaign/phase_work.work_of``)."""
    return phase.work.kind


def dataset_kind(spec: DatasetSpec) -> DatasetKind | None:
    """The kind whose dataset ``spec`` is (its loader, size and checks, declared by its
    workload), or None: pgbench's tables (``postgres/dataset``'s own)."""
    if spec.kit is None:
        return None
    return next(w.dataset for w in REGISTRY.values() if w.dataset and w.dataset.name == spec.kit)


def described(spec: DatasetSpec) -> str:
    """The dataset as told: ``scale 10``, ``tpcc, 2 warehouses`` (``postgres/dataset``)."""
    return datasets.described(spec, dataset_kind(spec))


def estimated_size(spec: DatasetSpec) -> datasets.Size:
    """A dataset's template size before it is made (``postgres/dataset``)."""
    return datasets.estimated_size(spec, dataset_kind(spec))


def dataset_kinds() -> list[DatasetKind]:
    """Every kind's own dataset, each once, in the registry's order."""
    return [w.dataset for w in REGISTRY.values() if w.dataset is not None]


def workload_of(phase: PhaseSpec) -> Workload:
    """The plug-in of ``phase``'s kind."""
    return REGISTRY[kind_of(phase)]


def point_of(
    dataset: DatasetSpec, phases: tuple[PhaseSpec, ...], server: ServerSpec
) -> tuple[DatasetSpec, tuple[PhaseSpec, ...]]:
    """A point's dataset and phases as their kind makes them (``Workload.point``: a kit's
    tables and the scale its scripts are told, a replay's dump and window, sysbench's tables);
    as they are for pgbench's tables. A point's phases share one dataset (the parser holds
    them to it), so the first phase of a kind with one decides."""
    for ph in phases:
        if (point := workload_of(ph).point) is not None:
            return point(dataset, phases, server)
    return dataset, phases


def metrics_functions() -> list[MetricsFunction]:
    """Every kind's run metrics, each function once, in the registry's order."""
    seen: list[MetricsFunction] = []
    for w in REGISTRY.values():
        seen += [f for f in w.metrics if f not in seen]
    return seen


def headlines_by_metric() -> dict[str, str]:
    """The figures held in a metric of their own (not in the run's ``tps``), name -> metric:
    an operation's MB/s, TPC-C-like NOPM, TPC-E-like tpsE, a replay's statements per active
    second, TPC-H-like QphH and QthH."""
    return {f.name: f.metric for w in REGISTRY.values() for f in w.figures if f.metric != "tps"}


def figures_by_table() -> dict[str, Figure]:
    """The figures that are not a TPS by the phase table that tells a phase of them
    (``Figure.table``): what a store written before they were stored under their own names
    holds in its phases' ``tps`` (``store/schema``'s version 6)."""
    return {f.table: f for w in REGISTRY.values() for f in w.figures if f.table is not None}


def figures_not_tps() -> tuple[tuple[str, str], ...]:
    """(the metric that holds it, the figure) of each declared figure that is not a TPS and has
    a metric of its own (``Figure.table``), in the registry's order: a run with the metric has
    that figure (and no ``tps``; stored before schema version 6, its ``tps`` held the same
    number)."""
    return tuple(
        (f.metric, f.name) for w in REGISTRY.values() for f in w.figures if f.table is not None
    )


def figures_in_tps() -> tuple[tuple[str, str], ...]:
    """The figures other than a TPS that a kind still holds in the run's ``tps`` (a kind added
    by a plug-in, as the tests' toy one: ``Figure.held_when``, the metric a run has when its
    ``tps`` is that figure); pglab's own kinds hold none there since issue 52."""
    return tuple(
        (f.held_when, f.name)
        for w in REGISTRY.values()
        for f in w.figures
        if f.metric == "tps" and f.held_when is not None
    )


def figure_of(metrics: Mapping[str, float]) -> str:
    """What a run's figure is, by the metric that holds it: QthH, QphH, MB/s, statements/active
    s (``figures_not_tps``), a plug-in's figure held in ``tps`` (``figures_in_tps``), or tps."""
    own = next((figure for key, figure in figures_not_tps() if key in metrics), None)
    if own is not None:
        return own
    return next((figure for key, figure in figures_in_tps() if key in metrics), "tps")


def figure_value(metrics: Mapping[str, float]) -> float | None:
    """A run's figure (``figure_of``), from its metrics: the metric that holds it, else its
    ``tps``; None without either (a failed run)."""
    key = next((key for key, _ in figures_not_tps() if key in metrics), "tps")
    return metrics.get(key)


def plan_readers() -> list[PlanReader]:
    """How the kinds that store query plans read them (for a comparison's evidence)."""
    return [w.plans for w in REGISTRY.values() if w.plans is not None]


def named_items() -> list[NamedItems]:
    """The items that runs name themselves, of every kind that has them (a replay's
    statement classes): what the views compare item by item beside the headline."""
    return [f.named for w in REGISTRY.values() for f in w.figures if f.named is not None]


def likeness(phase: Mapping[str, Any]) -> tuple[str, str]:
    """A stored phase's kind of load and the figure it is judged on (``analysis/noise``: the
    noise of stored points like a plan's), as its kind says (``Workload.likeness``); a kit's
    or pgbench's own scripts otherwise, on TPS."""
    for w in REGISTRY.values():
        if w.likeness is not None and (found := w.likeness(phase)) is not None:
            return found
    kit = phase.get("kit")
    return (f"{kit} kit" if kit else "pgbench"), "tps"


def generator_said(fp: Fingerprint) -> str | None:
    """The load generator a run's fingerprint tells of, when a kind ran its own (sysbench's
    version); None: pgbench's (its version is the fingerprint's own)."""
    return next(
        (said for w in REGISTRY.values() if w.generator_said and (said := w.generator_said(fp))),
        None,
    )


def threads_options() -> dict[str, str]:
    """Each load generator's program -> the option that gives it threads (``-j``)."""
    return {w.client_threads[0]: w.client_threads[1] for w in REGISTRY.values() if w.client_threads}


def query_tables() -> list[QueryTables]:
    """The numbered queries' tables of every kind whose runs time them (TPC-H-like)."""
    return [w.queries for w in REGISTRY.values() if w.queries is not None]


def objectives() -> dict[str, Objective]:
    """The ``[tune]`` objectives that are a kind's own figure, by name."""
    return {o.name: o for w in REGISTRY.values() for o in w.objectives}
