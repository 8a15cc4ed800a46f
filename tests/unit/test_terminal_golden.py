"""What a person sees in the terminal, as text at 80, 100 and 160 columns (golden files under
tests/data/golden/, rewritten with PGLAB_UPDATE_GOLDEN=1): `pglab show` of a synthetic campaign
with long variant names, over two axes. Beside the exact text, what must hold at every width: no
line wider than the terminal, nothing cut with "…", every number whole, every point's
differing axes in its label, what all points share said once."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from helpers.synthetic_runs import fill
from rich.console import Console

from pglab.cli import show
from pglab.store import open_store

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden"
VARIANTS = ("h2-stats-truth-baseline", "h2-stats-truth-tuned-checkpoints",
            "h2-stats-truth-wal-compression-lz4", "h2-stats-truth-huge-pages")  # fmt: skip


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("golden") / "r.sqlite"
    with open_store(str(path)) as store:
        fill(store, name="h2-stats-truth", variants=VARIANTS, clients=(1, 4), seconds=5,
             repeats=3)  # fmt: skip
    return path


def rendered(store_path: Path, width: int, monkeypatch) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, highlight=False,
                      color_system=None)  # fmt: skip
    monkeypatch.setattr(show, "console", console)
    with open_store(str(store_path)) as store:
        show.print_points(store, "h2-stats-truth")
    return console.export_text()


@pytest.mark.parametrize("width", [80, 100, 160])
def test_show_fits_the_terminal_and_cuts_nothing(store_path: Path, width: int, monkeypatch):
    text = rendered(store_path, width, monkeypatch)
    lines = text.splitlines()
    tables = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert tables and max(len(line) for line in tables) <= width
    assert "…" not in text
    # every number whole: each median TPS appears as printed, on one line
    medians = re.findall(r"\b\d{1,3}(?:,\d{3})+\.\d\b|\b\d{3}\.\d\b", text)
    assert len(medians) >= 16
    # labels say what differs (the variant without its shared prefix, script, clients)...
    for v in ("baseline", "tuned-checkpoints", "wal-compression-lz4", "huge-pages"):
        assert v in text
    assert "h2-stats-truth-tuned" not in text.split("warnings")[0]
    assert "c=1" in text and "c=4" in text and "script=select-only" in text
    assert "settings." not in text
    golden = GOLDEN / f"show_{width}.txt"
    if os.environ.get("PGLAB_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text(), f"differs from {golden}: PGLAB_UPDATE_GOLDEN=1 rewrites it"


def test_wide_keeps_one_table_on_one_line_per_point(store_path: Path, monkeypatch):
    console = Console(width=80, file=io.StringIO(), record=True, highlight=False,
                      color_system=None)  # fmt: skip
    monkeypatch.setattr(show, "console", console)
    with open_store(str(store_path)) as store:
        show.print_points(store, "h2-stats-truth", wide=True)
    text = console.export_text()
    assert "spread of the repeats" not in text  # the spread columns stay in the one table
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) == 16 + 8  # a line per point (and per pivot row): nothing wrapped


def _capture(width: int, monkeypatch, *modules) -> Console:
    console = Console(width=width, file=io.StringIO(), record=True, highlight=False,
                      color_system=None)  # fmt: skip
    for module in modules:
        monkeypatch.setattr(module, "console", console)
    return console


@pytest.fixture(scope="module")
def two_campaigns(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("golden2") / "r.sqlite"
    with open_store(str(path)) as store:
        for name, seed in (("h2-stats-truth", 1), ("h2-stats-truth-again", 2)):
            fill(store, name=name, variants=VARIANTS[:2], clients=(1, 4), seconds=5, repeats=3,
                 seed=seed)  # fmt: skip
    return path


@pytest.mark.parametrize("width", [80, 100, 160])
def test_ls_and_compare_fit_and_cut_nothing(two_campaigns: Path, width: int, monkeypatch):
    from pglab.cli import compare, ls
    from pglab.cli.common import Where

    console = _capture(width, monkeypatch, ls, compare)
    where = Where(store=str(two_campaigns))
    assert ls.run(where, "h2-stats-truth") == 0
    point = "h2-stats-truth:h2-stats-truth-{} script=tpcb-like clients=1"
    assert compare.run(where, point.format("baseline"), point.format("tuned-checkpoints")) == 0
    assert compare.run(where, "h2-stats-truth", "h2-stats-truth-again") == 0
    text = console.export_text()
    tables = [line for line in text.splitlines() if line[:1] in "┏┃┡│└"]
    assert max(len(line) for line in tables) <= width
    assert "…" not in text
    golden = GOLDEN / f"ls_compare_{width}.txt"
    if os.environ.get("PGLAB_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text(), f"differs from {golden}: PGLAB_UPDATE_GOLDEN=1 rewrites it"


@pytest.mark.parametrize(
    ("variants", "scripts", "rows"),
    [(("base",), ("select-only",), ["base"]),  # one axis, one variant: one row, not a diagonal
     (("base", "tuned"), ("select-only",), ["base", "tuned"]),
     (("base",), ("tpcb-like", "select-only"), ["script=tpcb-like", "script=select-only"])],
)  # fmt: skip
def test_the_clients_table_has_a_row_per_variant_and_other_axes(
    tmp_path: Path, monkeypatch, variants: tuple[str, ...], scripts: tuple[str, ...],
    rows: list[str],
) -> None:  # fmt: skip
    path = tmp_path / "r.sqlite"
    with open_store(str(path)) as store:
        fill(store, name="sweep", variants=variants, scripts=scripts, clients=(10, 500, 1500),
             seconds=5, repeats=2)  # fmt: skip
    console = _capture(100, monkeypatch, show)
    with open_store(str(path)) as store:
        show.print_points(store, "sweep")
    text = console.export_text()
    pivot = text.split("median TPS by clients")[1].split("└")[0]
    header = next(line for line in pivot.splitlines() if line.startswith("┃"))
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "point", "10 clients", "500 clients", "1500 clients"]  # fmt: skip
    body = [line for line in pivot.splitlines() if line.startswith("│")]
    assert [line.strip("│").split("│")[0].strip() for line in body] == rows
    assert all("–" not in line for line in body)  # every cell filled
    if rows == ["base"]:
        golden = GOLDEN / "show_clients_only_100.txt"
        if os.environ.get("PGLAB_UPDATE_GOLDEN"):
            golden.write_text(text)
        assert text == golden.read_text(), "PGLAB_UPDATE_GOLDEN=1 rewrites it"
