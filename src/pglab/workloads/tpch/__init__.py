"""The TPC-H-like kit as a workload (``kit = "tpch"``): a phase's power run and plans
(``phase``), the power run under a ``statement_timeout`` and its figures (``power``), a
throughput run's streams (``throughput``), each query's plan and the differences of plan
shapes (``plans``); its runner (``runner.TpchPower``: the plans, then the power or throughput
run) and its run figures (``metrics``: QphH-like power, QthH-like throughput). Its data is
loaded by ``load``, its queries are ``work/queries``'."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pglab.campaign.spec import PhaseSpec
from pglab.workloads.tpch.work import TpchWork

# what `pglab compare --help` says of two points' queries
COMPARE_HELP = """\
Two points of kit = "tpch": each query's seconds side by side with a verdict on its rate (as
above: paired by round within one campaign, show's own answer when it is one of the campaign's
comparisons, Holm over the queries) and how its plan changed: its shape, and where a node
outgrew work_mem (a sort on disk, a hash in batches, a lossy bitmap).
"""


def said(ph: PhaseSpec) -> str:
    """A phase as the plan lists it: its queries, once each, on one session (a stream each)."""
    work = ph.work
    assert isinstance(work, TpchWork), work
    queries = ",".join(f"Q{n}" for n in work.queries) if work.queries else "22 queries"
    limit = f", at most {work.query_timeout:g}s each" if work.query_timeout else ""
    streams = f", {ph.clients} streams" if work.mode == "throughput" else ""
    return f"tpch {work.mode} run of {queries}{streams}{limit}"


def likeness(ph: Mapping[str, Any]) -> tuple[str, str] | None:
    """A stored phase's kind of load and figure when it is a TPC-H-like run: its mode, QphH
    or QthH (a plan's noise comes from stored runs alike)."""
    if ph.get("kit") != "tpch":
        return None
    throughput = ph.get("mode") == "throughput"
    return f"tpch {ph.get('mode') or 'power'}", "QthH" if throughput else "QphH"
