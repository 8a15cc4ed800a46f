"""What a campaign asks: which point each point is compared with (its **reference**).

With several variants of one workload, each point is compared with the first variant's point
(the baseline) at the same matrix coordinates. A campaign of one variant, or whose variants are
different workloads, asks along its compared axes (``is_question``: the server's settings, the
OS's but the CPUs, the storage, an operation's options): each point against the point at those
axes' first values, the other axes the same. The load's shape (clients, scale, duration…) is a
condition, never a question.

Plain functions on a point's key, variant and coordinates: the plan's rounds of ``repeats =
"auto"`` (``planning.rounds``) ask them of the parsed campaign, the analysis
(``analysis.points``) of the stored one, so both judge the same comparisons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# the [matrix] axes that are a campaign's question when the variants are not (each point is
# compared with the point at their first values, the other axes the same): the server's
# settings, the OS's (but the CPUs, a scan: analysis/cores), the storage, and a maintenance
# operation's options (parallel = [0, 1]: 1 against 0)
COMPARED_AXES = ("parallel", "jobs", "storage", "wal_storage")
SCANS = ("os.cpus", "os.client_cpus")


def is_question(axis: str) -> bool:
    """Whether a campaign whose variants are not its question compares its points along
    ``axis`` (a point's axis name: ``settings.NAME``, ``os.KEY``, ``parallel``…)."""
    return axis in COMPARED_AXES or (axis.startswith(("settings.", "os.")) and axis not in SCANS)


def text(value: Any) -> str:
    """An axis value as the points' labels write it, the form references are matched in."""
    return str(value)


def pairs(
    points: Sequence[tuple[str, str, Mapping[str, Any]]],
    baseline: str | None,
    axes: Mapping[str, Any],
) -> tuple[set[str], list[tuple[str, str, str]]]:
    """Of ``points`` (key, variant, coordinates): the references (the ``baseline`` variant's
    points; without one, those at the values of ``axes``), and each comparison: (the reference's
    key, the other point's key, where the reference is: the comparisons that share it)."""
    based = {k: text(v) for k, v in axes.items()}

    def is_ref(variant: str, coords: Mapping[str, Any]) -> bool:
        if baseline is not None:
            return variant == baseline
        return all(text(coords.get(k)) == v for k, v in based.items())

    def ref_key(variant: str, coords: Mapping[str, Any]) -> str:  # where its reference is
        at = {k: (based.get(k, text(v)) if baseline is None else text(v))
              for k, v in coords.items()}  # fmt: skip
        return (
            (variant if baseline is None else "")
            + " "
            + " ".join(f"{k}={v}" for k, v in at.items())
        )

    refs = {key for key, variant, coords in points if is_ref(variant, coords)}
    where = {ref_key(v, c): key for key, v, c in points if key in refs}
    found = [(where[ref_key(v, c)], key, ref_key(v, c)) for key, v, c in points
             if key not in refs and ref_key(v, c) in where]  # fmt: skip
    return refs, found


def first_values(matrix: Sequence[tuple[str, Sequence[Any]]]) -> dict[str, Any]:
    """Each compared axis (``is_question``) with several values, at its first value: a parsed
    campaign's ``matrix`` (axis name, values)."""
    return {k: vals[0] for k, vals in matrix if is_question(k) and len(vals) > 1}
