"""A pytest plugin (loaded by ``tests/conftest.py`` in every run) that records every campaign or
tune document the parser refuses while the tests run, and at the end judges each by the JSON
Schema (``helpers.refusal_judge``): a document the parser refuses for a problem within the
schema that the JSON Schema accepts fails the run, naming the test. So a new test of a refusal
is checked as it is written, not only once it is in the corpus.

With ``--refusals-out FILE`` it also writes what it recorded: the corpus
``tests/unit/test_refusals.py`` checks (``tests/data/refused_documents.json``). Collect it over
the test files that refuse documents (the command is in docs/developers/testing.md):

    .venv/bin/pytest -q tests/unit/test_schema.py ... \\
        --refusals-out tests/data/refused_documents.json

Documents made up by Hypothesis are left out (random, and thousands of them), and so are
documents no TOML file can be (a None: the key probes of test_schema) and those JSON cannot hold
(a TOML date, a NaN). Each is kept once, with the test that refused it
first and the problems the parser said then (collect the corpus without pytest-xdist's
``-n``: which test refused a document first depends on how the workers shared the tests).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import currently_in_test_context

from helpers.refusal_judge import disagreement
from pglab.campaign import parse as campaigns
from pglab.errors import CampaignError
from pglab.tune import spec as tune_spec

_found: dict[str, dict[str, Any]] = {}
_current: list[str] = [""]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--refusals-out", default=None,
                     help="write the refused documents recorded to this JSON file")  # fmt: skip


def _recording(kind: str, parse: Any) -> Any:
    def wrapper(doc: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        before = copy.deepcopy(doc)
        try:
            return parse(doc, *args, **kwargs)
        except CampaignError as exc:
            _record(kind, before, exc.message)
            raise

    return wrapper


def _recording_tune(parse_tune: Any) -> Any:
    """``parse_tune`` says its problems rather than raising them: a ``[tune]`` table with some
    is recorded as a tune file of that table alone."""

    def wrapper(table: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        before = copy.deepcopy(table)
        spec, problems = parse_tune(table, *args, **kwargs)
        if problems and isinstance(before, dict):
            _record("tune", {"tune": before}, "\n  ".join(["", *problems]))
        return spec, problems

    return wrapper


def _record(kind: str, doc: dict[str, Any], message: str) -> None:
    if currently_in_test_context() or _has_none(doc):
        return
    try:
        text = json.dumps(doc, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return
    said = message.split("\n  ")[1:] or [message]
    _found.setdefault(f"{kind} {text}", {"kind": kind, "doc": doc, "test": _current[0],
                                         "said": said})  # fmt: skip


def _has_none(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_none(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_none(v) for v in value)
    return value is None


def pytest_configure(config: pytest.Config) -> None:
    campaigns.parse = _recording("campaign", campaigns.parse)  # type: ignore[assignment]
    tune_spec.parse = _recording("tune", tune_spec.parse)  # type: ignore[assignment]
    tune_spec.parse_tune = _recording_tune(tune_spec.parse_tune)  # type: ignore[assignment]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    _current[0] = item.nodeid.split("[")[0]
    return (yield)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Every document refused in this run judged by the JSON Schema: a disagreement fails it.
    In a pytest-xdist worker, what it recorded goes to the controller, which judges them all."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["pglab_refusals"] = json.dumps(list(_found.items()))
        return
    wrong = [(e["test"], why) for e in _found.values()
             if (why := disagreement(e["doc"], e["said"])) is not None]  # fmt: skip
    if not wrong:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.section("refused by the parser, not by the JSON Schema", sep="=", red=True)
        for test, why in wrong:
            reporter.line(f"{test}: {why}")
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """(pytest-xdist's controller) a worker's recorded refusals, kept with the others."""
    for key, entry in json.loads(node.workeroutput.get("pglab_refusals", "[]")):
        _found.setdefault(key, entry)


def pytest_unconfigure(config: pytest.Config) -> None:
    given = config.getoption("--refusals-out")
    if given is None or hasattr(config, "workerinput"):  # an xdist worker: the controller writes
        return
    kept = sorted(_found.values(), key=lambda e: (e["test"], json.dumps(e["doc"], sort_keys=True)))
    Path(given).write_text(json.dumps(kept, indent=1, ensure_ascii=False) + "\n")
