"""What the CPU profiles say, printed: a run's or a point's hot functions (``pglab show ID
--profile``) and the differential of two points (``pglab compare``)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

from rich.markup import escape
from rich.table import Table

from pglab.analysis import profiles
from pglab.cli.common import console
from pglab.rows import StoredRun

DEFAULT_TOP = 10
OTHERS_TOP = 3  # rising and falling functions of each kind after the first in a differential
NOT_PROFILED = (
    "no CPU profile stored: run with --profile (or [profile] in the campaign file) to record one"
)


def _ci(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:.1f}, {high:.1f}]"


def print_hot(title: str, runs: Sequence[StoredRun], top: int = DEFAULT_TOP) -> bool:
    """The top functions of ``runs`` (one run, or a point's repeats) per process kind, and
    per measured phase when more than one was profiled; False when none was profiled."""
    phases = profiles.profiled_phases(runs)
    if not phases:
        return False
    for phase in phases if len(phases) > 1 else [None]:
        rows = profiles.hot_functions(runs, phase=phase)
        thin = profiles.thin_kinds(runs, phase)
        rough = len(thin) == len({r.process for r in rows})  # every kind below the floor
        shown = [
            r
            for kind, group in groupby(rows, key=lambda r: r.process)
            for r in [r for r in group if rough or not r.below_floor][:top]
        ]
        _print_functions(
            title if phase is None else f"{title}, phase {phase!r}",
            shown,
            rows[0].runs if rows else 0,
        )
        if rough:
            console.print(
                f"every process kind has fewer than {profiles.MIN_KIND_SAMPLES} samples: these "
                "shares are rough (a longer phase or a higher [profile] frequency gives more)",
                markup=False,
                soft_wrap=True,
            )
        else:
            _print_thin(thin)
    for run in runs[:1]:
        for note in profiles.notes(run):
            console.print(f"note: {note}", markup=False, soft_wrap=True)
    return True


def _print_thin(kinds: Sequence[tuple[str, int]]) -> None:
    """The process kinds left out for their few samples, with how many they had."""
    if kinds:
        said = ", ".join(f"{k} ({n:,})" for k, n in kinds)
        console.print(
            f"not shown, fewer than {profiles.MIN_KIND_SAMPLES} samples (their shares "
            f"would be noise): {said}",
            markup=False,
            soft_wrap=True,
        )


def _print_functions(title: str, rows: Sequence[profiles.Function], n: int) -> None:
    """A heading, then a table per process kind of ``rows`` (intervals from ``n`` = 2 runs
    on)."""
    console.print(
        f"[bold]{escape(title)}[/]: hot functions by CPU samples"
        + (f", mean of {n} runs with 95% intervals" if n > 1 else ""),
        soft_wrap=True,
    )
    for kind, group in groupby(rows, key=lambda r: r.process):
        t = Table(title=kind, title_justify="left", box=None, pad_edge=False)
        t.add_column("function")
        for name in (
            ("self %", "95% CI", "inclusive %", "95% CI") if n > 1 else ("self %", "inclusive %")
        ):
            t.add_column(name, justify="right")
        t.add_column("samples", justify="right")
        for r in group:
            cells = (
                [
                    f"{r.self_pct:.1f}",
                    _ci(r.self_low, r.self_high),
                    f"{r.incl_pct:.1f}",
                    _ci(r.incl_low, r.incl_high),
                ]
                if n > 1
                else [f"{r.self_pct:.1f}", f"{r.incl_pct:.1f}"]
            )
            t.add_row(escape(r.function), *cells, f"{r.samples:,}")
        console.print(t)


def print_changes(title: str, changes: Sequence[profiles.Change], top: int = DEFAULT_TOP) -> None:
    """Kind by kind (the backend first), the functions whose self share rose most, then those
    that fell most (B against A): ``top`` of the first kind's, ``OTHERS_TOP`` of the others';
    none below the sample floors, the kinds left out named."""
    if not changes:
        return
    rows: list[profiles.Change] = []
    thin: list[str] = []
    for kind, group in groupby(changes, key=lambda c: c.process):
        mine = list(group)
        kept = [c for c in mine if not c.below_floor]
        if min(mine[0].kind_a, mine[0].kind_b) < profiles.MIN_KIND_SAMPLES:
            thin.append(f"{kind} (A {mine[0].kind_a:,}, B {mine[0].kind_b:,})")
            continue
        n = top if not rows else min(top, OTHERS_TOP)
        rows += [c for c in kept if c.delta > 0][:n]
        rows += [c for c in reversed(kept) if c.delta < 0][:n]
    console.print(
        f"[bold]CPU profile differential[/], {escape(title)}: the functions whose share "
        "of their kind's samples changed most (self %, B − A)",
        soft_wrap=True,
    )
    t = Table(box=None, pad_edge=False)
    for name, justify in (
        ("process", "left"),
        ("function", "left"),
        ("A %", "right"),
        ("B %", "right"),
        ("Δ points", "right"),
        ("95% CI", "right"),
        ("", "left"),
    ):
        t.add_column(name, justify=justify)  # type: ignore[arg-type]
    for c in rows:
        t.add_row(
            escape(c.process),
            escape(c.function),
            f"{c.base_pct:.1f}",
            f"{c.other_pct:.1f}",
            f"{c.delta:+.1f}",
            _ci(c.low, c.high),
            "clear" if c.clear else "",
        )
    console.print(t)
    if thin:
        console.print(
            f"not compared, fewer than {profiles.MIN_KIND_SAMPLES} samples on a side (their "
            f"shares would be noise): {', '.join(thin)}",
            markup=False,
            soft_wrap=True,
        )


def print_summary(run: StoredRun) -> None:
    """One line of a run's CPU profile for ``pglab show RUN`` (nothing when not profiled)."""
    stacks = profiles.run_stacks(run)
    if not stacks:
        return
    by_kind = sorted(((sum(c.values()), k) for k, c in stacks.items()), reverse=True)
    phases = profiles.profiled_phases([run])
    each = (
        (
            f" in {len(phases)} measured phases; `pglab show {run.id} --profile` for each "
            "one's hot functions"
        )
        if len(phases) > 1
        else (f"; `pglab show {run.id} --profile` for its hot functions")
    )
    console.print(
        "CPU profile: samples by process: " + ", ".join(f"{k} {n:,}" for n, k in by_kind) + each,
        markup=False,
        soft_wrap=True,
    )
    for note in profiles.notes(run):
        console.print(f"  note: {note}", markup=False, soft_wrap=True)
