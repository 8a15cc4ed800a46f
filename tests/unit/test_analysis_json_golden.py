"""``pglab compare`` and ``pglab show --json`` print what the version before the analysis
stage's typed results printed (issue 32: ``analysis/comparisons.py``'s TypedDicts, typed tidy
rows): the same text, and the same JSON, key for key in the same order.

The golden files ``tests/data/golden/before_shape_{compare,show_points}*`` were printed by main
at 56a209c (before the change) of a copy of ``tests/data/stores/before-shape.sqlite``
(``tests/data/stores/README.md`` says how). Floats are compared to 12 significant digits (the
last digits of a p-value may move with scipy's version); everything else exactly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
STORE = DATA / "stores" / "before-shape.sqlite"
POINT_A, POINT_B = "before-shape:base c=1", "before-shape:tuned c=1"

SEPARATOR = "=== next command ==="
COMMANDS = {  # golden file -> the command that printed it
    "before_shape_compare_runs.txt": ["compare", "1", "2"],
    "before_shape_compare_runs.json": ["compare", "1", "2", "--json"],
    "before_shape_compare_points.txt": ["compare", POINT_A, POINT_B],
    "before_shape_compare_points.json": ["compare", POINT_A, POINT_B, "--json"],
    "before_shape_compare_campaigns.json": ["compare", "before-shape", "before-shape", "--json"],
    "before_shape_show_points.json": ["show", "before-shape", "--json"],
}
SCRIPT = """
from pglab.cli import main
for argv in {commands!r}:
    assert main(argv) == 0, argv
    print({separator!r}, flush=True)
"""


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What this version prints of a copy of the store, by golden file name (one Python)."""
    where = tmp_path_factory.mktemp("compare")
    store = where / "r.sqlite"
    shutil.copy(STORE, store)
    env = {**os.environ, "COLUMNS": "100", "PGLAB_STORE": str(store)}
    code = SCRIPT.format(commands=list(COMMANDS.values()), separator=SEPARATOR)
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=where, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(zip(COMMANDS, done.stdout.split(SEPARATOR + "\n"), strict=False))


# what issue 52 added to every answer (the test and why, its warnings) and point (its own
# figure, why it is not comparable with its reference), and issue 53 to each pair's evidence
# (what its runs could not measure): not in the goldens
ADDED = ("why", "warnings", "figure", "incomparable", "notes")


def _same_shape(value: object) -> object:
    """The JSON value with its objects as (key, value) lists (their order counts) and floats
    to 12 significant digits."""
    if isinstance(value, dict):
        return [(k, _same_shape(v)) for k, v in value.items() if k not in ADDED]
    if isinstance(value, list):
        return [_same_shape(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.12g}")
    return value


@pytest.mark.parametrize("golden", [g for g in COMMANDS if g.endswith(".txt")])
def test_compare_prints_what_the_version_before_printed(
    golden: str, printed: dict[str, str]
) -> None:
    assert printed[golden] == (DATA / "golden" / golden).read_text()


@pytest.mark.parametrize("golden", [g for g in COMMANDS if g.endswith(".json")])
def test_json_is_what_the_version_before_printed(golden: str, printed: dict[str, str]) -> None:
    got, want = json.loads(printed[golden]), json.loads((DATA / "golden" / golden).read_text())
    assert _same_shape(got) == _same_shape(want)
    # the comparisons are objects with their verdicts (not their repr), the pairs in order
    if golden.startswith("before_shape_compare_") and got["kind"] != "runs":
        assert [p["comparison"]["verdict"] for p in got["pairs"]] == [
            p["comparison"]["verdict"] for p in want["pairs"]
        ]
