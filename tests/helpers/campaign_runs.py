"""Campaigns run through ``pglab run`` as a user runs them: a campaign of one run (its file
written, the command's exit status checked, its one stored run read back), and a kit's campaign
on PostgreSQL 18 and Debian's 15."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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


# Debian's postgresql-15 (in .ci/run's packages): the second server version of the kits' tests
PG15 = Path("/usr/lib/postgresql/15/bin")


def on_18_and_15(
    tmp: Path, name: str, workload: str, lab: Lab, pg15_workload: str = ""
) -> dict[str, Any]:
    """Campaign ``name`` of ``workload`` (TOML) on PostgreSQL 18 (embedded) and Debian's 15
    (``pg15_workload``: its own ``[variants.pg15.workload]`` keys), run by ``pglab run``:
    ``{"store": its path, "runs": every run}``."""
    if not PG15.exists():
        pytest.skip("Debian's postgresql-15 is not installed")
    path = tmp / f"{name}.toml"
    extra = f"[variants.pg15.workload]\n{pg15_workload}" if pg15_workload else ""
    path.write_text(f'name = "{name}"\n[variants.pg18]\n[variants.pg15.server]\n'
                    f'source = "bindir"\nbindir = "{PG15}"\n{extra}{workload}')  # fmt: skip
    store = tmp / "r.sqlite"
    assert main(["run", str(path), "--lab-dir", str(lab.home), "--store", str(store)]) == 0
    with open_store(str(store)) as s:
        runs = [s.get_run(row.id) for row in s.list_runs(name)]
    return {"store": store, "runs": runs}
