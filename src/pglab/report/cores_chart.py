"""The right panel of the *TPS against cores* chart (an ``os.cpus`` axis, ``analysis/cores``):
what the server's sessions waited on at each core count, the top wait events of each point's
median run as stacked shares of its sampled waits (the events most present over these points,
the rest as "other"), so that a curve that flattens can be read beside what it waits on."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from pglab.report.model import Point

EVENTS = 6  # drawn by name; the rest is "other"


def panel_waits(ax: Axes, pts: list[Point], palette: list[str]) -> None:
    """Stacked bars of ``pts``' top waits (% of sampled waits), a bar per point."""
    shares = [
        {name: pct for name, pct, _ in (pt.telemetry.top_waits if pt.telemetry else [])}
        for pt in pts
    ]
    total: Counter[str] = Counter()
    for s in shares:
        total.update(s)
    names = [n for n, _ in total.most_common(EVENTS)]
    xs = list(range(len(pts)))
    bottom = [0.0] * len(pts)
    for i, name in enumerate(names):
        heights = [s.get(name, 0.0) for s in shares]
        ax.bar(xs, heights, bottom=bottom, label=name, color=palette[i % len(palette)])
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    other = [max(0.0, 100.0 - b) if s else 0.0 for b, s in zip(bottom, shares, strict=True)]
    ax.bar(xs, other, bottom=bottom, label="other", color="#cccccc")
    ticks = [
        f"{pt.on_cores.series}\n{pt.on_cores.cpus} core{'s' if pt.on_cores.cpus > 1 else ''}"
        if pt.on_cores
        else pt.label
        for pt in pts
    ]
    ax.set_xticks(xs, ticks, fontsize="small")
    ax.set_ylabel("% of the sampled waits (the point's median run)")
    ax.set_ylim(0, 100)
    ax.set_title("Top waits against cores")
    ax.legend(fontsize="small")
