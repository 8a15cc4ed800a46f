"""``[profile]``: CPU profiles of measured phases (``pglab.profile``), checked as the other
tables are (every problem of the file in one message). The table alone turns profiling on."""

from __future__ import annotations

from pglab.campaign import declared, schema
from pglab.campaign.checks import Problems
from pglab.campaign.spec import ProfileSpec
from pglab.jsonish import TomlTable


def profile(table: TomlTable, present: bool, p: Problems) -> ProfileSpec:
    found = declared.check(schema.PROFILE, table, p, "[profile]", allowed=schema.PROFILE_KEYS)
    return ProfileSpec(**{"enabled": present, **found})
