"""A campaign of one run, run through ``pglab run`` as a user runs it: its file written, the
command's exit status checked, its one stored run read back."""

from __future__ import annotations

from pathlib import Path

from pglab.cli import main
from pglab.lab import Lab
from pglab.rows import StoredRun
from pglab.store import open_store


def run_alone(path: Path, text: str, name: str, lab: Lab, store: Path) -> StoredRun:
    """Write ``text`` to ``path``, ``pglab run`` it on ``lab`` and ``store``; campaign ``name``'s
    only run, checked to have ended ok."""
    path.write_text(text)
    argv = ["run", str(path), "--lab-dir", str(lab.home), "--store", str(store)]
    assert main(argv) == 0
    with open_store(str(store)) as s:
        (row,) = s.list_runs(name)
        run = s.get_run(row.id)
    assert run is not None and run.ok, run and run.error
    return run
