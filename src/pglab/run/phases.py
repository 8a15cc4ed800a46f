"""The phase runners, as the executor asks for them: one interface for every kind of
measured work a phase can be.

The executor runs each iteration of a phase the same way, whatever the phase is:

    runner = runner_for(phase, iteration, context)
    with ExitStack() as stack:
        runner.prepare(stack)           # before the watching: an operation's dirtying
        watch = stack.enter_context(PhaseWatch(...))
        result = runner.run(watch)      # the phase's result, with the runner's own tables
    result = runner.finish(result)      # after the watching: a kit's consistency check

The runners are the workloads' own (``workloads/KIND/runner.py``: pgbench here or on the
generator hosts, maintenance operations, the pgbench kits, sysbench, the TPC-H-like power run,
a captured workload's replay); ``runner_for`` is the registry's lookup
(``workloads.kind_of``), so a new kind of workload leaves the executor unchanged.
``PhaseContext`` and ``PhaseRunner`` are declared in ``workloads/interface.py`` (the
workloads' stage, before ``run/``) and named here for the executor.
"""

from __future__ import annotations

from pglab.campaign.spec import PhaseSpec
from pglab.workloads import workload_of
from pglab.workloads.interface import PhaseContext, PhaseRunner

__all__ = ["PhaseContext", "PhaseRunner", "runner_for"]


def runner_for(phase: PhaseSpec, iteration: int, context: PhaseContext) -> PhaseRunner:
    """The runner of one iteration of ``phase``: its kind's (``workloads.REGISTRY``)."""
    return workload_of(phase).runner(phase, iteration, context)
