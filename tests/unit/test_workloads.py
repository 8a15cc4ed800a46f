"""The workloads' registry: a phase's kind told in one place (``workloads.kind_of``), each
kind's plug-in (runner, metrics, dataset, figures), and the figures it declares agreeing with
what the views read (``metric_units``: units, and the figures held in a metric of their own)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest

from pglab import metric_units
from pglab.analysis.points import KIT_HEADLINES
from pglab.campaign.identity import flat
from pglab.campaign.phase_work import phase_of
from pglab.campaign.spec import PhaseSpec
from pglab.workloads import (
    REGISTRY,
    figure_of,
    figures_in_tps,
    figures_not_tps,
    headlines_by_metric,
    kind_of,
    metrics_functions,
)
from pglab.workloads.interface import Lazy
from pglab.workloads.kits.metrics import kit_metrics
from pglab.workloads.kits.pacing_metrics import pacing_metrics
from pglab.workloads.kits.runner import KitPgbench
from pglab.workloads.kits.work.kits import KITS
from pglab.workloads.maintenance.metrics import operation_metrics
from pglab.workloads.maintenance.runner import MaintenanceOperation
from pglab.workloads.pgbench import runner as pgbench_runner
from pglab.workloads.replay.metrics import replay_metrics
from pglab.workloads.replay.runner import Replay
from pglab.workloads.sysbench.metrics import sysbench_metrics
from pglab.workloads.sysbench.runner import Sysbench
from pglab.workloads.tpch.metrics import tpch_metrics
from pglab.workloads.tpch.runner import TpchPower

BASE = PhaseSpec(name="main")


def told(**fields: object) -> PhaseSpec:
    """The phase whose flat fields (as the campaign file gives them) are ``fields``: its kind
    decided by the parser once (``campaign/phase_work``)."""
    return phase_of({**flat(BASE), **fields})


@pytest.mark.parametrize(
    ("phase", "kind"),
    [
        (BASE, "pgbench"),
        (replace(BASE, generators=("gen1", "gen2")), "pgbench"),  # on generator hosts
        (told(operation="vacuum"), "maintenance"),
        (told(operation="vacuum", kit="tpcc"), "maintenance"),  # the operation first
        (told(kit="tpcc"), "tpcc"),
        (told(kit="ycsb"), "ycsb"),
        (told(kit="tpce"), "tpce"),
        (told(kit="tpch"), "tpch"),
        (told(generator="sysbench", test="oltp_read_write"), "sysbench"),
        (told(replay="w.pglab-workload"), "replay"),
    ],
)
def test_a_phase_s_kind_is_told_in_one_place(phase: PhaseSpec, kind: str) -> None:
    assert kind_of(phase) == kind
    assert REGISTRY[kind].kind == kind


def test_each_kind_has_its_runner_and_its_dataset() -> None:
    runners = {
        kind: w.runner.resolve() if isinstance(w.runner, Lazy) else w.runner
        for kind, w in REGISTRY.items()
    }
    assert runners == {
        "maintenance": MaintenanceOperation, "tpcc": KitPgbench, "ycsb": KitPgbench,
        "tpce": KitPgbench, "sysbench": Sysbench, "replay": Replay, "tpch": TpchPower,
        "pgbench": pgbench_runner.runner,
    }  # fmt: skip
    every_kit = {w.dataset.name for w in REGISTRY.values() if w.dataset is not None}
    assert every_kit == {*KITS, "sysbench", "replay"}  # every dataset kind has its workload


def test_a_run_s_metrics_come_in_the_order_they_were_stored_in() -> None:
    """Each function once, in the order ``run/metrics`` called them before the registry (a
    stored run's metrics keep their order)."""
    assert metrics_functions() == [
        operation_metrics, kit_metrics, pacing_metrics, sysbench_metrics, replay_metrics,
        tpch_metrics,
    ]  # fmt: skip


def test_the_figures_held_in_tps_are_the_kinds_declared_ones(monkeypatch) -> None:
    """pglab's own kinds hold no other figure than a TPS in ``tps`` (issue 52); a plug-in's
    figure held there is named by its declaration (``Figure.held_when``) alone."""
    from helpers.toy_workload import register

    assert figures_in_tps() == ()
    assert figure_of({"geomean_s": 2.0, "throughput": 1.0}) == "QthH"
    assert figure_of({"tps": 1.0, "toy_counts": 3.0}) == "tps"
    register(monkeypatch)
    assert figures_in_tps() == (("toy_counts", "counts/s"),)
    assert figure_of({"tps": 1.0, "toy_counts": 3.0}) == "counts/s"


def test_the_declared_figures_are_those_the_views_read() -> None:
    """Only a transaction rate is held in the run's ``tps`` (issue 52: MB/s, QphH... were, and
    read back as "tps"); every other figure in a metric of its own with the figure's unit, the
    views' table of them (``workloads.figures_not_tps``) made from the declarations."""
    held = dict(figures_not_tps())  # metric -> figure
    for w in REGISTRY.values():
        assert w.figures, w.kind
        assert w.headline is w.figures[0]
        for fig in w.figures:
            assert fig.direction == "higher", fig  # every headline today
            if fig.metric == "tps":
                assert fig.name == "tps" and fig.unit == "transactions/s", fig
            else:
                assert metric_units.metric_unit(fig.metric) == fig.unit, fig
                assert held.get(fig.metric, fig.name) == fig.name, fig
            for item in fig.items:
                assert metric_units.metric_unit(item) is not None, (w.kind, item)
    declared = {f.metric: f.name for w in REGISTRY.values() for f in w.figures}
    assert all(declared.get(metric) == name for metric, name in held.items())
    assert (
        KIT_HEADLINES
        == headlines_by_metric()
        == {
            "MB/s": "mb_s",
            "NOPM": "nopm",
            "tpsE": "tpse",
            "statements/active s": "replay.statements_active_s",
            "QphH": "power",
            "QthH": "throughput",
        }
    )


def test_the_check_of_the_figures_can_fail() -> None:
    """A figure the views do not know, and an item without a unit."""
    assert "TPM" not in dict(figures_not_tps()).values()
    assert metric_units.metric_unit("no_such_figure") is None


# what a command that only reads the store imports: the registry, no runner, no instrument
READS_ONLY = """
import sys
import pglab.workloads
from pglab.analysis import points
runners = [m for m in sys.modules if m.startswith("pglab.workloads.") and m.endswith(".runner")]
found = sorted([*runners, *(m for m in sys.modules if m in INSTRUMENTS)])
print(found)
"""
INSTRUMENTS = ("pglab.telemetry.watch", "pglab.pgbench.invoke", "pglab.workloads.replay.engine")


def test_the_registry_imports_no_runner() -> None:
    """``workloads/__init__`` names the runners (``interface.Lazy``): reading the registry's
    figures and plans (``pglab show``, ``report``) imports none of them, nor what they drive;
    a phase that runs imports its own."""
    code = f"INSTRUMENTS = {INSTRUMENTS!r}\n{READS_ONLY}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    runner = REGISTRY["sysbench"].runner
    assert isinstance(runner, Lazy) and runner.resolve() is Sysbench


def test_a_runner_import_in_the_registry_is_caught() -> None:
    code = f"INSTRUMENTS = {INSTRUMENTS!r}\nimport pglab.workloads.kits.runner\n{READS_ONLY}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pglab.workloads.kits.runner" in out.stdout
