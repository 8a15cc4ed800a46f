"""Why it changed, on real runs: four more known cases, each with the item it must rank first
(or among the first three) in ``pglab compare --json``'s evidence. Each campaign is one point
against another, interleaved, three rounds of 3 s at scale 1: as short as shows it. A profiled
case also checks what the evidence says of hardware counters (``_counters_said``).

- ``wal_compression = pglz`` against ``off`` on pgbench's writes right after the server started
  (every page's first change after the checkpoint is a full-page image): the WAL per
  transaction falls.
- ``plan_cache_mode = auto`` against ``force_custom_plan`` on the TPC-C-like kit (one
  warehouse, pgbench's prepared protocol), profiled: the planner's functions rise in the
  backend's CPU samples with custom plans (the issue's case; about 100 s on the loaded
  development machine, 30 s of it loading the warehouse, which a lab keeps).
- ``work_mem = 64kB`` against ``64MB`` on a query that sorts 100,000 rows: its temporary files
  (``pg_stat_database.temp_bytes`` per transaction) vanish; and on the TPC-H-like kit (scale
  factor 0.01, the issue's case), the queries' spills read from their stored plans vanish.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import urlencode

import pytest
from helpers.asgi import call
from markupsafe import escape

from pglab.analysis.evidence_rules import FUNCTION_WORDS
from pglab.cli import main
from pglab.profile import counters
from pglab.serve import make_app
from pglab.store import open_store

pytestmark = pytest.mark.integration

CAMPAIGN = """name = "{name}"
repeats = 3
order = "interleaved"
[dataset]
scale = 1
[workload]
clients = 2
duration = 3
latency_log = "off"
{workload}
[variants.a]
settings = {{ {a} }}
[variants.b]
settings = {{ {b} }}
{more}"""


def _evidence(
    tmp_path: Path, lab_home: Path, capsys: pytest.CaptureFixture[str], name: str, **doc: str
) -> list[dict]:
    """The campaign run, and the evidence of b against a as ``compare --json`` gives it."""
    return _pair(tmp_path, lab_home, capsys, name, **doc)["items"]


def _pair(
    tmp_path: Path, lab_home: Path, capsys: pytest.CaptureFixture[str], name: str, **doc: str
) -> dict:
    """The campaign run, and the evidence of b against a as ``compare --json`` gives it: the
    pair's items and notes; ``pair["shown"]``: what ``compare`` prints."""
    text = doc.pop("text", None) or CAMPAIGN.format(name=name, **{"workload": "", "more": ""} | doc)
    campaign = tmp_path / f"{name}.toml"
    campaign.write_text(text)
    store = str(tmp_path / "r.sqlite")
    assert main(["run", str(campaign), "--lab-dir", str(lab_home), "--store", store]) == 0
    with open_store(store) as opened:
        runs = opened.list_runs(name)
        assert [r.status for r in runs] == ["ok"] * 6, [r.error for r in runs]
    capsys.readouterr()
    assert main(["compare", f"{name}:a", f"{name}:b", "--json", "--store", store]) == 0
    found = json.loads(capsys.readouterr().out)
    assert len(found["evidence"]) == 1, found["pairs"]
    (pair,) = found["evidence"]
    # one interleaved campaign: by round, or Welch's test for a figure a round lacks on a side
    # (a sampler that saw nothing in a run on a loaded machine)
    assert {i["method"] for i in pair["items"]} <= {"paired", "welch"}
    assert main(["compare", f"{name}:a", f"{name}:b", "--store", store]) == 0
    pair["shown"] = " ".join(capsys.readouterr().out.split())
    pair["store"] = store
    return pair


def _counters_said(pair: dict) -> None:
    """Profiled runs: where this machine counts cycles and instructions, no note (the counts
    are figures like any other); where it hides them (this project's VM), compare says so
    under the items, and nothing is made up."""
    if counters.probe().countable:
        assert pair["notes"] == [], pair["notes"]
    else:
        note = counters.unavailable(counters.hardware_counters())
        assert pair["notes"] == [note] and "unavailable here" in note
        assert note in pair["shown"], pair["shown"]
        assert not {"ipc", "cache_misses_xact"} & {i["key"] for i in pair["items"]}


def test_wal_compression_ranks_the_wal_per_transaction_first(
    tmp_path: Path, lab_home: Path, capsys: pytest.CaptureFixture[str], no_leftovers: None
) -> None:
    found = _evidence(
        tmp_path, lab_home, capsys, "walcomp", workload='script = "tpcb-like"',
        a='wal_compression = "off", full_page_writes = "on"',
        b='wal_compression = "pglz", full_page_writes = "on"',
    )  # fmt: skip
    keys = [i["key"] for i in found]
    assert "wal_kb_xact" in keys[:3], found
    wal = found[keys.index("wal_kb_xact")]
    assert wal["ci_high"] < 0 and wal["b"] < 0.8 * wal["a"], wal  # pglz wrote a fifth less
    assert wal["method"] == "paired"  # every round has its WAL counters
    assert wal["text"].startswith("WAL per transaction −")


# the planner's functions: those whose rise the rules say in words (evidence_rules)
PLANNING = {f for f, words in FUNCTION_WORDS.items() if "the planner runs" in words[0]}


def test_work_mem_ranks_the_temporary_files_first(
    tmp_path: Path, lab_home: Path, capsys: pytest.CaptureFixture[str], no_leftovers: None
) -> None:
    (tmp_path / "sort.sql").write_text(
        "SELECT count(*) FROM (SELECT aid FROM pgbench_accounts ORDER BY filler DESC, aid "
        "OFFSET 0) s;\n"
    )
    found = _evidence(
        tmp_path, lab_home, capsys, "workmem", workload='script = "sort.sql"',
        a='work_mem = "64kB"', b='work_mem = "64MB"',
    )  # fmt: skip
    keys = [i["key"] for i in found]
    # the spill first; under CI's load its own I/O waits (the temporary files' reads) have been
    # seen ranked just above it: the same cause, so the spill must then come second
    assert keys[0] == "temp_kb_xact" or (
        keys[0].startswith("wait:IO:") and keys[1] == "temp_kb_xact"
    ), found
    temp = found[keys.index("temp_kb_xact")]
    assert temp["a"] > 1000 and temp["b"] == 0 and temp["ci_high"] < 0, temp  # kB a sort
    assert temp["method"] == "paired"
    assert "fewer sorts or hashes spill to disk" in temp["text"]


@pytest.mark.skipif(shutil.which("perf") is None, reason="no perf (linux-perf)")
def test_plan_cache_mode_on_the_tpcc_kit_ranks_the_planner_rising_first(
    tmp_path: Path, lab_home: Path, capsys: pytest.CaptureFixture[str], no_leftovers: None
) -> None:
    """The issue's case: the TPC-C-like kit (its transactions PL/pgSQL functions, whose
    statements' plans are cached; pgbench's prepared protocol, so that the calls' own plans
    are too) with ``plan_cache_mode = auto`` (a generic plan after five executions) against
    ``force_custom_plan`` (planned at every execution): the planner's functions rise in the
    backend's CPU samples, and rank first. One warehouse, profiled."""
    pair = _pair(
        tmp_path, lab_home, capsys, "tpccplan", workload='kit = "tpcc"\nprotocol = "prepared"',
        a='plan_cache_mode = "auto"', b='plan_cache_mode = "force_custom_plan"',
        more="[profile]\nfrequency = 99\n",
    )  # fmt: skip
    found = [i for i in pair["items"] if not i["outside"]]  # what the run could have caused
    first = found[0]
    named = {k.rpartition(":")[2] for k in [first["key"], *first.get("alike", [])]}
    assert first["key"].startswith("cpu:backend:") and PLANNING & named, [
        i["text"] for i in found[:10]
    ]
    assert first["delta"] > 0 and first["ci_low"] > 0 and first["b"] > 2 * first["a"], first
    assert first["method"] == "paired"  # every round profiled
    assert "the planner runs more" in first["text"] and first["text"] in pair["shown"]
    _counters_said(pair)
    # serve's compare page: the same items, and the same note under them
    app = make_app(pair["store"], tmp_path / "serve-lab")
    code, _, page = call(app, "/compare?" + urlencode({"a": "tpccplan:a", "b": "tpccplan:b"}))
    assert code == 200 and str(escape(first["text"])) in page
    assert all(str(escape(note)) in page for note in pair["notes"])


TPCH = """name = "tpchmem"
repeats = 3
order = "interleaved"
[dataset]
scale = 0.01
[workload]
kit = "tpch"
[variants.a]
settings = { work_mem = "64kB" }
[variants.b]
settings = { work_mem = "64MB" }
"""


def test_work_mem_on_the_tpch_kit_ranks_the_spills_that_vanish_first(
    tmp_path: Path, lab_home: Path, capsys: pytest.CaptureFixture[str], no_leftovers: None
) -> None:
    """The issue's case: the TPC-H-like kit at scale factor 0.01, ``work_mem = 64kB`` against
    ``64MB`` (three interleaved power runs each, about 25 s here): the queries' spills read
    from the plans each run stored (a hash join's batches, a sort on disk, a bitmap's lossy
    blocks) vanish, and rank first."""
    pair = _pair(tmp_path, lab_home, capsys, "tpchmem", text=TPCH)
    found = [i for i in pair["items"] if not i["outside"]]  # what the run could have caused
    spills = ("sort", "hash", "hashagg", "bitmap")
    first = found[0]
    assert first["key"].startswith("plan:q") and first["key"].rpartition(":")[2] in spills, [
        i["text"] for i in found[:10]
    ]
    assert first["b"] == 0 and first["a"] > 0 and first["ci_high"] < 0, first
    assert "fits in work_mem" in first["text"] and first["text"] in pair["shown"]
