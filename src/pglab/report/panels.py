"""The panels of one run's chart: TPS, latency, waits, buffers, CPU and disk over its seconds."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pglab.report.series import RunSeries

if TYPE_CHECKING:
    from matplotlib.axes import Axes


TOP_WAITS = 7


PALETTE = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]


_TWINS: dict[int, Axes] = {}  # id(panel axes) -> its twin axes, made with the canvas


def _twin(ax: Axes) -> Axes:
    """The panel's twin axes (a second y scale on the right), shown."""
    twin = _TWINS[id(ax)]
    twin.set_visible(True)
    return twin


def _short(label: str, width: int = 48) -> str:
    label = re.sub(r"\s+", " ", label)
    return label if len(label) <= width else label[: width - 1] + "…"


def _mark_phases(s: RunSeries, ax: Axes, names: bool = False) -> None:
    """Dotted lines where measured phases start (and their names, on one panel)."""
    several = len({p.name for p in s.phases}) > 1
    for n, p in enumerate(s.phases):
        x = p.started_at - s.t0
        if n:
            ax.axvline(x, color="#888", lw=0.6, ls=":")
        if names and several:
            ax.text(
                x,
                1.0,
                f" {p.name}",
                transform=ax.get_xaxis_transform(),
                fontsize="xx-small",
                va="top",
                rotation=90,
                color="#555",
            )


def _missing(ax: Axes, s: RunSeries, title: str, why: str) -> None:
    s.missing.append(f"{title}: {why}")
    ax.set_title(title, fontsize="medium")
    ax.text(0.5, 0.5, why, ha="center", va="center", transform=ax.transAxes, color="#a00")
    ax.set_yticks([])


def _panel_tps(ax: Axes, s: RunSeries, others: list[RunSeries]) -> None:
    tps = s.column("progress", "tps")
    if tps is None:
        return _missing(ax, s, "TPS", "no per-second progress recorded")
    drawn = [xy for xy in (o.column("progress", "tps") for o in others) if xy is not None]
    for n, xy in enumerate(drawn):
        ax.plot(
            *xy, color="#aaa", lw=0.7, label=f"the other {len(drawn)} repeat(s)" if n == 0 else None
        )
    ax.plot(*tps, color=PALETTE[0], lw=1, label=f"run {s.run.id}")
    scripts = s.script_tps()
    for i, (name, xy) in enumerate(scripts.items()):
        ax.plot(
            *xy,
            color=PALETTE[(4, 1, 2, 5, 6, 8, 9)[i % 7]],
            lw=0.8,
            ls="--",
            label=_short(name, 32),
        )
    ax.set_ylabel("TPS" + (" (dashed: per script, from the log)" if scripts else ""))
    ax.set_ylim(bottom=0)
    spans = s.checkpoint_spans()
    for n, (start, end) in enumerate(spans):
        ax.axvspan(start, end, color="#d62728", alpha=0.12, label="checkpoint" if n == 0 else None)
    _mark_phases(s, ax, names=True)
    ax.legend(fontsize="x-small", loc="lower left")
    ax.set_title(f"TPS per second; {len(spans)} checkpoint(s) shaded", fontsize="medium")


def _panel_latency(ax: Axes, s: RunSeries) -> None:
    from matplotlib import ticker

    cols, rows = s.rows("latency")
    names = [c for c in ("p50_ms", "p95_ms", "p99_ms", "max_ms") if c in cols]
    if not rows or not names:
        return _missing(ax, s, "Latency percentiles", "no per-transaction latency log")
    for i, c in enumerate(names):
        ax.plot(
            [x for x, _ in rows],
            [r[cols[c]] for _, r in rows],
            lw=0.9,
            color=PALETTE[i],
            label=c.replace("_ms", ""),
        )
    ax.set_yscale("log")
    ax.yaxis.set_minor_locator(ticker.NullLocator())  # minor log ticks cost more than the data
    ax.set_ylabel("ms")
    ax.legend(fontsize="x-small", ncols=4, loc="upper left")
    ax.set_title("Latency percentiles per second", fontsize="medium")


def _panel_waits(ax: Axes, s: RunSeries) -> None:
    found = s.waits_stacked(TOP_WAITS)
    if found is None:
        return _missing(ax, s, "Wait events", "no wait event samples")
    xs, top, layers = found
    ax.stackplot(xs, layers, labels=top, colors=PALETTE[: len(top)], alpha=0.85, step="post")
    ax.set_ylabel("sessions (average per second)")
    ax.legend(fontsize="xx-small", loc="upper left", ncols=2)
    ax.set_title("Wait events of the active sessions (CPU:running = no wait)", fontsize="medium")


def _io_client_writes(cols: dict[str, int], r: list[Any]) -> bool:
    return bool(r[cols["backend_type"]] == "client backend" and r[cols["object"]] == "relation")


def _panel_buffers(ax: Axes, s: RunSeries) -> None:
    lines = {
        "checkpointer": s.column("pg.checkpointer", "buffers_written"),
        "bgwriter": s.column("pg.bgwriter", "buffers_clean"),
        "backends": s.summed("pg.io", "writes", _io_client_writes)
        or s.column("pg.bgwriter", "buffers_backend"),
    }
    wal = s.column("pg.wal", "wal_bytes")
    if not any(lines.values()) and wal is None:
        return _missing(ax, s, "Buffers and WAL", "no statistics samples")
    for i, (name, xy) in enumerate(lines.items()):
        if xy is not None:
            ax.plot(*xy, lw=0.9, color=PALETTE[i], label=f"written by {name}")
    ax.set_ylabel("buffers per second")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="x-small", loc="upper left")
    if wal is not None:
        twin = _twin(ax)
        twin.plot(wal[0], [b / 1e6 for b in wal[1]], color=PALETTE[4], lw=0.9, ls="--")
        twin.set_ylabel("WAL MB/s (dashed)", color=PALETTE[4])
        twin.set_ylim(bottom=0)
    ax.set_title("Buffers written (checkpointer, bgwriter, backends) and WAL", fontsize="medium")


def _panel_cpu(ax: Axes, s: RunSeries, pgbench: bool = True) -> None:
    cols, rows = s.rows("os.cpu")
    if not rows:
        return _missing(ax, s, "CPU", "no OS CPU samples")
    names = [c for c in ("user_pct", "system_pct", "iowait_pct", "steal_pct") if c in cols]
    xs = [x for x, _ in rows]
    ax.stackplot(
        xs,
        [[r[cols[c]] or 0 for _, r in rows] for c in names],
        labels=[c.replace("_pct", "") for c in names],
        colors=PALETTE[: len(names)],
        alpha=0.8,
    )
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of all CPUs")
    procs = s.column("os.procs", "pgbench_cpu_pct") if pgbench else None
    if procs is not None:
        cpus = s.run.fingerprint.get("cpus") or 1
        ax.plot(
            procs[0], [v / cpus for v in procs[1]], color="black", lw=1, ls="--", label="pgbench"
        )
    ax.legend(fontsize="x-small", loc="upper left", ncols=5)
    own = " and pgbench's own CPU (dashed)" if pgbench else ""
    ax.set_title(f"CPU (stacked){own}", fontsize="medium")


def _panel_disk(ax: Axes, s: RunSeries) -> None:
    read = s.summed("os.disk", "read_mb_s")
    write = s.summed("os.disk", "write_mb_s")
    dirty = s.column("os.mem", "dirty_mb")
    if read is None and write is None and dirty is None:
        return _missing(ax, s, "Disk and memory", "no OS disk or memory samples")
    if read is not None:
        ax.plot(*read, color=PALETTE[0], lw=0.9, label="read MB/s")
    if write is not None:
        ax.plot(*write, color=PALETTE[3], lw=0.9, label="write MB/s")
    ax.set_ylabel("MB/s (all disks)")
    ax.set_ylim(bottom=0)
    if read is None and write is None:  # a data directory on tmpfs: no block device to sample
        ax.text(
            0.5,
            0.5,
            "no disk samples (no block device under the data directory)",
            ha="center",
            va="center",
            transform=ax.transAxes,
            fontsize="small",
        )
    else:
        ax.legend(fontsize="x-small", loc="upper left")
    if dirty is not None:
        twin = _twin(ax)
        twin.plot(*dirty, color=PALETTE[2], lw=0.9, ls="--")
        twin.set_ylabel("dirty memory, MB (dashed)", color=PALETTE[2])
        twin.set_ylim(bottom=0)
    ax.set_title("Disk throughput and dirty page cache", fontsize="medium")
