"""A store written before the shape's changes (issue 32: the statistics package, one units
module, the typed fingerprint) opens, and ``show`` and ``export`` print what that version
printed of it. ``tests/data/stores/before-shape.sqlite`` and the golden files beside
``tests/data/golden/before_shape_*`` were made by the version before (main at 27e21a7) with
``tests/data/stores/README.md``'s commands; its fingerprints are the older kind (a mount with
``mount_options`` only), its last run failed. The run goldens' environment block is today's
(``analysis.environment``, shared with the report since issue 52): the rest is that version's."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
STORE = DATA / "stores" / "before-shape.sqlite"


SEPARATOR = "=== next command ==="
COMMANDS = {  # golden file -> the command that printed it
    "before_shape_show_before-shape.txt": ["show", "before-shape"],  # points, verdicts
    "before_shape_show_2.txt": ["show", "2"],  # a run: fingerprint, timings, warnings
    "before_shape_show_12.txt": ["show", "12"],  # a failed run
}
# the commands in one Python (one import of pglab, not four), each output followed by a line
SCRIPT = """
import sys
from pglab.cli import main
for argv in {commands!r}:
    assert main(argv) == 0, argv
    print({separator!r}, flush=True)
"""


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What this version prints of a copy of the store (opening may migrate it: never the
    fixture itself), by golden file name; and its export, as ``export``."""
    where = tmp_path_factory.mktemp("before")
    store = where / "r.sqlite"
    shutil.copy(STORE, store)
    out = where / "runs.csv"
    commands = [*COMMANDS.values(), ["export", "before-shape", "--format", "csv", "-o", str(out)]]
    env = {**os.environ, "COLUMNS": "100", "PGLAB_STORE": str(store)}
    code = SCRIPT.format(commands=commands, separator=SEPARATOR)
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=where, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    texts = done.stdout.split(SEPARATOR + "\n")
    return {**dict(zip(COMMANDS, texts, strict=False)), "export": out.read_text()}


# what issue 52 added to the legend: why the runs allowed the test ("one question, one answer")
WHY = re.compile(r" — runs of one interleaved campaign \(before-shape\) pair by round")


@pytest.mark.parametrize("golden", list(COMMANDS))
def test_show_prints_what_the_version_before_printed(golden: str, printed: dict[str, str]) -> None:
    assert WHY.sub("", printed[golden]) == (DATA / "golden" / golden).read_text()


def test_export_gives_the_bytes_the_version_before_gave(printed: dict[str, str]) -> None:
    assert printed["export"] == (DATA / "golden" / "before_shape_export.csv").read_text()
