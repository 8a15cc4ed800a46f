"""The layout of a campaign file, declared once: every table and key with its type, allowed
values or range, default and meaning (``tables``; ``[tune]`` of a file for ``pglab tune`` in
``tune``).

Everything else that describes or checks the layout is derived from it: the checker of every
key's value (``campaign/declared.py``: type, choices, range, units, "did you mean" for an unknown
key), the JSON Schema ``pglab schema`` prints for editors (``campaign/json_schema.py``), the
layout ``pglab run --help`` shows and the table of the documentation's campaign file reference
(``layout``). The keys each kind of workload owns, what it refuses beside it and its ``[tune]``
objective are declared in its package (``workloads/KIND/work.py``, gathered by
``workloads/work.py``). Only the rules between keys are written by hand (``parse`` and the
modules it calls); ``tests/unit/test_schema.py`` and ``tests/unit/test_refusals.py`` check
that they and the JSON Schema accept and refuse the same documents.
"""

from pglab.campaign.schema.layout import (
    COMMENT_AT,
    TUNE_INTRO,
    WIDTH,
    default_text,
    docs_table,
    help_layout,
    type_text,
)
from pglab.campaign.schema.model import Key, Table, def_name, key
from pglab.campaign.schema.tables import *  # noqa: F403 (the tables and their key sets)
from pglab.campaign.schema.tables import BY_NAME, TABLES
from pglab.campaign.schema.tune import (
    DEFAULT_CONFIRM_REPEATS,
    DEFAULT_MEMORY_SHARE,
    DEFAULT_TRIALS,
    DISKS,
    KNOB_KEYS,
    OBJECTIVES,
    SAMPLERS,
    TUNE,
    TUNE_KEYS,
    TUNE_TABLES,
)
from pglab.campaign.shapes import SHAPES
from pglab.campaign.spec import TARGET_KINDS

__all__ = [
    "BY_NAME",
    "COMMENT_AT",
    "DEFAULT_CONFIRM_REPEATS",
    "DEFAULT_MEMORY_SHARE",
    "DEFAULT_TRIALS",
    "DISKS",
    "KNOB_KEYS",
    "OBJECTIVES",
    "SAMPLERS",
    "SHAPES",
    "TABLES",
    "TARGET_KINDS",
    "TUNE",
    "TUNE_INTRO",
    "TUNE_KEYS",
    "TUNE_TABLES",
    "WIDTH",
    "Key",
    "Table",
    "def_name",
    "default_text",
    "docs_table",
    "help_layout",
    "key",
    "type_text",
]
