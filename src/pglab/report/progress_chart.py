"""The first two panels of a point's chart when its run measured maintenance operations (no
TPS, no latency log): each operation's progress through its progress phases over time, and the
rate of each progress phase (MB/s of the blocks or bytes it counts), from the phases'
``progress.OPERATION`` tables; drawn as PNG (``pglab report --png``) or as numbers for the
page (``series``). The telemetry panels beneath are the usual ones.

A stored progress row is read once into a ``ProgressRow`` (its time, progress phase, share
done, rate and the rate's unit); the page's numbers are a ``ProgressLine`` per progress phase
(JSON in the page, ``browser.PointData["progress"]``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from pglab.analysis.tidy import measured_phases, table
from pglab.rows import PhaseRow, StoredRun
from pglab.workloads.maintenance.figures import OPERATION_KIND

if TYPE_CHECKING:
    from matplotlib.axes import Axes

BLOCK = 8192  # bytes of a block counted by the progress views (PostgreSQL's default)
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]


@dataclass(frozen=True, slots=True)
class ProgressRow:
    """A row of a phase's ``progress.OPERATION`` table (``maintenance.figures``), as drawn."""

    t: float  # epoch seconds
    phase: str  # the progress phase ("building index: scanning table")
    pct: float | None  # its share done, None when the view counts nothing for it
    rate: float | None = None  # blocks, bytes or tuples per second (tables before: absent)
    unit: str | None = None  # what ``rate`` counts: "blocks", "bytes", "tuples"

    @property
    def mb_s(self) -> float | None:
        """The rate in MB/s; None for a phase counted in tuples or without a rate."""
        if self.rate is None or self.unit not in ("blocks", "bytes"):
            return None
        return self.rate * (BLOCK if self.unit == "blocks" else 1) / 1e6


class ProgressLine(TypedDict):
    """A progress phase as the page draws it: its name, its share done over time and its rate
    in MB/s over time (each ``[xs, ys]``, seconds since the run's start)."""

    name: str
    pct: list[list[float]]
    rate: list[list[float]] | None


def is_operation_run(run: StoredRun) -> bool:
    """Whether the run's measured phases are maintenance operations."""
    idxs = measured_phases(run)
    return bool(idxs) and all(OPERATION_KIND in run.series.get(str(i), {}) for i in idxs)


def _progress(run: StoredRun, idx: int) -> tuple[str, list[ProgressRow]]:
    """The phase's operation and its progress rows (none: an empty list)."""
    kinds = run.series.get(str(idx), {})
    name = next((k for k in kinds if k.startswith("progress.")), "")
    tab = table(run, idx, name) if name else {"columns": [], "rows": []}
    rows = [dict(zip(tab["columns"], r, strict=False)) for r in tab["rows"]]
    return name.removeprefix("progress."), [
        ProgressRow(r["t"], r["phase"], r["pct"], r.get("rate"), r.get("unit")) for r in rows
    ]


def _stretches(rows: list[ProgressRow]) -> list[list[ProgressRow]]:
    """Runs of consecutive rows of one progress phase."""
    out: list[list[ProgressRow]] = []
    for row in rows:
        if not out or out[-1][0].phase != row.phase:
            out.append([])
        out[-1].append(row)
    return out


def _each_stretch(
    run: StoredRun,
) -> Iterator[tuple[PhaseRow, str, list[ProgressRow], str]]:
    """(phase row of the run, its operation, a stretch, its color) over the measured phases."""
    phases = {p.idx: p for p in run.phases}
    n = 0
    for idx in measured_phases(run):
        operation, rows = _progress(run, idx)
        for stretch in _stretches(rows):
            yield phases[idx], operation, stretch, COLORS[n % len(COLORS)]
            n += 1


def panel_progress(ax: Axes, run: StoredRun, t0: float) -> int:
    """Each measured operation's share done over time, a line per progress phase (its name at
    its start), the operations' starts dotted; the rows drawn."""
    drawn = 0
    for stretch_of in _each_stretch(run):
        _, _, stretch, color = stretch_of
        pts = [(r.t - t0, r.pct) for r in stretch if r.pct is not None]
        if pts:
            ax.plot(*zip(*pts, strict=True), color=color, lw=1.2, marker=".", ms=3)
            ax.text(*pts[0], f" {stretch[0].phase}", fontsize="xx-small", color="#333", va="bottom")
            drawn += len(pts)
    for ph in (p for p in run.phases if p.idx in measured_phases(run)):
        operation, _ = _progress(run, ph.idx)
        ax.axvline(ph.started_at - t0, color="#888", lw=0.6, ls=":")
        ax.text(
            ph.started_at - t0,
            1.0,
            f" {ph.name} ({operation})",
            rotation=90,
            va="top",
            fontsize="xx-small",
            color="#555",
            transform=ax.get_xaxis_transform(),
        )
    ax.set_ylim(0, 105)
    ax.set_ylabel("% of the progress phase")
    ax.set_title("operations' progress phases (pg_stat_progress_*)", fontsize="medium")
    return drawn


def panel_rate(ax: Axes, run: StoredRun, t0: float) -> int:
    """The rate of each progress phase that counts blocks or bytes, in MB/s, in the colour of
    its line in ``panel_progress``; the rows drawn."""
    drawn = 0
    for _, _, stretch, color in _each_stretch(run):
        pts = [(r.t - t0, r.mb_s) for r in stretch if r.mb_s is not None]
        if pts:
            ax.plot(*zip(*pts, strict=True), color=color, lw=1, marker=".", ms=3)
            drawn += len(pts)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("MB/s")
    ax.set_title("rate of each progress phase so far", fontsize="medium")
    return drawn


def series(run: StoredRun, t0: float) -> list[ProgressLine]:
    """The panels' lines as plain numbers, for the page to draw: per progress phase (in
    order), its name ("create_index: building index: scanning table"), its share done over
    time and its rate in MB/s (None for a phase counted in tuples)."""
    out = []
    for _, operation, stretch, _ in _each_stretch(run):
        pct = [(r.t - t0, r.pct) for r in stretch if r.pct is not None]
        if not pct:
            continue
        rate = [(r.t - t0, r.mb_s) for r in stretch if r.mb_s is not None]
        name = re.sub(r"[<>&]", "", f"{operation}: {stretch[0].phase}")[:60]
        out.append(ProgressLine(name=name, pct=_xy(pct, 1), rate=_xy(rate, 1) if rate else None))
    return out


def _xy(pts: list[tuple[float, float]], digits: int) -> list[list[float]]:
    return [[round(x, 2) for x, _ in pts], [round(y, digits) for _, y in pts]]
