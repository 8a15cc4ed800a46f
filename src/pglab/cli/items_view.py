"""The items runs name themselves (a replay's statement classes), as ``show`` and ``compare``
print them: a compared point's sentence ("on B (against A) your workload's statements take
−12.0% [−15.0, −9.0] − in total; 2 statement classes of 12 got slower, none faster"), then
the significant items ranked, each with its Δ% of time, its interval, its verdict and both
sides' median time (``analysis.named_items`` made all of it, words included)."""

from __future__ import annotations

from pglab.cli.common import console


def print_moved(sentence: str, lines: list[str], legend: str | None = None) -> None:
    """The sentence, then the items that moved, one a line; the legend after."""
    console.print(sentence, markup=False, soft_wrap=True)
    for line in lines:
        console.print(f"  {line}", markup=False, soft_wrap=True)
    if legend is not None:
        console.print(legend, markup=False, soft_wrap=True)
