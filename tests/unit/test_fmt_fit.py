"""A table of figures under long point names (a TPC-H campaign's per-query seconds, its points
named by two settings) fits the terminal: the figures' headers fold inside their words, and the
labels' column keeps its width (rich, left to squeeze it, took it to nothing)."""

from __future__ import annotations

import io

from rich.console import Console

from pglab.cli import fmt

POINTS = [f"work_mem={w} max_parallel_workers_per_gather={p} s"
          for w in ("4MB", "256MB") for p in (0, 2)]  # fmt: skip


def test_long_headers_over_figures_fold_and_the_labels_stay() -> None:
    columns: list[fmt.Column] = [("query", "left", [f"Q{i}" for i in range(1, 23)])]
    columns += [(name, "right", [f"{i * 0.37:.3f}" for i in range(1, 23)]) for name in POINTS]
    for width in (80, 100):
        out = io.StringIO()
        Console(file=out, width=width, color_system=None).print(fmt.table("per query", columns,
                                                                          width))  # fmt: skip
        lines = out.getvalue().splitlines()
        assert max(len(line) for line in lines) <= width
        body = [line for line in lines if line.startswith("│")]
        assert [line.split("│")[1].strip() for line in body] == [f"Q{i}" for i in range(1, 23)]
        assert "8.140" in body[-1]  # every figure whole: 22 × 0.37
