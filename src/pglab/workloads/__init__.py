"""The kinds of workload pglab runs, one package each, and the registry that maps a kind to
its plug-in (``interface.Workload``: its runner, its run metrics, its dataset, its figures).

``kind_of(phase)`` is the one place that tells a phase's kind; ``run/phases.runner_for`` and
``run/metrics.run_metrics`` look the kind up here. Adding a kind is a package beside these
and one line in ``REGISTRY``.

The registry's order is the order of a run's metrics as they are stored (each kind's
functions called once per run, in this order).
"""

from __future__ import annotations

from pglab.campaign.spec import PhaseSpec
from pglab.workloads import sysbench
from pglab.workloads.interface import Figure, MetricsFunction, PlanReader, Workload
from pglab.workloads.kits import metrics as kits_metrics
from pglab.workloads.kits import pacing_metrics
from pglab.workloads.kits.runner import KitPgbench
from pglab.workloads.maintenance import metrics as maintenance_metrics
from pglab.workloads.maintenance.figures import OPERATION_KIND
from pglab.workloads.maintenance.runner import MaintenanceOperation
from pglab.workloads.pgbench import runner as pgbench_runner
from pglab.workloads.replay import metrics as replay_metrics
from pglab.workloads.replay.phase import SUMMARY_TABLE as REPLAY_SUMMARY
from pglab.workloads.replay.runner import Replay
from pglab.workloads.sysbench import metrics as sysbench_metrics
from pglab.workloads.sysbench.runner import Sysbench
from pglab.workloads.tpch import metrics as tpch_metrics
from pglab.workloads.tpch import plans as tpch_plans
from pglab.workloads.tpch import power, throughput
from pglab.workloads.tpch.runner import TpchPower

_TPS = "transactions/s"
_KIT_ITEMS = ("tpm", "rollback_pct", "inconsistent")

REGISTRY: dict[str, Workload] = {
    w.kind: w
    for w in (
        Workload(
            "maintenance",
            MaintenanceOperation,
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
        ),
        Workload(
            "tpcc",
            KitPgbench,
            (kits_metrics.kit_metrics, pacing_metrics.pacing_metrics),
            "tpcc",
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
        ),
        Workload(
            "ycsb",
            KitPgbench,
            (kits_metrics.kit_metrics,),
            "ycsb",
            (Figure("tps", "tps", _TPS, items=("latency_avg_ms", "inconsistent")),),
        ),
        Workload(
            "tpce",
            KitPgbench,
            (kits_metrics.kit_metrics,),
            "tpce",
            (
                Figure(
                    "tpsE",
                    "tpse",
                    _TPS,
                    items=("tpse_pgbench", "results_idle_pct", "rollback_pct", "inconsistent"),
                ),
            ),
        ),
        Workload(
            "sysbench",
            Sysbench,
            (sysbench_metrics.sysbench_metrics,),
            "sysbench",
            (Figure("tps", "tps", _TPS, items=("qps", "errors_s", "reconnects_s")),),
            fingerprint=sysbench.fingerprint,
        ),
        Workload(
            "replay",
            Replay,
            (replay_metrics.replay_metrics,),
            "replay",
            (
                Figure(
                    "statements/active s",
                    replay_metrics.FIGURE,
                    "statements/s",
                    items=tuple(f"replay.{k}" for k in replay_metrics.REPLAY_HEADLINE),
                    table=REPLAY_SUMMARY,
                ),
            ),
        ),
        Workload(
            "tpch",
            TpchPower,
            (tpch_metrics.tpch_metrics,),
            "tpch",
            (
                Figure("QphH", "power", "QphH", items=("geomean_s", "timeouts"), table=power.TABLE),
                Figure("QthH", "throughput", "QthH", items=("timeouts",), table=throughput.TABLE),
            ),
            plans=PlanReader(
                tpch_plans.TABLE, tpch_plans.spills, tpch_plans.shape, tpch_plans.parse
            ),
        ),
        Workload(
            "pgbench",
            pgbench_runner.runner,
            (),
            None,
            (Figure("tps", "tps", _TPS, items=("tps_steady", "latency_avg_ms", "failed")),),
        ),
    )
}


def kind_of(phase: PhaseSpec) -> str:
    """A phase's kind, a key of ``REGISTRY``: a maintenance operation, a workload kit (by its
    name), a captured workload's replay, sysbench, else pgbench (here or on generator hosts)."""
    if phase.operation is not None:
        return "maintenance"
    if phase.kit is not None:
        return phase.kit
    if phase.replay is not None:
        return "replay"
    if phase.generator != "pgbench":
        return phase.generator
    return "pgbench"


def workload_of(phase: PhaseSpec) -> Workload:
    """The plug-in of ``phase``'s kind."""
    return REGISTRY[kind_of(phase)]


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


def plan_readers() -> list[PlanReader]:
    """How the kinds that store query plans read them (for a comparison's evidence)."""
    return [w.plans for w in REGISTRY.values() if w.plans is not None]
