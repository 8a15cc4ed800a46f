"""Amounts as a person reads them, written once for every stage: sizes in binary units (the
ones PostgreSQL's own settings use: ``128 MiB`` for shared_buffers = 128MB).

Parsing a setting's amount with its unit is ``postgres/settings.in_bytes``; durations are still
``run/capacity.duration_text`` (ceil, seconds kept past an hour) and ``cli/fmt.duration``
(rounded, none past an hour): one of them for both is left to do, as it changes printed output.
"""

from __future__ import annotations


def size_text(n: float | None) -> str:
    """``1.5 GiB``, ``128 MiB``, ``512 B``; ``?`` for an unknown size."""
    if n is None:
        return "?"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}".replace(".0 ", " ")
    return f"{n:.0f} B"
