"""The fleet's pure parts: a plan cut into comparison groups, the store it needs, and the
warning when runs pooled or compared come from different machines."""

from __future__ import annotations

from pathlib import Path

import pytest

from pglab.analysis.run_warnings import notices_of
from pglab.campaign import parse
from pglab.errors import LabError
from pglab.fleet.queue import groups, require_postgres
from pglab.planning.plan import make_plan
from pglab.rows import StoredRun

DOC = {
    "repeats": 2,
    "matrix": {"clients": [1, 4], "scale": [1, 2]},
    "variants": {"a": {}, "b": {"settings": {"work_mem": "8MB"}}},
}


def test_a_plan_is_cut_into_one_group_per_matrix_coordinate() -> None:
    plan = make_plan(parse.parse(DOC, "g"))
    found = groups(plan)
    assert {g.label for g in found} == {
        "clients=1 scale=1", "clients=1 scale=2", "clients=4 scale=1", "clients=4 scale=2"
    }  # fmt: skip
    for g in found:
        assert len(g.points) == 2 and g.runs == 4  # both variants, both repeats
    assert len({g.key for g in found}) == 4
    # a stored run is not asked for again; a group with nothing left is not a job
    done = {r.run_key for r in plan.runs if r.axes == (("clients", 1), ("scale", 1))}
    again = groups(make_plan(parse.parse(DOC, "g"), done))
    assert "clients=1 scale=1" not in {g.label for g in again} and len(again) == 3
    # the same coordinate of another campaign is another lock
    other = groups(make_plan(parse.parse(DOC, "h")))
    assert not {g.key for g in found} & {g.key for g in other}


def test_a_campaign_without_a_matrix_is_one_group() -> None:
    (g,) = groups(make_plan(parse.parse({"variants": {"a": {}, "b": {}}}, "one")))
    assert g.label == "all points" and len(g.points) == 2


def test_a_fleet_needs_a_postgresql_store() -> None:
    require_postgres("postgresql://lab@db/pglab")
    with pytest.raises(LabError, match="workers on other hosts cannot reach a SQLite file"):
        require_postgres("/var/lib/pglab/results.sqlite")


def _run(i: int, label: str, host: str, clients: int) -> StoredRun:
    return StoredRun(id=i, campaign="c", run_key=f"k{i}", point_key=label, repeat=i,
                     variant=label, label=label, status="ok", tps=1000.0, started_at=i,
                     finished_at=i + 1, error=None, axes={"clients": clients},
                     fingerprint={"fleet_worker": host})  # fmt: skip


def test_runs_of_different_machines_are_never_pooled_silently() -> None:
    one_host = [_run(1, "a", "w1", 1), _run(2, "a", "w1", 1), _run(3, "b", "w1", 1),
                _run(4, "b", "w1", 1), _run(5, "a4", "w2", 4)]  # fmt: skip
    assert not [n for n in notices_of(one_host) if n.kind == "hosts"]
    pooled = [*one_host, _run(6, "a", "w2", 1)]
    (n,) = [n for n in notices_of(pooled) if n.kind == "hosts"]
    assert n.point == "a" and "2 machines (w1, w2)" in n.message
    compared = [_run(1, "a", "w1", 1), _run(2, "b", "w2", 1)]
    (n,) = [n for n in notices_of(compared) if n.kind == "hosts"]
    assert n.point is None and "compared at clients=1 ran on different machines" in n.message


def test_the_files_a_campaign_names_travel_by_content_through_the_store(tmp_path) -> None:
    from pglab.fleet import files
    from pglab.store import open_store

    (tmp_path / "s.sql").write_text("SELECT 1;\n")
    (tmp_path / "a.patch").write_text("--- a\n+++ b\n")
    (tmp_path / "pg.tar.gz").write_bytes(b"\x1f\x8b not really")
    doc = {
        "server": {"build": {"source": "pg.tar.gz", "patches": ["a.patch"]}},
        "workload": {"script": "s.sql"},
        "variants": {"kit": {"workload": {"kit": "tpcc"}}, "plain": {}},
    }
    plan = make_plan(parse.parse(doc, "f", base_dir=tmp_path))
    # a kit's scripts are pglab's own: not carried
    named = [str(tmp_path / n) for n in ("a.patch", "pg.tar.gz", "s.sql")]
    assert sorted(files.named(plan.points)) == named
    with open_store(str(tmp_path / "r.sqlite")) as store:
        carried = files.carry(store, plan.points)
        before = {p: Path(p).read_bytes() for p in files.named(plan.points)}
        (tmp_path / "s.sql").unlink()
        assert files.place(store, carried) == [str(tmp_path / "s.sql")]  # only what is missing
        assert {p: Path(p).read_bytes() for p in before} == before
        (tmp_path / "a.patch").write_text("another\n")
        with pytest.raises(LabError, match=r"a\.patch on this worker is not the file"):
            files.place(store, carried)


def test_a_job_s_arguments_are_the_json_the_worker_s_child_reads() -> None:
    """What ``submit`` defers is ``JobArgs`` as JSON, read back by the queue's views; the
    child gets it with the worker's keys (``JobPayload``)."""
    import json

    from pglab.fleet.queue import JobArgs, JobPayload, _args, as_json, document_of

    doc = {"name": "c", "variants": {"patched": {}, "b": {}}}  # jsonb would put "b" first
    args = JobArgs(campaign="c", document=doc, document_text=json.dumps(doc), base_dir="/d",
                   source_file=None, files=[{"path": "/d/s.sql", "sha256": "00" * 32}],
                   points=["p1", "p2"], group="clients=4", rounds=[2])  # fmt: skip
    text = json.dumps(as_json(args))
    assert _args(text) == args == _args(json.loads(text))  # jsonb as text, or decoded
    jsonb = {**args, "document": {"name": "c", "variants": {"b": {}, "patched": {}}}}
    assert list(document_of(jsonb)["variants"]) == ["patched", "b"]  # the file's order
    older = {k: v for k, v in jsonb.items() if k != "document_text"}  # queued before it existed
    assert list(document_of(older)["variants"]) == ["b", "patched"]
    assert _args(json.dumps({"campaign": "old"})).get("group", "?") == "?"  # an older job's
    payload = JobPayload(**args, store="postgresql:///s", lab_home="/lab", worker="w1")
    assert set(payload) == set(JobPayload.__annotations__)
