"""How numbers, sizes, times and comparisons read in the terminal: one place, so that every
command writes 11,257.3 tps and 1m05s the same way."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pglab.analysis.points import axis_name
from pglab.analysis.verdicts import Comparison
from pglab.campaign.spec import PhaseSpec
from pglab.workloads import workload_of
from pglab.workloads.work import OPERATION_OPTIONS, OperationWork

if TYPE_CHECKING:
    from rich.table import Table


def num(v: Any) -> str:
    return "–" if v is None else f"{v:,.3f}"


def short(v: Any) -> str:
    """A number as a person reads it: 11,257.3 / 0.0882 / 3."""
    if v is None:
        return "–"
    if isinstance(v, int) or float(v).is_integer():
        return f"{v:,.0f}"
    return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.3g}"


def when(ts: Any) -> str:
    if ts is None:
        return "–"
    try:
        return datetime.fromtimestamp(float(ts)).strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError):
        return str(ts)


def delta(c: Comparison | None, is_baseline: bool, incomparable: str = "") -> str:
    """ "-4.8% [-6.1, -3.5] −" style: Δ%, its 95% CI and the verdict (~ not significant and
    could have been, ? the runs could not tell); "not comparable" when the point's workload
    is not its reference's (``PointRow.incomparable``)."""
    if is_baseline:
        return "baseline"
    if incomparable:
        return "not comparable"
    if c is None:
        return "–"
    ci = f" [{c.ci_low:+.1f}, {c.ci_high:+.1f}]" if c.ci_low is not None else ""
    return f"{c.delta_pct:+.1f}%{ci} {c.verdict}"


def phase(ph: PhaseSpec) -> str:
    amount = f"{ph.duration}s" if ph.duration else f"{ph.transactions} tx"
    times = f" ×{ph.times}" if ph.times > 1 else ""
    work = ph.work
    if isinstance(work, OperationWork):  # its options as the campaign file gives them
        opts = {
            "dirty": work.dirty or None,
            "parallel": work.parallel,
            "freeze": work.freeze or None,
            "columns": ",".join(work.columns),
            "method": work.method,
            "jobs": work.jobs,
            "compress": None if work.compress else "off",
            "target": work.target,
        }
        amount = " ".join(
            f"{k}={opts[k]}" for k in OPERATION_OPTIONS[work.operation] if opts[k] is not None
        )
        return (
            f"{ph.name}: {work.operation} {amount}".rstrip()
            + f"{times}{'' if ph.measured else ' (unmeasured)'}"
        )
    if (said := workload_of(ph).said) is not None:  # as its kind lists it (its queries)
        return f"{ph.name}: {said(ph)}{times}" + ("" if ph.measured else " (unmeasured)")
    return (
        f"{ph.name}: {ph.script_label} c={ph.clients} {amount}{times}"
        f"{'' if ph.measured else ' (unmeasured)'}"
    )


def short_variants(variants: Sequence[str]) -> dict[str, str]:
    """Variant names without the prefix they all share, cut at a separator
    (``h2-stats-truth-baseline`` → ``baseline``); the names as they are when nothing is shared."""
    names = list(dict.fromkeys(variants))
    if len(names) < 2:
        return {v: v for v in names}
    prefix = os.path.commonprefix(names)
    cut = max(prefix.rfind(c) for c in "-_. ") + 1
    if cut <= 0 or any(len(v) <= cut for v in names):
        return {v: v for v in names}
    return {v: v[cut:] for v in names}


def point_labels(
    points: Sequence[tuple[str, str, Mapping[str, Any]]], unique: bool = True
) -> tuple[dict[str, str], str]:
    """Short labels for points given as (label, variant, axes): the variant (without the prefix
    all variants share) when there are several, then only the axes whose values differ
    (``fpw=on c=4``); and what every point shares, to say once above the table
    (``script=select-only``). With ``unique``, a label that would not be unique stays the full
    one."""
    variants = short_variants([v for _, v, _ in points])
    axes = list(dict.fromkeys(a for _, _, ax in points for a in ax))
    varying = [a for a in axes if len({str(ax.get(a)) for _, _, ax in points}) > 1]
    labels = {}
    for label, variant, ax in points:
        parts = [variants[variant]] if len(variants) > 1 else []
        parts += [f"{axis_name(a)}={ax[a]}" for a in varying if a in ax]
        labels[label] = " ".join(parts) or label
    if unique and len(set(labels.values())) < len(labels):
        labels = {label: label for label, _, _ in points}
    shared = [f"{axis_name(a)}={points[0][2][a]}" for a in axes if a not in varying]
    if len(variants) == 1 and points and points[0][2]:
        shared.insert(0, f"variant {points[0][1]}")
    return labels, ", ".join(shared)


def short_labels(labels: Sequence[str]) -> dict[str, str]:
    """Point labels as text, without the words every one of them has and without the prefix
    their first words (the variants) share; the labels as they are when that would make two
    the same."""
    words = [label.split() for label in labels]
    common = set.intersection(*(set(w) for w in words)) if words else set()
    firsts = short_variants([w[0] for w in words if w]) if len(set(labels)) > 1 else {}
    out = {}
    for label, ws in zip(labels, words, strict=True):
        kept = [firsts.get(w, w) if i == 0 else w for i, w in enumerate(ws) if w not in common]
        out[label] = " ".join(kept) or label
    if len(set(out.values())) < len(set(labels)):
        return {label: label for label in labels}
    return out


def tps(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f}"


Column = tuple[str, Any, list[str]]  # header, justification, cells


def _width(cells: list[str], header: str, whole: bool = False) -> int:
    """The width a column needs so that nothing is cut: its longest word (cells wrap at spaces
    only: a number, which has none, keeps its whole width), its header's longest word; with
    ``whole``, its longest cell on one line."""
    words = [w for c in cells for w in ([c] if whole else c.split())]
    return max([len(w) for w in words] + [len(w) for w in header.split()] + [1])


def fits(columns: Sequence[Column], width: int) -> bool:
    """Whether a table of these columns fits ``width`` with every cell but the labels (the first
    column) on one line: rich's heavy box takes 3 characters per column and 1 more."""
    need = sum(_width(cells, h, whole=i > 0) for i, (h, _, cells) in enumerate(columns))
    return need + 3 * len(columns) + 1 <= width


def widths(columns: Sequence[Column], width: int | None) -> list[int]:
    """Each column's width: its longest cell and header, the columns whose cells have spaces
    narrowed (the widest first, down to their longest word) until the table fits ``width``
    (None: no limit). A column without spaces (numbers) is never narrowed."""
    natural = [max([len(c) for c in cells] + [len(h)]) for h, _, cells in columns]
    out = list(natural)
    if width is None:
        return out
    room = width - 3 * len(columns) - 1
    # first down to the longest word; then, where words are longer than the room, text (never
    # a number) folds inside its words, down to a few characters
    text = [not all(_numeric(c) for c in cells) for _, _, cells in columns]
    for least in (
        [_width(cells, h) for h, _, cells in columns],
        [
            min(8, _width(cells, h)) if t else _width(cells, h)
            for (h, _, cells), t in zip(columns, text, strict=True)
        ],
        # last, a figure's header folds inside its words too (a point's long name over a
        # column of seconds), down to 12 characters or its widest figure: else rich squeezes
        # the table into the terminal itself, and the labels' column went to nothing
        [
            min(8, _width(cells, h)) if t else max(_width(cells, ""), min(12, _width(cells, h)))
            for (h, _, cells), t in zip(columns, text, strict=True)
        ],
    ):
        while sum(out) > room:
            shrinkable = [i for i in range(len(out)) if out[i] > least[i]]
            if not shrinkable:
                break  # as narrow as it gets: the terminal wraps the lines
            i = max(shrinkable, key=lambda k: out[k] - least[k])
            out[i] -= 1
    return out


def _numeric(cell: str) -> bool:
    """A figure (1,234.5; +9.8%; [-2.6, +7.2]; –), which is never folded."""
    return all(ch in "0123456789,.%+-–[] " for ch in cell)


def table(title: str, columns: Sequence[Column], width: int | None = None) -> Table:
    """A rich table whose cells are never cut with "…": a cell wraps only at its spaces, so a
    number keeps its whole width; ``width``: the width to fit (``widths``)."""
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=title)
    for (header, justify, _), w in zip(columns, widths(columns, width), strict=True):
        # wrapping on: a number has no space to wrap at and keeps its width (see widths), while
        # a header wraps at its spaces
        t.add_column(escape(header), justify=justify, overflow="fold", width=w)
    for row in zip(*(cells for _, _, cells in columns), strict=True):
        t.add_row(*(escape(c) for c in row))
    return t
