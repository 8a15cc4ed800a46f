"""``[profile]``: CPU profiles of measured phases (``pglab.profile``), checked as the other
tables are (every problem of the file in one message). The table alone turns profiling on."""

from __future__ import annotations

from typing import Any

from pglab.campaign import schema
from pglab.campaign.checks import Problems, get
from pglab.campaign.spec import ProfileSpec


def profile(table: dict[str, Any], present: bool, p: Problems) -> ProfileSpec:
    where = "[profile]"
    p.unknown_keys(where, table, schema.PROFILE_KEYS)
    spec = ProfileSpec(enabled=get(table, "enabled", bool, present, p, where))
    if "frequency" not in table:
        return spec
    low, high = schema.bounds(schema.PROFILE, "frequency")
    val = table["frequency"]
    if isinstance(val, bool) or not isinstance(val, int) or not low <= val <= high:
        p.add(where, f"frequency = {val!r}: expected a whole number of samples a second from "
              f"{low:g} to {high:g} (perf -F; 99 is the usual, off the timer's beat)")  # fmt: skip
        return spec
    return ProfileSpec(enabled=spec.enabled, frequency=val)
