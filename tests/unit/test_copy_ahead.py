"""The next run's copy made in a thread as the last run ends (``postgres/ahead.py``): taken
only when it is the copy a run needs, made whole; a failed one is not taken."""

from __future__ import annotations

from pathlib import Path

from pglab.lab import Lab
from pglab.postgres import dataset as datasets
from pglab.postgres.ahead import CopyAhead


def _template(tmp_path: Path) -> datasets.Dataset:
    pgdata = tmp_path / "datasets" / "k1" / "pgdata"
    (pgdata / "base").mkdir(parents=True)
    (pgdata / "base" / "16384").write_bytes(b"x" * 100_000)
    (pgdata / "postmaster.pid").write_text("4242\n")  # a leftover the copy drops
    return datasets.Dataset("k1", pgdata, 1.0, 100_000)


def test_a_copy_made_ahead_is_taken_by_the_run_that_needs_it(tmp_path: Path) -> None:
    ds = _template(tmp_path)
    target = tmp_path / "clusters" / "w0000001-k1"
    target.mkdir(parents=True)
    (target / "stale").write_text("the last run's")  # the last run's directory: replaced
    ahead = CopyAhead.start(Lab(home=tmp_path, run_as=None), ds, target, None, lambda m: None)
    assert ahead.wait() >= 0
    assert ahead.fits(target, None, "k1")
    assert not ahead.fits(target, None, "k2")  # another dataset
    assert not ahead.fits(tmp_path / "clusters" / "other", None, "k1")
    assert not ahead.fits(target, tmp_path / "wal", "k1")
    assert (target / "base" / "16384").read_bytes() == b"x" * 100_000
    assert not (target / "stale").exists() and not (target / "postmaster.pid").exists()
    assert ahead.seconds > 0


def test_a_copy_that_failed_is_not_taken(tmp_path: Path) -> None:
    ds = datasets.Dataset("k1", tmp_path / "no-such-template", 1.0, 1)
    target = tmp_path / "clusters" / "w0000001-k1"
    target.parent.mkdir(parents=True)
    ahead = CopyAhead.start(Lab(home=tmp_path, run_as=None), ds, target, None, lambda m: None)
    ahead.wait()
    assert ahead.failed is not None
    assert not ahead.fits(target, None, "k1")


def test_a_dataset_is_found_only_when_made(tmp_path: Path) -> None:
    from pglab.campaign.spec import DatasetSpec, ServerSpec, dataset_key

    lab = Lab(home=tmp_path, run_as=None)
    server, spec = ServerSpec(), DatasetSpec(scale=3)
    assert datasets.found(lab, server, spec) is None
    home = lab.datasets / dataset_key(server, spec, datasets.StorageSpec())
    (home / "pgdata").mkdir(parents=True)
    (home / "dataset.json").write_text(
        '{"init_seconds": 2.5, "size_bytes": 1234, "init_steps": {"vacuum": 0.5}}'
    )
    ds = datasets.found(lab, server, spec)
    assert ds is not None and ds.template == home / "pgdata"
    assert (ds.init_seconds, ds.size_bytes, dict(ds.init_steps)) == (2.5, 1234, {"vacuum": 0.5})
    assert not ds.made_now
