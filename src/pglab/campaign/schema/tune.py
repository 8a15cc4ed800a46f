"""``[tune]``, the table of a file for ``pglab tune`` (a campaign file of one point with it),
declared as the campaign's tables are: its JSON Schema (``campaign/json_schema.py``), the
layout ``pglab tune --help`` shows, the documentation's table and its checks
(``campaign/declared.py``, called by ``tune/spec.py``) are made from it."""

from __future__ import annotations

from pglab.campaign.schema.model import Key, Table
from pglab.workloads.work import TUNE_OBJECTIVES

# pglab's own, then each kind's own figure (declared by the kind: workloads/work.TUNE_OBJECTIVES)
_OWN = (("tps", "higher"), ("p99", "latency, lower"))
OBJECTIVES = (*(name for name, _ in _OWN), *(o.name for o in TUNE_OBJECTIVES))
_SAID = [f"{name} ({doc})" for name, doc in _OWN] + [f"{o.name} ({o.doc})" for o in TUNE_OBJECTIVES]
SAMPLERS = ("tpe", "gp", "cmaes", "random")
DISKS = ("ssd", "hdd")
DEFAULT_TRIALS = 30
DEFAULT_CONFIRM_REPEATS = 5
DEFAULT_MEMORY_SHARE = 0.75

TUNE = Table(
    "tune",
    "pglab tune FILE: the search over a point's settings, its budget and "
    "knobs, then the confirmation of the best",
    (
        Key(
            "objective",
            "string",
            f"what is optimised: {', '.join(_SAID[:-1])} or {_SAID[-1]}",
            '"tps"',
            "tps",
            choices=OBJECTIVES,
        ),
        Key(
            "p99_limit_ms",
            "number",
            'with objective = "tps": the best TPS whose p99 latency stays under this many ms',
            "20",
            default_doc="none",
            above=0,
            what="milliseconds",
        ),
        Key(
            "trials",
            "integer",
            "runs in the search (failed ones count; skipped ones do not)",
            "30",
            DEFAULT_TRIALS,
            minimum=1,
        ),
        Key(
            "sampler",
            "string",
            "Optuna's sampler: tpe (multivariate), cmaes, random; gp needs PyTorch",
            '"tpe"',
            "tpe",
            choices=SAMPLERS,
        ),
        Key("seed", "integer", "the sampler's seed", "0", 0, minimum=0),
        Key(
            "memory_share",
            "number",
            "shared_buffers + wal_buffers + maintenance_work_mem + "
            "work_mem × clients below this share of RAM",
            "0.75",
            DEFAULT_MEMORY_SHARE,
            above=0,
            maximum=1,
            what="a share of RAM",
        ),
        Key(
            "confirm_repeats",
            "integer",
            "confirmation: runs of each of the top trials, the defaults and PGTune's",
            "5",
            DEFAULT_CONFIRM_REPEATS,
            minimum=0,
        ),
        Key(
            "confirm_max",
            "integer",
            "adaptive confirmation: more rounds of the undecided ones, up "
            "to this many (anytime-valid comparisons)",
            "15",
            default_doc="none",
            minimum=1,
        ),
        Key("confirm_top", "integer", "the best trials confirmed", "3", 3, minimum=1),
        Key(
            "pgtune",
            "boolean",
            "PGTune's rules (OLTP) tried first and confirmed against",
            "true",
            True,
        ),
        Key(
            "disk",
            "string",
            "for PGTune's random_page_cost and effective_io_concurrency",
            '"ssd"',
            "ssd",
            choices=DISKS,
        ),
        Key(
            "unsafe",
            "boolean",
            "true: fsync, full_page_writes, synchronous_commit and wal_level searched too",
            "false",
            False,
        ),
        Key(
            "enqueue",
            "enqueue",
            "configurations tried first",
            '[{shared_buffers = "1GB"}]',
            default_doc="none",
        ),
        Key(
            "knobs",
            "knobs",
            "the settings searched: a range {min, max, log} or a list of "
            "choices each; none: the version's default knob set (memory, WAL and checkpoints, "
            "background writer, I/O)",
            'shared_buffers = {min = "128MB", max = "4GB", log = true}\n'
            "checkpoint_completion_target = {min = 0.5, max = 0.95}\n"
            'wal_compression = ["off", "lz4"]',
            default_doc="the version's default set",
            subtable=True,
        ),
    ),
)
TUNE_TABLES = (TUNE,)
TUNE_KEYS = {k.name for k in TUNE.keys}
KNOB_KEYS = {"min", "max", "log"}  # a range knob's (the "knobs" shape)
