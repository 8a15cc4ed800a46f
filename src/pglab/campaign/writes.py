"""Whether a phase writes, judged from what it runs: as its kind declares it
(``workloads/work.WRITES``: a kit by the kits' table, by its mode where one only reads; a load
generator by its test), else by its scripts: a built-in script by its name, a custom script by
its statements. What the text cannot tell (a custom script whose file is gone) is None: the
stored run's WAL says it then (``analysis/run_warnings.py``). A ``SELECT`` is taken for a read:
a custom script whose SELECT calls a function that writes is told by its WAL once it has run."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pglab.workloads.work import WRITES, stored_kind

WRITE_BUILTINS = ("tpcb-like", "simple-update")
READS = (
    "select",
    "begin",
    "start",
    "commit",
    "end",
    "rollback",
    "show",
    "set",
    "explain",
    "values",
    "table",
    "fetch",
    "declare",
    "close",
    "savepoint",
    "release",
    "prepare",
)
_WRITE_IN_WITH = re.compile(r"\b(insert|update|delete|merge)\b")
_LOCKING = re.compile(r"\bfor\s+(update|no\s+key\s+update|share|key\s+share)\b")


def phase_writes(phase: Mapping[str, Any]) -> bool | None:
    """Whether a phase (a ``PhaseSpec``'s identity, or as the store keeps it) writes: True,
    False, or None when its kind does not tell and its text cannot say."""
    declared = WRITES.get(stored_kind(phase))
    if declared is not None:
        return declared(phase)
    found = [script_writes(s) for s in phase.get("scripts") or [] if s.get("weight", 1)]
    if any(found):
        return True
    return None if None in found else False


def script_writes(script: Mapping[str, Any]) -> bool | None:
    if script.get("builtin"):
        return script["builtin"] in WRITE_BUILTINS
    try:
        text = Path(str(script.get("path"))).read_text()
    except OSError:
        return None
    return sql_writes(text)


def sql_writes(text: str) -> bool:
    """Whether a pgbench script's SQL writes: a statement other than a read (a SELECT without
    a locking clause, transaction control, SET, SHOW ...), or a WITH holding a write."""
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("\\")]
    sql = re.sub(r"--[^\n]*", "", "\n".join(lines)).lower()
    for statement in (s.strip() for s in sql.split(";")):
        if not statement:
            continue
        first = statement.split(None, 1)[0].strip("(")
        if first == "with" and _WRITE_IN_WITH.search(statement):
            return True
        if first not in (*READS, "with") or _LOCKING.search(statement):
            return True
    return False
