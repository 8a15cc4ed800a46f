"""A campaign named with digits and a run of that id in one store: ``pglab show`` and ``pglab
export`` take the name as the campaign's (as ``pglab report`` and ``pglab serve`` do), say that
a run has that id too, and ``--run`` picks the run."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from helpers.synthetic_runs import fill

from pglab.cli import main
from pglab.store import open_store


def test_digits_name_the_campaign_and_run_picks_the_run(tmp_path: Path, capsys) -> None:
    store = tmp_path / "r.sqlite"
    with open_store(str(store)) as s:
        fill(s, "other", variants=("a",), scripts=("select-only",), clients=(1,), repeats=1,
             seconds=3)  # fmt: skip
        fill(s, "1", variants=("b", "c"), scripts=("tpcb-like",), clients=(1,), repeats=1,
             seconds=3)  # fmt: skip
        assert s.get_run(1) is not None and s.get_run(1).campaign == "other"
    where = ["--store", str(store), "--lab-dir", str(tmp_path)]
    assert main(["show", "1", *where]) == 0
    got = capsys.readouterr()
    assert "campaign 1" in got.out and "run 1 " not in got.out
    assert "1 is a campaign's name and a run's id" in " ".join(got.err.split())
    assert main(["show", "1", "--run", *where]) == 0
    assert "campaign other" in capsys.readouterr().out  # run 1's campaign, named in its header
    assert main(["export", "1", *where]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["campaign"] for r in rows} == {"1"} and len(rows) == 2
    assert main(["export", "1", "--run", *where]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["campaign"] for r in rows] == ["other"]
    assert main(["show", "x", "--run", *where]) == 2
    assert "--run takes a run's id" in capsys.readouterr().err
