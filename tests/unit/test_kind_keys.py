"""Each kind of phase's keys declared once, in its package (``campaign/workload.refused_beside``
gathers them): what a kind refuses beside it, said by the parser wherever a phase has that kind
and by the JSON Schema where the table itself says the kind (one table is all it sees)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.refusal_judge import disagreement, schema_errors

from pglab.campaign import parse as campaign
from pglab.campaign.workload import refused_beside
from pglab.errors import CampaignError


def said(doc: dict[str, Any], tmp_path: Path) -> list[str]:
    try:
        campaign.parse(doc, "t", tmp_path)
    except CampaignError as exc:
        return exc.message.split("\n  ")[1:] or [exc.message]
    return []


def _doc(key: str, value: str, refused: str) -> dict[str, Any]:
    scale = 0.01 if value == "tpch" else (1000 if value == "tpce" else 1)
    sample = {"queries": [1], "distribution": "uniform", "pacing": "spec", "think_time": 0.1,
              "test": "oltp_read_only", "script": "tpcb-like", "scripts": ["tpcb-like"],
              "kit": "tpcc", "operation": "vacuum", "generators": ["h"], "progress": False,
              "latency_log": "off", "protocol": "prepared"}  # fmt: skip
    value_of = sample.get(refused, 2)
    if key == "kit" and refused == "kit":
        value_of = "ycsb"
    return {"dataset": {"scale": scale}, "workload": {key: value, refused: value_of}}


CASES = [(key, value, k) for key, value, refused in refused_beside() for k in refused]


@pytest.mark.parametrize(("key", "value", "refused"), CASES, ids=lambda x: str(x))
def test_a_key_a_kind_refuses_is_refused_by_both(
    key: str, value: str, refused: str, tmp_path: Path
) -> None:
    doc = _doc(key, value, refused)
    problems = said(doc, tmp_path)
    assert problems, doc
    paths = [list(e.absolute_path) for e in schema_errors(doc)]
    assert ["workload", refused] in paths, (doc, paths)
    assert disagreement(doc, problems) is None


def test_a_kind_inherited_from_another_table_is_the_parser_s_alone(tmp_path: Path) -> None:
    """A phase takes its kind from [workload]: the parser refuses its keys there too; the JSON
    Schema, seeing one table at a time, accepts them."""
    doc = {"dataset": {"scale": 0.01}, "workload": {"kit": "tpch"},
           "phases": [{"name": "a", "duration": 5}]}  # fmt: skip
    assert any('duration with kit = "tpch"' in s for s in said(doc, tmp_path))
    assert schema_errors(doc) == []


def test_a_kind_s_own_keys_are_accepted_by_both(tmp_path: Path) -> None:
    doc = {"dataset": {"scale": 0.01}, "workload": {"kit": "tpch", "queries": [1, 2]}}
    assert said(doc, tmp_path) == [] and schema_errors(doc) == []
    doc = {"dataset": {"scale": 1}, "workload": {"generator": "sysbench", "rate": 5}}
    assert said(doc, tmp_path) == [] and schema_errors(doc) == []
