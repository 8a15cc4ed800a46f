"""The one table of evidence rules (``analysis.evidence``): each figure's name as a person reads
it, its unit, the smallest move worth saying and what its rise or fall says.

Most figures have a fixed key (``RULES``); four families are keyed by what they name:

- ``wait:TYPE:EVENT``: a wait event, in sessions (``WAIT_RULE``, words in ``WAIT_WORDS``);
- ``cpu:KIND:FUNCTION``: a function's inclusive share of a process kind's CPU samples, where
  the runs were profiled (``FUNCTION_RULE``, words in ``FUNCTION_WORDS``); ``cpu_samples:KIND``
  is the kind's samples in a run, the sample floor's count (never an item itself);
- ``plan:qNN:SPILL``: where a TPC-H-like query's plan outgrew ``work_mem``
  (``SPILL_RULES``: a sort on disk, a hash join's batches, a hash aggregate on disk, a
  bitmap's lossy blocks), from the plan each run stored;
- ``plan:qNN:node:TYPE``: how many nodes of a type the query's plan has (a plan that changed
  shape: one type's count falls, another's rises).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """How a figure is named and judged: ``name`` as a person reads it, ``unit`` after the
    number, ``floor`` the smallest |Δ| worth saying, ``up``/``down`` what a rise or a fall says
    ("" for nothing)."""

    name: str
    unit: str
    floor: float
    up: str = ""
    down: str = ""
    # what the run cannot have caused when it rises (another process's CPU, the hypervisor's):
    # a fall can be the run's doing, on a machine whose CPUs are all in use (zero-sum)
    outside: bool = False
    # a rate (per second, or per run of a fixed length) that moves with the throughput: an
    # item only where it moved per transaction too, the same way (else it merely follows)
    follows: bool = False


WAIT = "wait:"  # a wait event's figure: "wait:TYPE:EVENT"
CPU = "cpu:"  # a profiled function's inclusive share: "cpu:KIND:FUNCTION"
CPU_SAMPLES = "cpu_samples:"  # a process kind's CPU samples in a run: "cpu_samples:KIND"
PLAN = "plan:"  # a query's plan: "plan:q09:sort", "plan:q09:node:Hash Join"
NODE = "node:"
THROUGHPUT = "throughput"  # a run's transactions per second (what ``follows`` is judged by)

# figures measured on every run (the families above have rules of their own, below)
RULES: dict[str, Rule] = {
    "others_cpu_pct": Rule(
        "busy machine: other processes' CPU",
        "% of a core",
        5.0,
        "another process took CPU from the run",
        "another process stopped taking CPU",
        outside=True,
    ),
    "cpu_user_pct": Rule("CPU user", "points", 2.0, follows=True),
    "cpu_system_pct": Rule("CPU system", "points", 2.0, follows=True),
    "cpu_iowait_pct": Rule("CPU iowait", "points", 1.0, "CPUs idle waiting for I/O"),
    "cpu_steal_pct": Rule(
        "CPU steal", "points", 1.0, "the hypervisor took CPU from the VM", outside=True
    ),
    "postgres_cpu_pct": Rule("server CPU", "% of a core", 5.0, follows=True),
    "postgres_cpu_us_xact": Rule(
        "server CPU per transaction",
        "µs",
        1.0,
        "each transaction costs the server more CPU",
        "each transaction costs the server less CPU",
    ),
    "pgbench_cpu_pct": Rule(
        "client CPU",
        "% of a core",
        5.0,
        "the load generator worked harder (client-bound?)",
        follows=True,
    ),
    "disk_read_mb_s": Rule("disk reads", "MB/s", 0.5, follows=True),
    "disk_write_mb_s": Rule("disk writes", "MB/s", 0.5, follows=True),
    "disk_await_ms": Rule("disk await", "ms", 0.2, "each I/O waited longer"),
    "wal_kb_xact": Rule(
        "WAL per transaction",
        "kB",
        0.05,
        "more WAL written per transaction",
        "less WAL written per transaction (compressed, or fewer full pages?)",
    ),
    "wal_fpi_xact": Rule(
        "full-page images per transaction",
        "",
        0.01,
        "more pages written whole to the WAL after a checkpoint",
    ),
    "temp_kb_xact": Rule(
        "temporary files per transaction",
        "kB",
        1.0,
        "sorts or hashes spilled to disk (work_mem too small for them)",
        "fewer sorts or hashes spill to disk (they fit in work_mem)",
    ),
    "checkpoints": Rule("checkpoints", "", 0.5, follows=True),
    "checkpoints_requested": Rule(
        "requested checkpoints", "", 0.5, "max_wal_size reached", follows=True
    ),
    "checkpoint_write_s": Rule("checkpoint write time", "s", 0.5),
    "checkpoint_sync_s": Rule("checkpoint sync time", "s", 0.1),
    "blks_read_xact": Rule(
        "buffers read per transaction", "", 0.05, "more pages came from outside shared buffers"
    ),
    "blks_hit_xact": Rule("buffer hits per transaction", "", 0.5),
    # the server's hardware counters, where the machine counts them (``profile.counters``)
    "ipc": Rule(
        "instructions per cycle",
        "",
        0.02,
        "the server's CPU did more per cycle",
        "the server's CPU did less per cycle (stalled: cache misses, branch mispredictions?)",
    ),
    "cache_misses_xact": Rule(
        "cache misses per transaction",
        "",
        1.0,
        "more cache misses per transaction (a working set the CPU's caches do not hold?)",
        "fewer cache misses per transaction",
    ),
}
WAIT_RULE = Rule("{event} waits", "sessions", 0.02)
# "TYPE:EVENT" (any case: 17 renamed WALSync WalSync): (what a rise says, what a fall says)
WAIT_WORDS: dict[str, tuple[str, str]] = {
    "IO:WALSync": ("commits wait for the WAL flush", "commits wait less for the WAL flush"),
    "LWLock:WALWrite": (
        "backends wait for another's WAL write or flush",
        "backends wait less for another's WAL write or flush",
    ),
    "LWLock:WALInsert": ("backends contend to insert WAL", ""),
    "IO:WALWrite": ("backends write WAL themselves", ""),
    "IO:DataFileRead": ("pages are read from outside shared buffers", ""),
    "IO:BufFileWrite": ("sorts or hashes write temporary files", ""),
    "IO:BufFileRead": ("sorts or hashes read temporary files back", ""),
    "CPU:running": ("more sessions run on CPU", "fewer sessions run on CPU"),
    "Lock:transactionid": ("transactions wait for others' row locks", ""),
    "Lock:tuple": ("transactions wait for others' row locks", ""),
    "LWLock:ProcArray": ("snapshots and commits contend for the ProcArray", ""),
    "LWLock:BufferMapping": ("backends contend for the buffer mapping", ""),
}
_WAIT_WORDS = {k.lower(): v for k, v in WAIT_WORDS.items()}

# a function's inclusive share (it or what it called) of its process kind's samples, in
# points; only kinds and functions above the sample floors of ``analysis.profiles``
FUNCTION_RULE = Rule("CPU in {function} ({kind})", "points", 1.0)
_PLANNING = (
    "the planner runs more: a plan made per execution (custom plans?)",
    "the planner runs less: plans reused (a generic plan?)",
)
FUNCTION_WORDS: dict[str, tuple[str, str]] = {
    "pglz_compress": ("WAL records compressed (wal_compression = pglz)", ""),
    "LZ4_compress_fast": ("WAL records compressed (wal_compression = lz4)", ""),
    "ZSTD_compress": ("WAL records compressed (wal_compression = zstd)", ""),
    **dict.fromkeys(
        (
            "pg_plan_queries",
            "pg_plan_query",
            "planner",
            "standard_planner",
            "subquery_planner",
            "grouping_planner",
            "query_planner",
            "BuildCachedPlan",
            "GetCachedPlan",
            "create_plan",
            "create_plan_recurse",
            "make_one_rel",
            "add_paths_to_joinrel",
            "set_base_rel_sizes",
            "set_base_rel_pathlists",
            "preprocess_expression",
            "SS_process_ctes",
        ),
        _PLANNING,
    ),
    "HeapTupleSatisfiesVisibility": ("more row versions checked for visibility", ""),
    "XLogInsertRecord": ("more time inserting WAL records", ""),
    "tuplesort_performsort": ("more time sorting", ""),
}

# where a query's plan outgrew work_mem (``tpch.plans.spills``' kinds): its rule, and the
# factor from the plan's amount to the unit (kB to MB)
SPILL_RULES: dict[str, tuple[Rule, float]] = {
    "sort": (
        Rule(
            "{query}: sort on disk", "MB", 0.1, "a sort outgrew work_mem", "a sort fits in work_mem"
        ),
        1 / 1024,
    ),
    "hash": (
        Rule(
            "{query}: hash join batches",
            "",
            0.5,
            "a hash join outgrew work_mem",
            "a hash join fits in work_mem",
        ),
        1.0,
    ),
    "hashagg": (
        Rule(
            "{query}: hash aggregate on disk",
            "MB",
            0.1,
            "a hash aggregate outgrew work_mem",
            "a hash aggregate fits in work_mem",
        ),
        1 / 1024,
    ),
    "bitmap": (
        Rule(
            "{query}: lossy bitmap blocks",
            "",
            1.0,
            "a bitmap outgrew work_mem (its blocks' rows rechecked)",
            "a bitmap fits in work_mem",
        ),
        1.0,
    ),
}
NODE_RULE = Rule(
    "{query}: {node} nodes in its plan", "", 0.5, "the plan changed shape", "the plan changed shape"
)


def scope_of(key: str) -> str | None:
    """What a run must have recorded for a figure it lacks to count as zero there, not as
    missing: waits sampled (``wait:``), the function's process kind profiled
    (``cpu_samples:KIND``), the query's plan stored (``plan:qNN``); None for other figures (a
    figure a run lacks is missing)."""
    if key.startswith(WAIT):
        return WAIT
    if key.startswith(CPU):
        return CPU_SAMPLES + key[len(CPU) :].partition(":")[0]
    if key.startswith(PLAN):
        return PLAN + key[len(PLAN) :].partition(":")[0]
    return None


def scopes(measures: dict[str, float]) -> set[str]:
    """The scopes (``scope_of``) a run's figures show it recorded."""
    out = {s for k in measures if (s := scope_of(k)) is not None}
    return out | {k for k in measures if k.startswith(CPU_SAMPLES)}


def rule_of(key: str) -> Rule:
    """The rule of a figure's key (``RULES`` or one of the families)."""
    if key.startswith(WAIT):
        wait = key[len(WAIT) :]
        event = wait.partition(":")[2]
        name = "running on CPU" if wait == "CPU:running" else WAIT_RULE.name.format(event=event)
        up, down = _WAIT_WORDS.get(wait.lower(), ("", ""))
        return Rule(name, WAIT_RULE.unit, WAIT_RULE.floor, up, down)
    if key.startswith(CPU):
        kind, _, function = key[len(CPU) :].partition(":")
        up, down = FUNCTION_WORDS.get(function, ("", ""))
        name = FUNCTION_RULE.name.format(function=function, kind=kind)
        return Rule(name, f"points of its {kind} samples", FUNCTION_RULE.floor, up, down)
    if key.startswith(PLAN):
        query, _, what = key[len(PLAN) :].partition(":")
        if what.startswith(NODE):
            node = what[len(NODE) :].lower()
            return Rule(
                NODE_RULE.name.format(query=query, node=node),
                NODE_RULE.unit,
                NODE_RULE.floor,
                NODE_RULE.up,
                NODE_RULE.down,
            )
        rule = SPILL_RULES[what][0]
        return Rule(rule.name.format(query=query), rule.unit, rule.floor, rule.up, rule.down)
    return RULES[key]
