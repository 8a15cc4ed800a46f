"""What a campaign asks: which point each point is compared with (its **reference**).

With several variants of one workload, each point is compared with the first variant's point
(the baseline) at the same matrix coordinates. A campaign of one variant, or whose variants are
different workloads, asks along its compared axes (``is_question``: the server's settings, the
OS's but the CPUs, the storage, an operation's options): each point against the point at those
axes' first values, the other axes the same. The load's shape (clients, scale, duration…) is a
condition, never a question. ``[analysis] reference = { variant = "NAME" }`` or ``{ AXIS =
value }`` names another reference (``resolve``).

Plain functions on a point's key, variant and coordinates: the plan's rounds of ``repeats =
"auto"`` (``planning.rounds``) ask them of the parsed campaign, the analysis
(``analysis.points``) of the stored one, so both judge the same comparisons.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
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
        at = {
            k: (based.get(k, text(v)) if baseline is None else text(v)) for k, v in coords.items()
        }
        return (
            (variant if baseline is None else "")
            + " "
            + " ".join(f"{k}={v}" for k, v in at.items())
        )

    refs = {key for key, variant, coords in points if is_ref(variant, coords)}
    where = {ref_key(v, c): key for key, v, c in points if key in refs}
    found = [
        (where[ref_key(v, c)], key, ref_key(v, c))
        for key, v, c in points
        if key not in refs and ref_key(v, c) in where
    ]
    return refs, found


def first_values(matrix: Sequence[tuple[str, Sequence[Any]]]) -> dict[str, Any]:
    """Each compared axis (``is_question``) with several values, at its first value: a parsed
    campaign's ``matrix`` (axis name, values)."""
    return {k: vals[0] for k, vals in matrix if is_question(k) and len(vals) > 1}


def setting_text(value: Any) -> str:
    """A setting's value as the server says it (a TOML boolean as "on"/"off")."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def value_text(axis: str, value: Any) -> str:
    """A value of ``axis`` as its points are labelled (``text``; a setting's boolean "on")."""
    return setting_text(value) if axis.startswith("settings.") else text(value)


def axis_of(key: str, axes: Collection[str]) -> str | None:
    """The axis a ``reference`` key names: its own name (``settings.work_mem``, ``storage``),
    or a setting's or an OS key's without its prefix (``work_mem``); None: no such axis."""
    return next((a for a in (key, f"settings.{key}", f"os.{key}") if a in axes), None)


def axis_beside_variants(axes: Mapping[str, str], variants: Sequence[str]) -> str:
    """Why ``[analysis] reference`` may not name an axis of a file whose variants (of one
    workload) are its question: each point is compared with the reference variant's point at
    the same matrix coordinates, so an axis's value would be ignored."""
    named = ", ".join(f"{k.split('.', 1)[-1]} = {v!r}" for k, v in axes.items())
    return (
        f"reference: {named} names an axis value, but the file's variants are its question "
        f"({', '.join(variants)}): each point is compared with the reference variant's at the "
        "same matrix coordinates, never along an axis; name a variant (reference = { variant "
        '= "NAME" }), or keep one variant to compare along the axis'
    )


def resolve(
    raw: Mapping[str, Any], variants: Sequence[str], axes: Mapping[str, Sequence[Any]]
) -> tuple[str | None, dict[str, str], list[str]]:
    """``[analysis] reference``: (the reference variant or None, each named axis's reference
    value as its points write it, the problems: a variant or axis the file does not have, an
    axis that is the load's shape, a value not among the axis's)."""
    variant: str | None = None
    found: dict[str, str] = {}
    problems: list[str] = []
    for key, value in raw.items():
        if key == "variant":
            if value in variants:
                variant = str(value)
            else:
                problems.append(
                    f"reference: variant = {value!r} is not a variant of the file "
                    f"({', '.join(variants) or 'it has none'})"
                )
            continue
        axis = axis_of(key, axes)
        if axis is None:
            problems.append(
                f"reference: {key} is not a [matrix] axis of the file "
                f"({', '.join(axes) or 'it has none'})"
            )
        elif not is_question(axis):
            problems.append(
                f"reference: {key} is the load's shape, never compared along (the "
                "compared axes: settings, os but the CPUs, storage, wal_storage, "
                "parallel, jobs)"
            )
        elif (said := value_text(axis, value)) not in (
            known := [value_text(axis, v) for v in axes[axis]]
        ):
            problems.append(
                f"reference: {key} = {value!r} is not one of the axis's values ({', '.join(known)})"
            )
        else:
            found[axis] = said
    return variant, found, problems
