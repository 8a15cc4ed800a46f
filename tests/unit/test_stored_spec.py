"""The stored run spec, typed (``pglab.stored_spec``): what ``RunSpec.to_dict()`` writes keeps
every key it had (run, point and dataset keys of the examples are those of the version before
the types), every key it writes is declared, and ``read`` takes the specs of older stores."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pglab import stored_spec
from pglab.campaign.parse import load
from pglab.campaign.spec import RunSpec, dataset_key
from pglab.planning.plan import make_plan
from pglab.workloads import work

ROOT = Path(__file__).resolve().parents[2]
BEFORE = ROOT / "tests" / "data" / "stores" / "before-shape.sqlite"

# a digest of each example's sorted run keys and dataset keys, as the version before the typed
# spec made them (examples whose specs hold no path of this checkout): storage targets, [os],
# kits, an existing server, a server on a host, sysbench, YCSB, TPC-H, maintenance operations
KEYS_BEFORE = {
    "seed000-filesystems.toml": "2260b45d6211228a",
    "seed002-os-tuning.toml": "32be613f028de3b5",
    # tpcc-scaling: its client-mode points changed on purpose (the stock per line, Delivery;
    # then Payment's typed arguments, for the prepared protocol on 15)
    "tpcc-scaling.toml": "53664bd3ab6ab399",
    "existing-server.toml": "0e32c421a572b35c",
    "server-on-host.toml": "2e0d47fa271e28ab",
    "sysbench-vs-pgbench.toml": "fa5be5a17d89378d",
    "ycsb-zipf.toml": "3a90a82bbef2f9aa",
    "tpch-work-mem.toml": "bf87af6a8af9449b",
    "seed004-maintenance.toml": "6584cd7ea6acf453",
}


def _runs(name: str) -> tuple[RunSpec, ...]:
    return make_plan(load(ROOT / "examples" / name)).runs


@pytest.mark.parametrize("name", list(KEYS_BEFORE))
def test_run_and_dataset_keys_are_those_of_the_version_before(name: str) -> None:
    runs = _runs(name)
    keys = sorted(r.run_key for r in runs)
    datasets = sorted({dataset_key(r.server, r.dataset, r.storage) for r in runs})
    digest = hashlib.sha256(json.dumps([keys, datasets]).encode()).hexdigest()[:16]
    assert digest == KEYS_BEFORE[name], (
        f"the run or dataset keys of examples/{name} changed: stored runs would no longer be "
        "found (if the example itself was edited on purpose, its new digest is this one)"
    )


def _declared(td: Any) -> set[str]:
    return set(td.__required_keys__) | set(td.__optional_keys__)


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples").glob("*.toml")
                                        if p.name != "tune.toml"))  # fmt: skip
def test_every_key_written_is_declared_and_the_version_is_outside_the_point(name: str) -> None:
    for run in _runs(name):
        spec = run.to_dict()
        assert spec["spec_version"] == stored_spec.SPEC_VERSION
        assert set(spec) <= _declared(stored_spec.RunSpecJson)
        assert "spec_version" not in run.point_dict()
        assert set(spec["server"]) <= _declared(stored_spec.ServerJson)
        assert set(spec["server"].get("build") or {}) <= _declared(stored_spec.BuildJson)
        assert set(spec["dataset"]) <= _declared(stored_spec.DatasetJson)
        assert set(spec.get("os") or {}) <= _declared(stored_spec.OsJson)
        for target in (spec.get("storage") or {}).values():
            assert set(target or {}) <= _declared(stored_spec.TargetJson)
        for phase in spec["phases"]:
            # the keys every phase has are typed there; the rest are its kind's own, declared
            # with the kinds' stored fields and read back by the kind (stored_spec names no
            # kind): never on a phase of pgbench's
            own = set(phase) - _declared(stored_spec.PhaseJson)
            assert own <= set(work.STORED_FIELDS), own
            assert not own or work.stored_kind(phase) is not work.PgbenchWork, own
            for script in phase["scripts"]:
                assert set(script) <= _declared(stored_spec.ScriptJson)


def test_a_spec_as_json_text_is_the_spec_read_back() -> None:
    run = _runs("seed002-os-tuning.toml")[0]
    text = json.dumps(run.to_dict())
    assert json.dumps(stored_spec.read(json.loads(text))) == text


def test_specs_of_a_store_made_before_the_version_key_read_as_they_are() -> None:
    with sqlite3.connect(BEFORE) as conn:
        texts = [t for (t,) in conn.execute("SELECT spec_json FROM runs")]
    assert texts
    for text in texts:
        raw = json.loads(text)
        spec = stored_spec.read(raw)
        assert "spec_version" not in spec  # version 1: no key, the same shape
        assert spec == raw
        assert spec["phases"][0]["scripts"][0]["builtin"] == "tpcb-like"


def test_anything_but_an_object_is_refused() -> None:
    with pytest.raises(ValueError, match="JSON object, not list"):
        stored_spec.read([])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="JSON object, not str"):
        stored_spec.read_document("x")  # type: ignore[arg-type]
