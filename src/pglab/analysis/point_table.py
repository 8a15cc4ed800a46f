"""The points' table as exports write it: one row per point, its figures and verdict."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pglab.analysis.points import PointRow

POINT_COLUMNS = (
    "campaign",
    "point",
    "variant",
    "coords",
    "runs",
    "failed",
    "tps_median",
    "tps_min",
    "tps_max",
    "cv_pct",
    "ci_low",
    "ci_high",
    "baseline",
    "delta_pct",
    "delta_ci_low",
    "delta_ci_high",
    "p_value",
    "p_holm",
    "verdict",
    "method",
    "equivalence_pct",
    "effect_pct",
    "detectable_pct",
    "runs_needed",
    "noise_pct",
    "reason",
)


def points_table(campaign: str, rows: Sequence[PointRow]) -> list[list[Any]]:
    """``pglab export --by point``: a row per point (``POINT_COLUMNS``) as ``pglab show`` has
    it: its TPS over the repeats and its comparison with the baseline (empty for the baseline
    and for a campaign of one variant)."""
    out = []
    for pt in rows:
        c = pt.comparison
        compared = (
            [
                c.delta_pct,
                c.ci_low,
                c.ci_high,
                c.p_value,
                c.p_holm,
                c.verdict,
                c.method,
                c.equivalence_pct,
                c.effect_pct,
                c.detectable_pct,
                c.runs_needed,
                c.noise_pct,
                c.reason or None,
            ]
            if c is not None
            else [None] * 13
        )
        out.append(
            [
                campaign,
                pt.point,
                pt.variant,
                pt.coords,
                pt.runs,
                pt.failed,
                pt.tps_median,
                pt.tps_min,
                pt.tps_max,
                pt.cv_pct,
                *(pt.ci or (None, None)),
                pt.is_base,
                *compared,
            ]
        )
    return out
