"""sysbench (1.0, its pgsql driver) as a workload (``generator = "sysbench"``): its command for
a phase, run with each second told as it comes (``invoke``), its per-second report and final
statistics parsed (``output``), its runner (``runner.Sysbench``) and its figures beside TPS
(``metrics``), its version in a run's fingerprint (``fingerprint``). Its tables are loaded by
``load`` (its ``prepare``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from pglab.campaign.spec import DatasetSpec, PhaseSpec, ServerSpec
from pglab.fingerprints import Fingerprint


class SysbenchFacts(Fingerprint, total=False):
    """What sysbench adds to a run's fingerprint."""

    sysbench_version: str


def fingerprint(fp: Fingerprint) -> None:
    """sysbench's version, in the fingerprint of a run that runs it."""
    from pglab.workloads.sysbench import load  # when a run runs it, not with the registry

    cast(SysbenchFacts, fp)["sysbench_version"] = load.sysbench_version()


def generator_said(fp: Fingerprint) -> str | None:
    """The load generator as a run's fingerprint tells it: sysbench's version when its
    phases ran sysbench, else None."""
    version = cast(SysbenchFacts, fp).get("sysbench_version")
    return f"sysbench {version}" if version else None


def likeness(ph: Mapping[str, Any]) -> tuple[str, str] | None:
    """A stored phase's kind of load and figure when sysbench ran it: its test, TPS."""
    if ph.get("generator") != "sysbench":
        return None
    return f"sysbench {ph.get('test')}", "tps"


def point(
    dataset: DatasetSpec, phases: tuple[PhaseSpec, ...], server: ServerSpec
) -> tuple[DatasetSpec, tuple[PhaseSpec, ...]]:
    """A point of sysbench's: its sbtest tables are the dataset, its phases told their number
    and size."""
    dataset = replace(dataset, kit="sysbench")
    told = (("tables", str(dataset.tables)), ("table_size", str(dataset.table_size)))
    return dataset, tuple(ph.with_pgbench(defines=told) for ph in phases)
