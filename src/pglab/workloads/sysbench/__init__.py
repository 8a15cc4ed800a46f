"""sysbench (1.0, its pgsql driver) as a workload (``generator = "sysbench"``): its command for
a phase, run with each second told as it comes (``invoke``), its per-second report and final
statistics parsed (``output``), its runner (``runner.Sysbench``) and its figures beside TPS
(``metrics``), its version in a run's fingerprint (``fingerprint``). Its tables are loaded by
``load`` (its ``prepare``)."""

from __future__ import annotations

from pglab.fingerprints import Fingerprint


def fingerprint(fp: Fingerprint) -> None:
    """sysbench's version, in the fingerprint of a run that runs it."""
    from pglab.workloads.sysbench import load  # when a run runs it, not with the registry

    fp["sysbench_version"] = load.sysbench_version()
