"""The live view of a running campaign: one panel, drawn by ``pglab run`` on a terminal and by
``pglab watch`` from another, from the same ``LiveState`` (``run/live.py``).

    ╭─ pglab · demo · run 3/8: fpw=on c=4 #2 ───────────────────────────────────────╮
    │ TPS        ▆▇▇▆▇█▇▆▅▃▄▆▇▇▆▇██▇▆  1,234 now, 1,101–1,398                   │
    │ checkpoint ·········▲━━━━····  ▲ 06:40:12 time, 2.1 s                      │
    │ latency    ▁▁▂▁▁▃▅▂▁▁▁▁▁▁▁▂▁▁  3.21 ms avg                                 │
    │ waits      last 5 s: LWLock:WALWrite 32% · IO:WalSync 25%                    │
    │ campaign   ███████░░░░░░░░ 45% · 2 ok · 4m12s elapsed · ETA 3m40s            │
    ╰────────────────────────────── Ctrl-C stops the campaign ──────────────────────╯

Every column of the three series is one second (pgbench's progress lines), the newest on the
right: a checkpoint's ▲ and ━ stand under the seconds of TPS they overlap.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from rich.console import RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pglab.cli.common import console
from pglab.run.live import WINDOW_S, LiveState
from pglab.units import duration_text

BLOCKS = "▁▂▃▄▅▆▇█"
LABEL_W = 11  # "checkpoint " and the other row names
TEXT_W = 30  # what each series says after its sparkline
START, RUNNING, NONE = "▲", "━", "·"


def sparkline(values: Sequence[float | None], width: int) -> str:
    """The last ``width`` values as blocks from ▁ (zero) to █ (the largest shown); a missing
    value is a space. Right-aligned: fewer values leave the left blank."""
    shown = list(values)[-width:] if width > 0 else []
    top = max((v for v in shown if v is not None), default=0.0)
    out = []
    for v in shown:
        if v is None:
            out.append(" ")
        else:
            out.append(BLOCKS[min(len(BLOCKS) - 1, int(v / top * len(BLOCKS)))] if top else "▁")
    return " " * (width - len(out)) + "".join(out)


def checkpoint_marks(times: Sequence[float], checkpoints: Sequence[Sequence[Any]]) -> str:
    """One mark per second of ``times`` (when each progress line came, covering the second
    before it): ▲ where a checkpoint started, ━ while one ran, · otherwise."""
    marks = []
    for i, t in enumerate(times):
        before = times[i - 1] if i else t - 1.0
        mark = NONE
        for start, end, *_ in checkpoints:
            if start is not None and before < start <= t:
                mark = START
                break
            if (start is None or start <= before) and (end is None or end > before):
                mark = RUNNING
        marks.append(mark)
    return "".join(marks)


def _clock(t: float) -> str:
    return datetime.fromtimestamp(t).strftime("%H:%M:%S")


def checkpoint_text(checkpoints: Sequence[Sequence[Any]], log_read: bool = True) -> str:
    """The last checkpoint of the run, in a few words; ``log_read`` False: the telemetry runs
    but has no server log to find them in (a server pglab did not start)."""
    if not checkpoints:
        return "none in this run yet" if log_read else "no server log to read"
    start, end, reason = checkpoints[-1][:3]
    why = (reason or "").split(" ")[0]  # time, wal, immediate…
    if start is None:
        return f"{START} ended {_clock(end)}"
    return f"{START} {_clock(start)} {why}, " + (
        "running" if end is None else f"{end - start:.1f} s"
    )


def waits_text(state: LiveState, width: int) -> str:
    """The top waits of the last seconds, as many as fit in ``width``."""
    if state.waits_at is None:
        return "not sampled now (telemetry samples measured phases)"
    if not state.waits:
        return "last 5 s: nothing waited on"
    shown = [f"{name} {pct:.0f}%" for name, pct, _ in state.waits]
    while len(shown) > 1 and len("last 5 s: " + " · ".join(shown)) > width:
        shown.pop()
    return "last 5 s: " + " · ".join(shown)


def campaign_text(state: LiveState, now: float, bar_w: int) -> str:
    share = min(state.done_s / state.total_s, 1.0) if state.total_s > 0 else 0.0
    filled = int(round(share * bar_w))
    words = [f"{share:.0%}", f"{state.ok} ok"]
    if state.failed:
        words.append(f"{state.failed} failed")
    words += [
        f"{duration_text(now - state.started)} elapsed",
        f"ETA {duration_text(state.eta_s(now))}",
    ]
    return "█" * filled + "░" * (bar_w - filled) + " " + " · ".join(words)


def title(state: LiveState) -> str:
    where = f"run {state.run_index}/{state.run_total}" if state.run_total else "starting"
    what = f": {state.label} #{state.repeat}" if state.label else ""
    phase = f" · {state.phase}" if state.phase else ""
    return f"pglab · {state.campaign} · {where}{what}{phase}"


def panel(state: LiveState, now: float, width: int, subtitle: str) -> RenderableType:
    """The panel for a terminal ``width`` columns wide."""
    # two columns short of the edge: a full line would make the ^C the terminal echoes wrap
    # onto a new line, and the view, redrawn from the wrong place, leave a line behind
    outer = max(min(width - 2, LABEL_W + WINDOW_S + TEXT_W + 6), 44)
    inner = outer - 4  # the frame and its padding
    spark_w = max(10, min(WINDOW_S, inner - LABEL_W - TEXT_W))
    samples = state.samples[-spark_w:]
    times = [s[0] for s in samples]
    tps = [s[1] for s in samples]
    lat = [s[2] for s in samples]
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=LABEL_W - 1, style="bold")
    grid.add_column()
    if samples:
        tps_words = f"{tps[-1]:,.0f} now, {min(tps):,.0f}–{max(tps):,.0f}"
        lat_now = next((v for v in reversed(lat) if v is not None), None)
        lat_words = "–" if lat_now is None else f"{lat_now:,.2f} ms avg"
        pad = " " * (spark_w - len(samples))
        marks = pad + checkpoint_marks(times, state.checkpoints)
        grid.add_row("TPS", Text(f"{sparkline(tps, spark_w)}  {tps_words}", style="green"))
        said = checkpoint_text(state.checkpoints, state.log_read or state.waits_at is None)
        grid.add_row("checkpoint", Text(f"{marks}  {said}"))
        grid.add_row("latency", Text(f"{sparkline(lat, spark_w)}  {lat_words}", style="cyan"))
    elif not state.live_tps:
        grid.add_row("TPS", Text("none live: progress = false, read after the phase"))
        grid.add_row("checkpoint", Text(checkpoint_text(state.checkpoints)))
    else:
        said = state.status or "preparing the run"
        grid.add_row("TPS", Text(f"waiting for pgbench's first second ({said})"))
        grid.add_row("checkpoint", Text(checkpoint_text(state.checkpoints)))
    grid.add_row("waits", Text(waits_text(state, inner - LABEL_W)))
    grid.add_row("campaign", Text(campaign_text(state, now, min(20, inner // 5))))
    return Panel(
        grid,
        title=escape(title(state)),
        title_align="left",
        subtitle=escape(subtitle),
        width=outer,
    )


def panel_of(state: Callable[[], LiveState], subtitle: str) -> Callable[[], RenderableType]:
    """What draws the panel of ``state()`` now, at the console's width (for a rich Live)."""
    return lambda: panel(state(), time.time(), console.width, subtitle)
