"""A campaign file edited between an interrupted run and its resume: the changed points are named
and nothing runs, until the user keeps both (a new name) or replaces them (--replace)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.cli import main
from pglab.lab import Lab
from pglab.planning.changes import spec_changes
from pglab.store import open_store

BEFORE = """
name = "edited"
[dataset]
scale = 1
[workload]
clients = 1
duration = 1
latency_log = "off"
[variants.base]
[variants.tuned]
settings = {{ work_mem = "{work_mem}" }}
"""


def _run(path: Path, lab: Lab, store: Path, *extra: str) -> int:
    return main(["run", str(path), *extra, "--lab-dir", str(lab.home), "--store", str(store)])


@pytest.mark.integration
def test_an_edited_campaign_names_its_changed_points_and_runs_nothing(
    tmp_path: Path, lab: Lab, no_leftovers, capsys
) -> None:
    path, store_path = tmp_path / "c.toml", tmp_path / "r.sqlite"
    path.write_text(BEFORE.format(work_mem="8MB"))
    assert _run(path, lab, store_path) == 0
    with open_store(str(store_path)) as store:
        before = store.list_runs("edited")
    assert [r.status for r in before] == ["ok", "ok"]
    capsys.readouterr()

    path.write_text(BEFORE.format(work_mem="64MB"))
    assert _run(path, lab, store_path, "--dry-run") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "work_mem" in out and "8MB" in out and "64MB" in out and "--replace" in out

    assert _run(path, lab, store_path) == 2
    err = " ".join(capsys.readouterr().err.split())  # the terminal may wrap lines
    assert "changed since some of its runs were stored" in err
    assert "tuned" in err and "'8MB' → '64MB'" in err
    assert "--replace" in err
    with open_store(str(store_path)) as store:
        assert store.list_runs("edited") == before  # nothing ran, nothing was touched

    assert _run(path, lab, store_path, "--replace") == 0
    with open_store(str(store_path)) as store:
        after = store.list_runs("edited")
        tuned = [store.get_run(r.id) for r in after if r.variant == "tuned"]
    assert len(after) == 2 and all(r.status == "ok" for r in after)
    assert [r.id for r in after if r.variant == "base"] == [
        r.id for r in before if r.variant == "base"
    ]  # the unchanged point's run is kept as it was
    assert dict(tuned[0].spec["server"]["settings"])["work_mem"] == "64MB"


def test_spec_changes_names_each_changed_leaf() -> None:
    old = {
        "variant": "a",
        "axes": [["clients", 4]],
        "server": {"source": "embedded", "settings": {"work_mem": "8MB"}},
        "phases": [{"name": "main", "scripts": [{"builtin": "tpcb-like", "weight": 1}]}],
        "campaign": "ignored",
    }
    new = {
        "variant": "a",
        "axes": [["clients", 8]],
        "server": {"source": "embedded", "settings": {"work_mem": "8MB", "jit": "off"}},
        "phases": [{"name": "main", "scripts": [{"builtin": "select-only", "weight": 1}]}],
        "campaign": "other name: not part of a point",
    }
    assert spec_changes(old, new) == [
        "axes.clients: 4 → 8",
        "phases[0].scripts[0].builtin: 'tpcb-like' → 'select-only'",
        "server.settings.jit: (absent) → 'off'",
    ]
    assert spec_changes(old, dict(old)) == []
    # [os] is part of a point too (it was left out: "its definition changed", no more)
    tuned = {**old, "os": {"io_scheduler": "none"}}
    assert spec_changes(old, tuned) == ["os.io_scheduler: (absent) → 'none'"]
