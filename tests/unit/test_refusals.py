"""Every document the test suite shows refused, refused by both checks made from the declarations
of ``campaign/schema/``: the parser (``pglab run`` and ``pglab tune``) and the JSON Schema
(``pglab schema``, for editors); and the examples accepted by both.

The bad documents are collected from the tests that refuse them (``tests/helpers/
collect_refusals.py`` writes ``tests/data/refused_documents.json``); the same plugin judges every
document a running suite refuses, so a test of a new refusal is checked before it is collected
(docs/developers/testing.md). A JSON Schema judges one document by its own shape: what needs
more than that (another table's value, a file, this machine, two values compared) is the
parser's alone, and ``helpers.refusal_judge.BEYOND_THE_SCHEMA`` lists those rules by kind. A
document whose problems are all of those kinds may pass the JSON Schema; any other must be
refused by it, and the key the JSON Schema names must be the one the parser's message names."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
from helpers.campaign_fuzz import DOCUMENTS
from helpers.refusal_judge import BEYOND_THE_SCHEMA, VALIDATOR, beyond, disagreement, schema_errors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pglab.campaign import parse as campaign
from pglab.errors import CampaignError
from pglab.tune import spec as tune_spec

REPO = Path(__file__).resolve().parents[2]
CORPUS = json.loads((REPO / "tests" / "data" / "refused_documents.json").read_text())


def parser_problems(entry: dict[str, Any], base_dir: Path) -> list[str]:
    """The parser's problems with the document (none: it is accepted)."""
    doc = entry["doc"]
    try:
        if entry["kind"] == "tune":
            tune_spec.parse(doc, "t", base_dir)
        else:
            campaign.parse(doc, "t", base_dir)
    except CampaignError as exc:
        return exc.message.split("\n  ")[1:] or [exc.message]
    return []


@pytest.mark.parametrize(
    "entry", CORPUS, ids=[f"{i}:{e['test'].rsplit('::', 1)[-1]}" for i, e in enumerate(CORPUS)]
)
def test_a_refused_document_is_refused_by_both(entry: dict[str, Any], tmp_path: Path) -> None:
    said = parser_problems(entry, tmp_path)
    if not said:  # refused where the test made this machine say no (not root, …)
        assert {beyond(s) for s in entry["said"]} == {"machine"}, entry
        return
    assert len(said) == len(set(said)), f"a problem said twice: {said}"
    assert disagreement(entry["doc"], said) is None


def test_the_corpus_covers_every_table_and_both_files() -> None:
    """The corpus is collected from the suite: refusals in every table, of tune files too."""
    from pglab.campaign.schema import TABLES

    kinds = {e["kind"] for e in CORPUS}
    assert kinds == {"campaign", "tune"}
    tops = {k for e in CORPUS for k in e["doc"]}
    assert {t.name for t in TABLES[1:] if t.form != "sub"} - tops == set()
    assert len(CORPUS) >= 150


def test_every_kind_beyond_the_schema_is_one_the_suite_shows() -> None:
    """No rule is excused from the JSON Schema that no refused document needs."""
    used = {beyond(s) for e in CORPUS for s in e["said"]} - {None}
    assert used == set(BEYOND_THE_SCHEMA)


@pytest.mark.parametrize("path", sorted((REPO / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_an_example_is_accepted_by_both(path: Path) -> None:
    doc = tomllib.loads(path.read_text())
    assert schema_errors(doc) == []
    entry = {"kind": "tune" if "tune" in doc else "campaign", "doc": doc}
    assert parser_problems(entry, path.parent) == []


@settings(max_examples=300, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(doc=DOCUMENTS)
def test_a_document_the_fault_suite_makes_up_gets_the_same_answer_from_both(doc: dict) -> None:
    """The fault suite's made-up documents (tests/faults/test_input_fuzz.py): one the parser
    refuses for a problem within the schema the JSON Schema refuses, and one the parser takes
    the JSON Schema takes. A NaN is left out (JSON has none, and no JSON Schema judges one), and
    a None (TOML has none)."""
    try:
        json.dumps(doc, allow_nan=False)
    except ValueError:
        return
    if "None" in repr(doc):  # TOML has no null: no file is such a document
        return
    said = parser_problems({"kind": "campaign", "doc": doc}, REPO / "examples")
    within = [s for s in said if beyond(s) is None]
    errors = schema_errors(doc)
    if within:
        assert errors, f"the JSON Schema accepts {doc}; the parser says {within}"
    if not said:
        assert not errors, f"the parser accepts {doc}; the JSON Schema says {errors[0].message}"


# -- the values of one key: its declaration's JSON Schema and its reader agree ----------------

SHAPED = ("size", "duration", "scale", "threads", "seed", "major", "repeats", "queries",
          "think_time")  # fmt: skip
ODD_VALUES: list[Any] = [
    0,
    1,
    4.0,
    4.5,
    -1,
    2000.0,
    1_000_001,
    0.01,
    0.001,
    True,
    "auto",
    "0",
    "00",
    "1",
    "1i",
    "1ib",
    "1kib",
    "1 kb",
    "1 k b",
    "0.5",
    "1e3",
    "inf",
    ".5k",
    "300MB",
    "2GB",
    "1h30",
    "1h30min",
    "90MIN",
    "1 h 30 min",
    "0s",
    "0.5s",
    "1 0min",
    "90sec",
    "16",
    "16.0",
    "time",
    [1, 2.0],
    [3, 3.0],
    [23],
    "5400",
    "100ms",
    "0ms",
    "12 s",
    "1.5ms",
    "ms",
]


@pytest.mark.parametrize("shape", SHAPED)
@pytest.mark.parametrize("value", ODD_VALUES, ids=repr)
def test_a_value_is_taken_by_its_reader_iff_by_the_json_schema(shape: str, value: Any) -> None:
    """Duration "0", size "1i" and scale = 2000.0 once passed the JSON Schema's pattern or type
    while the parser refused them; each shape's schema and reader now agree value by value."""
    from pglab.campaign.shapes import SHAPES

    s = SHAPES[shape]
    assert s.read is not None
    by_schema = Draft202012Validator(s.schema).is_valid(value)
    assert by_schema == (s.read(value) is not None), (shape, value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet="0123456789.kKmMgGtTiIbBsSeEcCnNhHdD xy", max_size=9))
def test_sizes_and_durations_agree_on_any_text(text: str) -> None:
    from pglab.campaign.shapes import SHAPES

    for shape in ("size", "duration", "think_time"):
        s = SHAPES[shape]
        assert s.read is not None
        by_schema = Draft202012Validator(s.schema).is_valid(text)
        assert by_schema == (s.read(text) is not None), (shape, text)


def test_a_whole_float_is_the_whole_number() -> None:
    """TOML's ``clients = 4.0`` is an integer to the JSON Schema; the parser takes it as 4."""
    doc = tomllib.loads("[workload]\nclients = 4.0\nduration = 5.0\n[dataset]\nscale = 2000.0\n")
    assert VALIDATOR.is_valid(doc)
    camp = campaign.parse(doc, default_name="x")
    ph = camp.variants[0].phases[0]
    assert (ph.clients, ph.duration, camp.variants[0].dataset.scale) == (4, 5, 2000)
    assert all(type(v) is int for v in (ph.clients, ph.duration, camp.variants[0].dataset.scale))


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["one process", "xdist"])
def test_a_run_whose_refusal_the_json_schema_does_not_share_fails(
    tmp_path: Path, workers: list[str]
) -> None:
    """The plugin judges what a running suite refuses: a test whose document the parser refuses
    for a value the JSON Schema takes (here said by hand) fails the run, and names the test;
    with pytest-xdist's workers too (the controller judges what each recorded)."""
    import subprocess
    import sys

    (tmp_path / "test_new_refusal.py").write_text(
        "from helpers import collect_refusals\n\n"
        "def test_clients_refused():\n"
        "    collect_refusals._record('campaign', {'workload': {'clients': 4}},\n"
        "        'problems:\\n  [workload]: clients = 4: expected a whole number ≥ 8')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "helpers.collect_refusals", "-p",
         "no:cacheprovider", "--rootdir", str(tmp_path), *workers, str(tmp_path)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refused by the parser, not by the JSON Schema" in done.stdout
    assert "test_new_refusal.py::test_clients_refused: the JSON Schema accepts" in done.stdout
    assert "1 passed" in done.stdout
