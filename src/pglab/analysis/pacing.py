"""What a run of terminals that think (kit = "tpcc" with ``pacing``) says beside its figures:
the transaction types whose 90th percentile response time passed clause 5.2.5.3's limit (a
warning, by name), and a point's figures against the terminals' bound (``pglab show``'s
table of paced points). Pure functions on a run's stored metrics
(``workloads/kits/pacing_metrics.py``)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pglab.analysis.notice_kinds import NoticeKind
from pglab.rows import RunRow
from pglab.workloads.kits.work.kits import TRANSACTION_TYPES
from pglab.workloads.kits.work.pacing import RESPONSE_LIMIT_S

KIND: NoticeKind = "response-time"


def over_limit(metrics: Mapping[str, float]) -> list[tuple[str, float, float]]:
    """(type, its 90th percentile ms, the limit ms) of each type over clause 5.2.5.3's limit."""
    out = []
    for kind, limit_s in RESPONSE_LIMIT_S.items():
        got = metrics.get(f"rt90_{kind}_ms")
        if got is not None and got > limit_s * 1000:
            out.append((kind, got, limit_s * 1000))
    return out


def warnings(metrics: Mapping[str, float]) -> list[tuple[NoticeKind, str]]:
    """(kind, text) of a run whose types' 90th percentiles broke clause 5.2.5.3."""
    broken = over_limit(metrics)
    if not broken:
        return []
    said = ", ".join(
        f"{TRANSACTION_TYPES.get(k, k)} {ms:,.0f} ms (at most {limit:,.0f})"
        for k, ms, limit in broken
    )
    return [
        (
            KIND,
            (
                f"90th percentile response time over TPC-C clause 5.2.5.3's limit: {said}: the "
                "server did not keep up with its terminals, so this NOPM would not be reported; "
                "fewer warehouses, or find what is slow (`pglab show RUN_ID`)"
            ),
        )
    ]


def p90_columns(metrics: Sequence[Mapping[str, float]]) -> list[str]:
    """The types with a 90th percentile in any of ``metrics``, in the kit's order."""
    return [k for k in RESPONSE_LIMIT_S if any(f"rt90_{k}_ms" in m for m in metrics)]


@dataclass(frozen=True)
class PacedPoint:
    """A point of paced terminals over its runs: medians of its NOPM, of the terminals' bound
    and of each type's 90th percentile response time (ms)."""

    point: str  # its label
    runs: int
    nopm: float | None
    bound: float | None  # None: think_time 0, nothing paces
    p90_ms: dict[str, float]

    @property
    def of_bound_pct(self) -> float | None:
        return None if self.nopm is None or not self.bound else 100 * self.nopm / self.bound


def paced_points(runs: Sequence[RunRow]) -> list[PacedPoint]:
    """The points whose runs were paced (their stored ``rt90_*``/``nopm_bound``), in order."""
    by_point: dict[str, list[RunRow]] = {}
    for r in runs:
        if r.ok and any(k == "nopm_bound" or k.startswith("rt90_") for k in r.metrics):
            by_point.setdefault(r.label, []).append(r)
    out = []
    for point, items in by_point.items():
        p90 = {
            k: _median([r.metrics.get(f"rt90_{k}_ms") for r in items])
            for k in p90_columns([r.metrics for r in items])
        }
        out.append(
            PacedPoint(
                point,
                len(items),
                _median([r.metrics.get("nopm") for r in items]),
                _median([r.metrics.get("nopm_bound") for r in items]),
                {k: v for k, v in p90.items() if v is not None},
            )
        )
    return out


def _median(values: Sequence[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return statistics.median(found) if found else None
