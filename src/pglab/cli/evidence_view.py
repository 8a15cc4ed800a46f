"""Why it changed, printed: the top items of each comparison's evidence (``analysis.evidence``),
as ``pglab compare`` and ``pglab show`` print them."""

from __future__ import annotations

from rich.markup import escape

from pglab.analysis import evidence
from pglab.cli.common import console


def print_evidence(why: list[tuple[str, evidence.Evidence]], titled: bool) -> None:
    """The first ``evidence.TOP`` items of each comparison, then what its runs could not
    measure; ``titled``: name each one (several comparisons)."""
    for title, items in why:
        console.print(
            f"[bold]why it changed{escape(f' ({title})' if titled else '')}[/]: "
            "what moved beyond its noise (95% CI), first a rise from outside the "
            "run, then the most moved relative to its size",
            soft_wrap=True,
        )
        for item in items[: evidence.TOP]:
            console.print(f"  {item.text}", markup=False, soft_wrap=True)
        if len(items) > evidence.TOP:
            console.print(f"  … and {len(items) - evidence.TOP} more (compare --json: all)")
        for note in items.notes:
            console.print(f"  {note}", markup=False, soft_wrap=True)
