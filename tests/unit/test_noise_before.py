"""The noise the planner expects (``analysis/noise.py``), measured only on stored runs like the
plan's (issue 52): after a few 0.3 s TPC-H-like and 5 s TPC-C-like runs, `pglab run
examples/first-campaign.toml --dry-run` said "noise 22.2% … more than 100 repeats would be
needed"; those runs are nothing like its 10 s pgbench runs. On synthetic stores."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.synthetic_runs import T0, _run

from pglab.analysis import noise
from pglab.campaign import parse as campaigns
from pglab.run import campaign_run
from pglab.store import open_store

FIRST = Path(__file__).resolve().parents[2] / "examples" / "first-campaign.toml"


def _store(store, name: str, tps: list[float], phase: dict | None = None,
           server: dict | None = None) -> None:  # fmt: skip
    """A campaign of one point whose runs had ``tps``: pgbench tpcb-like for 10 s on the
    embedded server unless ``phase`` or ``server`` say otherwise."""
    store.ensure_campaign(name, {"name": name}, None)
    rng = random.Random(1)
    for rep, value in enumerate(tps, start=1):
        run = _run(name, "base", "tpcb-like", 1, rep, value, T0 + 100 * rep, 10, "ok", rng)
        spec = dict(run.spec)
        spec["phases"] = [{**spec["phases"][0], **(phase or {})}]
        if server is not None:
            spec["server"] = server
        store.save_run(replace(run, spec=spec, metrics=run.metrics.with_value("tps", value)))


def _design(path: Path):
    camp = campaigns.load(FIRST)
    with open_store(str(path)) as store:
        stored = campaign_run.Stored.read(store, camp)
    outline = campaign_run.outline(camp, stored)
    design = outline.design()
    assert design is not None
    return design


NOISY = [100.0, 130.0, 80.0, 120.0]  # SD of log TPS about 21%


def test_kit_runs_are_not_the_noise_of_a_pgbench_campaign(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with open_store(str(path)) as store:
        _store(store, "tpch-quick", NOISY, {"kit": "tpch", "mode": "power", "duration": None,
                                           "scripts": []})  # fmt: skip
        _store(store, "tpcc-short", NOISY, {"kit": "tpcc", "duration": 5})
    design = _design(path)
    assert design.noise_pct == pytest.approx(5.0)  # assumed: nothing comparable
    text = design.text()
    assert "more than 100 repeats" not in text, text
    assert ("noise 5.0%, assumed: none of the 2 stored point(s) of 3 runs or more is like this "
            "plan's (pgbench tps, 10 s, embedded: the same kind and figure, 2x the duration "
            "at most, the same server source)") in text, text  # fmt: skip


def test_comparable_runs_are_used_and_named(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    with open_store(str(path)) as store:
        _store(store, "tpcc-short", NOISY, {"kit": "tpcc", "duration": 5})
        _store(store, "long", NOISY, {"duration": 40})  # 4x as long: not similar
        _store(store, "pg15", NOISY, server={"source": "bindir", "settings": [],
                                             "bindir": "/usr/lib/postgresql/15/bin"})  # fmt: skip
        _store(store, "quiet", [1000.0, 1010.0, 990.0])  # pgbench, 10 s, embedded: like it
    design = _design(path)
    assert design.noise_pct < 5  # the quiet campaign's (its runs' TPS vary by about 1-3%)
    assert design.noise_source == (
        "median of 1 point(s) of comparable points' (pgbench tps, 10 s, embedded) runs: quiet"
    )


def test_likeness_tells_kinds_figures_durations_and_sources() -> None:
    base = {"server": {"source": "embedded"},
            "phases": [{"name": "warm", "duration": 5, "measured": False},
                       {"name": "main", "duration": 30, "times": 2}]}  # fmt: skip
    like = noise.likeness(base)  # type: ignore[arg-type]
    assert like == noise.Likeness("pgbench", "tps", 60.0, "embedded")
    tpch = noise.likeness({"phases": [{"kit": "tpch", "mode": "throughput"}]})
    assert (tpch.kind, tpch.figure, tpch.seconds) == ("tpch throughput", "QthH", None)
    vacuum = noise.likeness({"phases": [{"operation": "vacuum", "duration": None}]})
    assert (vacuum.kind, vacuum.figure) == ("vacuum", "MB/s")
    existing = noise.likeness({"server": {"dsn": "postgresql://bench@db/postgres"}})
    assert existing.source == "existing server postgresql://bench@db/postgres"
    assert like.like(replace(like, seconds=100.0)) and not like.like(replace(like, seconds=150))
    assert not like.like(replace(like, source="bindir /usr/lib/postgresql/15/bin"))
    assert not like.like(replace(like, seconds=None))
