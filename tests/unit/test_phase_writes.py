"""Whether a phase writes is judged from what it runs (``campaign/writes.py``): as its kind
declares it (a kit by the kits' table, sysbench by its test), else built-in scripts by name, a
custom script by its statements; alike for a phase as its spec makes it and as the store keeps
it; and the warnings that hang on it (pglab tune's short-trial warning, show's "short")."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from pglab.campaign import parse as campaign
from pglab.campaign.identity import phase_identity
from pglab.campaign.writes import phase_writes, sql_writes
from pglab.planning.plan import expand_points
from pglab.postgres import settings
from pglab.tune.trials import _checkpoint_warning

DATA = Path(__file__).resolve().parents[1] / "data"
CAT18 = settings.catalog_from_rows(json.loads((DATA / "pg_settings_18.json").read_text()))


def phase_of(tmp_path: Path, workload: str, script: str | None = None, head: str = "") -> dict:
    if script is not None:
        (tmp_path / "s.sql").write_text(script)
    doc = tomllib.loads(f'name = "w"\n{head}[workload]\n{workload}\n')
    (point,) = expand_points(campaign.parse(doc, default_name="w", base_dir=tmp_path))
    return dict(phase_identity(point.phases[0]))  # as a run's spec stores it


@pytest.mark.parametrize(
    ("sql", "writes"),
    [
        ("\\set aid random(1, 100000 * :scale)\n"
         "SELECT abalance FROM pgbench_accounts ORDER BY aid OFFSET :aid LIMIT 10;\n", False),
        ("BEGIN;\nSELECT 1;\n-- UPDATE in a comment\nEND;\n", False),
        ("WITH x AS (SELECT 1) SELECT * FROM x;", False),
        ("INSERT INTO pgbench_history VALUES (1, 1, 1, 0, now());", True),
        ("SELECT 1;\nupdate pgbench_accounts set abalance = 0 where aid = 1;", True),
        ("WITH d AS (DELETE FROM t RETURNING *) SELECT count(*) FROM d;", True),
        ("SELECT * FROM pgbench_accounts WHERE aid = 1 FOR UPDATE;", True),
        ("CREATE TEMP TABLE t (a int);", True),
    ],
)  # fmt: skip
def test_a_scripts_statements_say_whether_it_writes(sql: str, writes: bool) -> None:
    assert sql_writes(sql) is writes


def test_each_kind_of_phase_is_judged_by_what_it_runs(tmp_path: Path) -> None:
    assert phase_writes(phase_of(tmp_path, 'script = "select-only"')) is False
    assert phase_writes(phase_of(tmp_path, 'script = "tpcb-like"')) is True
    read = "SELECT abalance FROM pgbench_accounts ORDER BY abalance OFFSET 10 LIMIT 1;\n"
    assert phase_writes(phase_of(tmp_path, 'script = "s.sql"', read)) is False
    mixed = 'scripts = [{file = "s.sql"}, {builtin = "simple-update"}]'
    assert phase_writes(phase_of(tmp_path, mixed, read)) is True
    assert phase_writes(phase_of(tmp_path, 'kit = "tpcc"')) is True
    tpce = phase_of(tmp_path, 'kit = "tpce"', head="[dataset]\nscale = 1000\n")
    assert phase_writes(tpce) is True  # its scripts SELECT functions that write
    assert phase_writes(phase_of(tmp_path, 'kit = "ycsb"\nmode = "c"')) is False
    assert phase_writes(phase_of(tmp_path, 'kit = "ycsb"\nmode = "a"')) is True
    sysbench = 'generator = "sysbench"\ntest = "{}"'
    assert phase_writes(phase_of(tmp_path, sysbench.format("oltp_point_select"))) is False
    assert phase_writes(phase_of(tmp_path, sysbench.format("oltp_write_only"))) is True
    gone = phase_of(tmp_path, 'script = "s.sql"', read)
    gone["scripts"][0]["path"] = str(tmp_path / "nowhere.sql")
    assert phase_writes(gone) is None  # its WAL tells, once it has run


@pytest.mark.parametrize(
    ("workload", "head", "writes"),
    [
        ('script = "select-only"', "", False),
        ('script = "tpcb-like"', "", True),
        ('kit = "tpcc"', "", True),
        ('kit = "tpce"', "[dataset]\nscale = 1000\n", True),
        ('kit = "ycsb"\nmode = "c"', "", False),
        ('kit = "ycsb"\nmode = "b"', "", True),
        ('kit = "tpch"', "", False),
        ('kit = "tpch"\nmode = "throughput"', "", False),
        ('generator = "sysbench"', "", True),
        ('generator = "sysbench"\ntest = "select_random_ranges"', "", False),
        ('operation = "vacuum"', "", None),
        ('operation = "create_index"\nparallel = 2', "", None),
    ],
)
def test_a_phase_as_the_store_keeps_it_is_judged_as_its_spec(
    tmp_path: Path, workload: str, head: str, writes: bool | None
) -> None:
    """``phase_writes``' callers give it a ``PhaseSpec``'s identity (``tune/trials``) or a
    stored run's phase (``analysis/run_warnings``: JSON read back, lists for tuples, the keys
    at their unset value left out): the kind it declares is found from either alike."""
    spec = phase_of(tmp_path, workload, head=head)
    stored = json.loads(json.dumps(spec))
    assert phase_writes(spec) is writes
    assert phase_writes(stored) is writes


def test_a_phase_stored_before_the_kinds_is_judged_by_its_scripts() -> None:
    """A phase stored before kits, sysbench and operations existed has none of their keys."""
    reads = {"name": "main", "scripts": [{"builtin": "select-only", "weight": 1}]}
    assert phase_writes(reads) is False
    assert phase_writes({**reads, "scripts": [{"builtin": "tpcb-like"}]}) is True


def test_tune_does_not_warn_of_checkpoints_for_a_read_only_script(tmp_path: Path) -> None:
    """The issue's case: a SELECT ... ORDER BY ... OFFSET script was taken for a write workload
    of 10 s, fewer than two checkpoint cycles."""
    read = (
        "\\set n random(1, 1000)\n"
        "SELECT aid FROM pgbench_accounts ORDER BY aid OFFSET :n LIMIT 1;\n"
    )
    for script, warned in ((read, False), ("UPDATE pgbench_branches SET bbalance = 0;\n", True)):
        (tmp_path / "s.sql").write_text(script)
        doc = tomllib.loads('name = "w"\n[workload]\nscript = "s.sql"\nduration = 10\n')
        (point,) = expand_points(campaign.parse(doc, default_name="w", base_dir=tmp_path))
        said = _checkpoint_warning(point, [], CAT18)
        assert bool(said) is warned
        if warned:
            assert "a trial measures 10 s of a write workload" in said[0]
