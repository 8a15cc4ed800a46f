"""The campaign schema (``pglab.campaign.schema``) against what it describes: parse.py accepts
and rejects the documents the JSON Schema does, the examples validate, and the docs' key table and
``pglab run --help`` are what the schema generates."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pglab.campaign import json_schema, schema
from pglab.campaign import parse as campaign
from pglab.campaign.identity import flat
from pglab.campaign.schema import TABLES, Key, Table
from pglab.campaign.spec import BUILTIN_SCRIPTS, DatasetSpec, TelemetrySpec
from pglab.cli import main
from pglab.errors import CampaignError
from pglab.workloads.work import OPERATION_KEYS, OPERATION_OPTIONS, TpchWork

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"  # base_dir of generated documents: it has insert-only.sql
SCRIPT_FILE = "insert-only.sql"
VALIDATOR = Draft202012Validator(json_schema.build())


def parses(doc: dict[str, Any]) -> bool:
    try:
        campaign.parse(doc, default_name="t", base_dir=EXAMPLES)
    except CampaignError:
        return False
    return True


def problems(doc: dict[str, Any]) -> str:
    with pytest.raises(CampaignError) as info:
        campaign.parse(doc, default_name="t", base_dir=EXAMPLES)
    return str(info.value)


def schema_errors(doc: dict[str, Any]) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


# -- the JSON Schema itself --------------------------------------------------------------------


def test_the_json_schema_is_draft_2020_12_with_a_description_on_every_property() -> None:
    doc = json_schema.build()
    Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] and doc["title"] and doc["description"]
    seen = 0

    def walk(node: Any, where: str) -> None:
        nonlocal seen
        if isinstance(node, dict):
            for name, prop in node.get("properties", {}).items():
                seen += 1
                assert prop.get("description"), f"{where}.{name} has no description"
            for key, val in node.items():
                walk(val, f"{where}.{key}")
        elif isinstance(node, list):
            for i, val in enumerate(node):
                walk(val, f"{where}[{i}]")

    walk(doc, "")
    assert seen > 80
    json.dumps(doc)  # plain data


def test_the_layout_is_declared_for_every_spec_field() -> None:
    # the dataset's kit is the phases' ([workload] kit), not a key of [dataset]; a replay's
    # dump, roles and databases are its workload file's ([workload] replay)
    own = {"kit", "dump", "roles", "databases"}
    assert {f for f in DatasetSpec.__dataclass_fields__} - own == schema.DATASET_KEYS
    assert {f for f in TelemetrySpec.__dataclass_fields__} == schema.TELEMETRY_KEYS
    names = [t.name for t in TABLES]
    tops = {t.name for t in TABLES[1:] if t.form != "sub"}
    assert len(names) == len(set(names)) and tops <= schema.TOP_KEYS
    for sub in (t for t in TABLES if t.form == "sub"):  # [server.build]: a key's table
        parent, key = sub.name.split(".")
        assert schema.key(schema.BY_NAME[parent], key).type == sub.name
    for table in TABLES:
        keys = [k.name for k in table.keys]
        assert len(keys) == len(set(keys)), table.name
        for k in table.keys:
            assert k.doc and "\n" not in k.doc and k.example is not None, (table.name, k.name)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_every_example_validates(path: Path) -> None:
    doc = tomllib.loads(path.read_text())
    assert schema_errors(doc) == []
    if path.name == "tune.toml":  # pglab run refuses it (a tune file); its campaign parses
        doc.pop("tune")
    assert parses(doc)


@pytest.mark.parametrize(
    ("tune", "word"),
    [({"trials": 0}, "less than the minimum"), ({"sampler": "bayes"}, "is not one of"),
     ({"knobs": {}}, "non-empty"), ({"knobs": {"shared_buffers": {"min": "1GB"}}}, "not valid"),
     ({"budget": 3}, "additional"), ({"knobs": {"work_mem": []}}, "not valid"),
     ({"memory_share": 1.5}, "greater than the maximum")],
)  # fmt: skip
def test_the_schema_refuses_what_pglab_tune_refuses(tune: dict, word: str) -> None:
    from pglab.tune.spec import parse_tune

    assert parse_tune(tune)[1], tune  # pglab tune says what is wrong
    said = schema_errors({"tune": tune})
    assert said and word in " ".join(said).lower(), said


# -- bad documents: parse.py and the schema both reject them ---------------------------------

BAD = [
    ({"max_duration": "soon"}, "max_duration = 'soon': expected seconds"),
    ({"max_duration": -5}, "max_duration = -5: expected seconds"),
    ({"repeats": 0}, "repeats = 0: expected an integer ≥ 1, or \"auto\""),
    ({"repeats": "3"}, "repeats = '3': expected an integer ≥ 1, or \"auto\""),
    ({"sequential": {"max": 5}}, '[sequential]: applies to repeats = "auto" only'),
    ({"repeats": True}, "repeats = True: expected an integer ≥ 1"),
    ({"repeat": 3}, 'unknown key "repeat" — did you mean "repeats"?'),
    ({"bogus": 1}, 'unknown key "bogus"'),
    ({"name": 5}, "name = 5: expected a string"),
    ({"order": "random"}, 'order = "random": use one of interleaved, sequential'),
    ({"on_error": "ignore"}, 'on_error = "ignore"'),
    ({"server": "embedded"}, "server must be a table"),
    ({"server": {"source": "docker"}}, 'source = "docker"'),
    ({"server": {"sorce": "embedded"}}, 'did you mean "source"?'),
    ({"server": {"bindir": "/x", "version": "16"}}, "give one of bindir, version"),
    ({"server": {"version": "16.2"}}, "version = '16.2': expected a major version"),
    ({"server": {"version": True}}, "version = True: expected a major version"),
    ({"server": {"build": "pg.tar.bz2"}}, "build must be a table ([server.build] keys)"),
    ({"server": {"build": {}}}, "source: a PostgreSQL source tree or release tarball"),
    ({"server": {"build": {"source": "x.tar.gz", "patchs": []}}}, 'did you mean "patches"?'),
    ({"server": {"build": {"source": "x.tar.gz", "patches": [1]}}}, "patches = [1]: expected"),
    ({"server": {"pgbench": 18}}, "pgbench = 18: expected newest, server or a bindir path"),
    ({"server": {"settings": {"work_mem": ["1MB"]}}}, "setting work_mem must be a single value"),
    ({"server": {"settings": "work_mem=1MB"}}, "settings must be a table"),
    ({"dataset": {"scale": 0}}, "scale = 0: expected a whole number from 1 to 1000000"),
    ({"dataset": {"scale": 1_000_001}}, "scale = 1000001"),
    ({"dataset": {"scale": 0.001}}, "scale = 0.001"),
    ({"dataset": {"fillfactor": 5}}, "fillfactor = 5"),
    ({"dataset": {"partitions": -1}}, "partitions = -1"),
    ({"dataset": {"reset": "sometimes"}}, 'reset = "sometimes"'),
    ({"dataset": {"partition_method": "list"}}, 'partition_method = "list"'),
    ({"dataset": {"unlogged_tables": "yes"}}, "unlogged_tables = 'yes': expected true or false"),
    ({"dataset": {"init_steps": "xyz"}}, "init_steps = 'xyz'"),
    ({"dataset": {"scael": 10}}, 'did you mean "scale"?'),
    ({"workload": {"clients": 0}}, "clients = 0"),
    ({"workload": {"clients": "8"}}, "clients = '8'"),
    ({"workload": {"threads": 0}}, "threads = 0"),
    ({"workload": {"threads": "many"}}, "threads = 'many'"),
    ({"workload": {"duration": 0}}, "duration = 0"),
    ({"workload": {"duraton": 5}}, 'did you mean "duration"?'),
    ({"workload": {"duration": 5, "transactions": 5}}, "not both"),
    ({"workload": {"transactions": 0}}, "transactions = 0"),
    ({"workload": {"rate": 0}}, "rate = 0"),
    ({"workload": {"rate": "fast"}}, "rate = 'fast'"),
    ({"workload": {"protocol": "binary"}}, 'protocol = "binary"'),
    ({"workload": {"latency_log": "sometimes"}}, 'latency_log = "sometimes"'),
    ({"workload": {"connect": "no"}}, "connect = 'no': expected true or false"),
    ({"workload": {"vacuum": 1}}, "vacuum = 1: expected true or false"),
    ({"workload": {"script": "tpcb_like"}}, 'did you mean "tpcb-like"?'),
    ({"workload": {"scripts": []}}, "scripts must be a non-empty array"),
    ({"workload": {"script": "select-only", "scripts": ["tpcb-like"]}}, "not both"),
    ({"workload": {"script": {"builtin": "tpcb-like", "weight": -1}}}, "weight -1"),
    ({"workload": {"script": {"weight": 2}}}, 'needs builtin = "..." or file = "..."'),
    ({"workload": {"script": 7}}, "script 7"),
    ({"phases": []}, "[[phases]]: must be a non-empty array of tables"),
    ({"phases": "warm-up"}, "[[phases]]: must be a non-empty array of tables"),
    ({"phases": [{"times": 0}]}, "times = 0"),
    ({"phases": [{"measured": "no"}]}, "measured = 'no'"),
    ({"phases": [{"tims": 2}]}, 'did you mean "times"?'),
    ({"phases": [{"clients": 0}]}, "clients = 0"),
    ({"variants": {"v": {"setings": {}}}}, 'did you mean "settings"?'),
    ({"variants": {"v": 3}}, "must be a table of overrides"),
    ({"variants": {"v": {"dataset": {"scale": 0}}}}, "scale = 0"),
    ({"variants": {"v": {"workload": {"clients": 0}}}}, "clients = 0"),
    ({"variants": {"v": {"server": {"source": "docker"}}}}, 'source = "docker"'),
    ({"variants": {"v": {"storage": 3}}}, "storage must be a target name or a table"),
    ({"matrix": {"clients": []}}, "clients must be a non-empty array"),
    ({"matrix": {"clients": 4}}, "clients must be a non-empty array"),
    ({"matrix": {"clients": [1, 0]}}, "clients = 0"),
    ({"matrix": {"reset": ["run"]}}, 'unknown key "reset"'),
    ({"matrix": {"scripts": [["tpcb-like"]]}}, 'unknown key "scripts"'),
    ({"matrix": {"clents": [1]}}, 'did you mean "clients"?'),
    ({"matrix": {"settings": {"work_mem": []}}}, "work_mem must be a non-empty array"),
    ({"matrix": {"settings": ["work_mem"]}}, "[matrix.settings]: must be a table"),
    ({"matrix": {"protocol": ["simple", "binary"]}}, 'protocol = "binary"'),
    ({"derived": [{"kind": "difference", "a": "main", "b": "main"}]}, 'kind = "difference"'),
    ({"derived": [{"a": "main"}]}, 'b = "None" is not a phase name'),
    ({"derived": [{"a": "main", "b": "main", "c": 1}]}, 'unknown key "c"'),
    ({"derived": {"a": "main", "b": "main"}}, "must be an array of tables"),
    ({"telemetry": {"waits_hz": 0}}, "waits_hz = 0: expected a number from 0.1 to 100"),
    ({"telemetry": {"stats_interval": 61}}, "stats_interval = 61"),
    ({"telemetry": {"buffers_interval": 0.4}}, "buffers_interval = 0.4"),
    ({"telemetry": {"stats_interval": "1s"}}, "stats_interval = '1s'"),
    ({"telemetry": {"enable": True}}, 'did you mean "enabled"?'),
    ({"telemetry": {"enabled": "yes"}}, "enabled = 'yes'"),
    ({"targets": {"a": {"kind": "zfs"}}}, 'kind = "zfs"'),
    ({"targets": {"a": {}}}, "kind = None"),
    ({"targets": {"a": "loop"}}, "must be a table"),
    ({"targets": {"a": {"kind": "tmpfs"}}}, "size = None"),
    ({"targets": {"a": {"kind": "tmpfs", "size": "1GB", "fstype": "xfs"}}},
     'key "fstype" does not apply to kind = "tmpfs"'),
    ({"targets": {"a": {"fstype": "ext4", "size": "1GB", "mkfs_opts": "-f"}}},
     'did you mean "mkfs_options"?'),
    ({"targets": {"a": {"kind": "loop", "fstype": "ntfs", "size": "1GB"}}}, 'fstype = "ntfs"'),
    ({"targets": {"a": {"kind": "loop", "size": "1GB"}}}, "fstype = None"),
    ({"targets": {"a": {"fstype": "ext4", "size": "lots"}}}, "size = 'lots'"),
    ({"targets": {"a": {"fstype": "ext4", "size": "0MB"}}}, "size = '0MB'"),
    ({"targets": {"a": {"fstype": "ext4", "size": -5}}}, "size = -5"),
    ({"targets": {"a": {"fstype": "ext4", "size": "1GB", "dir": "scratch"}}}, "dir = 'scratch'"),
    ({"targets": {"a": {"fstype": "ext4", "size": "1GB", "direct_io": "on"}}}, "direct_io"),
    ({"targets": {"a": {"fstype": "ext4", "size": "1GB", "mount_options": [""]}}},
     "mount_options = ['']"),
    ({"targets": {"a": {"path": "relative/dir"}}}, "path = 'relative/dir'"),
    ({"targets": {"a": {"path": "/srv", "size": "1GB"}}}, 'key "size" does not apply'),
    ({"targets": {"a": {"path": "/srv"}}, "storage": {"wall": "a"}}, 'did you mean "wal"?'),
    ({"targets": {"a": {"path": "/srv"}}, "storage": {"data": 5}}, "storage target 5"),
    ({"storage_bench": {"seconds": 0}}, "seconds = 0: expected a whole number ≥ 1"),
    ({"storage_bench": {"fi0": True}}, 'unknown key "fi0"'),
    ({"storage_bench": {"fio": "yes"}}, "fio = 'yes'"),
    ({"analysis": {"effect": 0}}, "effect = 0: expected a percentage from 0.1 to 500"),
    ({"analysis": {"effect": 501}}, "effect = 501"),
    ({"analysis": {"effect": "5%"}}, "effect = '5%'"),
    ({"analysis": {"efect": 5}}, 'did you mean "effect"?'),
    ({"analysis": {"equivalence": 0}}, "equivalence = 0: expected a percentage from 0.1 to 500"),
    ({"analysis": {"equivalence": "2%"}}, "equivalence = '2%'"),
    ({"analysis": {"equivalance": 2}}, 'did you mean "equivalence"?'),
    ({"fleet": {"spread": "hosts"}}, 'spread = "hosts": use one of coordinates, rounds'),
]  # fmt: skip


@pytest.mark.parametrize("doc, message", BAD, ids=[json.dumps(d)[:60] for d, _ in BAD])
def test_a_bad_document_is_rejected_by_parse_and_by_the_schema(doc: dict, message: str) -> None:
    assert message in problems(doc)
    assert schema_errors(doc), f"the JSON Schema accepts {doc}"


# -- the keys of each table: what parse.py accepts is what the schema lists -------------------


def _placed(table: Table, key: str, value: Any, kind: str | None = None) -> dict[str, Any]:
    """A document with ``key = value`` in ``table`` (a target of ``kind``)."""
    if not table.name:
        return {key: value}
    if table.form == "sub":  # [server.build]: with the key every build needs
        parent, inner = table.name.split(".")
        return {parent: {inner: {"source": "pg.tar.bz2", key: value}}}
    if key in OPERATION_KEYS and table.name in ("workload", "phases"):  # with an operation
        op = next(o for o, keys in OPERATION_OPTIONS.items() if key in keys)
        return {table.name: {"operation": op, key: value} if table.form == "table"
                else [{"operation": op, key: value}]}  # fmt: skip
    if key in TpchWork.KEYS and table.name in ("workload", "phases"):  # with its kit
        item = {"kit": "tpch", key: value}
        return {table.name: item if table.form == "table" else [item]}
    if table is schema.DATASET and key in ("fields", "field_length"):  # the shape of YCSB's
        return {"dataset": {key: value}, "workload": {"kit": "ycsb"}}
    if table is schema.SEQUENTIAL:  # the settings of repeats = "auto"
        return {"repeats": "auto", table.name: {key: value}}
    if table.form == "table":
        return {table.name: {key: value}}
    if table.form == "array":
        return {table.name: [{key: value}]}
    item = {key: value} if kind is None else {"kind": kind, key: value}
    if table is schema.HOSTS and key != "ssh":
        item = {"ssh": "bench@10.0.0.1", **item}  # the key every host needs
    return {table.name: {"x": item}}


CANDIDATES = sorted({k.name for t in TABLES for k in t.keys} | {t.name for t in TABLES}
                    | {"bogus", "setting", "scripts_", "kinds"})  # fmt: skip


def accepted_by_parse(table: Table, kind: str | None = None) -> set[str]:
    """The keys parse.py takes in ``table``: those it does not call unknown."""
    out = set()
    for name in CANDIDATES:
        try:
            campaign.parse(_placed(table, name, None, kind), default_name="t")
        except CampaignError as exc:
            if f'unknown key "{name}"' in str(exc) or f'key "{name}" does not apply' in str(exc):
                continue
        out.add(name)
    return out


def schema_keys(table: Table, kind: str | None = None) -> set[str]:
    defs = json_schema.build()["$defs"]
    if not table.name:
        return set(json_schema.build()["properties"])
    node = defs[schema.def_name(table)]
    if kind is not None:
        (branch,) = [b for b in node["oneOf"] if b["properties"]["kind"]["const"] == kind]
        return set(branch["propertyNames"]["enum"])
    return set(node["properties"])


@pytest.mark.parametrize("table", [t for t in TABLES if t is not schema.TARGETS],
                         ids=lambda t: t.name or "top")  # fmt: skip
def test_parse_takes_exactly_the_keys_the_schema_lists(table: Table) -> None:
    tune = {"tune"} if not table.name else set()  # pglab tune's table (tune/spec.py)
    assert accepted_by_parse(table) == schema_keys(table) - tune


@pytest.mark.parametrize("kind", schema.TARGET_KEYS)
def test_parse_takes_exactly_the_target_keys_the_schema_lists(kind: str) -> None:
    assert accepted_by_parse(schema.TARGETS, kind) == schema_keys(schema.TARGETS, kind)


def test_the_defaults_are_what_parse_fills_in() -> None:
    c = campaign.parse({"storage_bench": {}, "derived": [{"a": "main", "b": "main"}]}, "t")
    (variant,) = c.variants
    (phase,) = variant.phases
    told = SimpleNamespace(**flat(phase))  # every kind's fields, as the file gives them
    objects = {
        "": c, "server": variant.server, "dataset": variant.dataset, "workload": told,
        "phases": told, "telemetry": c.telemetry, "storage_bench": c.storage_bench,
        "derived": c.derived[0],
    }  # fmt: skip
    renamed = {("analysis", "effect"): c.effect_pct, ("workload", "threads"): phase.threads
               or "auto", ("workload", "script"): phase.pgbench.scripts[0].builtin}  # fmt: skip
    checked = 0
    for table in TABLES:
        for k in table.keys:
            if k.default is None or k.default_doc and table.name != "storage_bench":
                continue
            if (table.name, k.name) in renamed:
                got = renamed[table.name, k.name]
            elif table.name in objects:
                got = getattr(objects[table.name], k.name)
            else:
                continue
            assert got == k.default, (table.name, k.name, got, k.default)
            checked += 1
    assert checked >= 25


RANGED = [(t, k) for t in TABLES for k in t.keys
          if k.minimum is not None or k.maximum is not None or k.above is not None]  # fmt: skip


@pytest.mark.parametrize("table, k", RANGED, ids=[f"{t.name}.{k.name}" for t, k in RANGED])
def test_a_range_is_the_one_parse_checks(table: Table, k: Key) -> None:
    """Each end of the range is taken by both, and just beyond it refused by both."""
    step = 1 if k.type == "integer" else 0.001
    inside, outside = [], []
    if k.minimum is not None:
        inside.append(k.minimum)
        outside.append(k.minimum - step)
    if k.maximum is not None:
        inside.append(k.maximum)
        outside.append(k.maximum + step)
    if k.above is not None:
        inside.append(k.above + step)
        outside.append(k.above)
    for value in inside:
        doc = _placed(table, k.name, value)
        assert schema_errors(doc) == [] and parses(doc), (k.name, value)
    for value in outside:
        doc = _placed(table, k.name, value)
        assert schema_errors(doc) and f"{k.name} = " in problems(doc), (k.name, value)


# -- documents generated from the schema's description --------------------------------------

TARGET_NAMES = ("t1", "t2", "t3")
_names = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=8)
_scalar = st.one_of(st.text(max_size=6), st.integers(-(2**40), 2**40), st.booleans(),
                    st.floats(allow_nan=False, allow_infinity=False))  # fmt: skip
_script = st.one_of(
    st.sampled_from(BUILTIN_SCRIPTS), st.just(SCRIPT_FILE),
    st.fixed_dictionaries({"builtin": st.sampled_from(BUILTIN_SCRIPTS)},
                          optional={"weight": st.integers(0, 100)}),
    st.fixed_dictionaries({"file": st.just(SCRIPT_FILE)}, optional={"weight": st.integers(0, 9)}),
)  # fmt: skip
_setting_names = st.sampled_from(["work_mem", "shared_buffers", "jit", "x.y"])
SHAPE_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "script": _script,
    "scripts": st.lists(_script, min_size=1, max_size=3),
    "repeats": st.sampled_from([1, 3]),  # "auto" takes [sequential] and interleaved order
    "threads": st.sampled_from(["auto", 1]),  # threads ≤ clients is not the schema's to say
    "seed": st.sampled_from(["time", "rand", 0, 42, 2**64 - 1]),
    "settings": st.dictionaries(_setting_names, _scalar, max_size=3),
    "axis_settings": st.dictionaries(
        _setting_names, st.lists(_scalar, min_size=1, max_size=3), max_size=2
    ),  # fmt: skip
    # what it names is the file's (_fit_reference)
    "reference": st.fixed_dictionaries({}, optional={"variant": _names, "x": _scalar}),
    "size": st.sampled_from(["1GB", "300MB", "512MiB", " 2g ", 2**30, "0.5TB"]),
    "options": st.one_of(st.text(max_size=10), st.lists(st.sampled_from(["noatime", "-J"]))),
    "path": st.sampled_from(["/mnt/x", "/srv", "/"]),
    "columns": st.sampled_from(["abalance", ["bid"], ["bid", "abalance"]]),
    # a whole number: a fraction is kit = "tpch"'s (tests/unit/test_tpch_campaign.py)
    "scale": st.sampled_from([1, 10, 1_000_000]),
    "queries": st.sampled_from([[1], [9, 1], list(range(1, 23))]),
    "target_name": st.sampled_from(TARGET_NAMES),
    "target_names": st.lists(st.sampled_from(TARGET_NAMES), min_size=1, max_size=3),
    "duration": st.sampled_from([5400, 0.5, "90s", "30min", "2h", "1h30min", " 2 h "]),
    "think_time": st.sampled_from([0, 2.5, "0ms", "100ms", "12s", " 1.5 s "]),
    # one generator: a phase always has a client for it (several: tests of hosts.py)
    "host_names": st.sampled_from(["local", ["local"], "gen1", ["gen2"]]),
    "major": st.sampled_from(["16", 15, "18"]),
    "server.build": st.fixed_dictionaries(
        {"source": st.sampled_from(["postgresql-15.18.tar.bz2", "/src/postgresql"])},
        optional={
            "options": st.lists(st.sampled_from(["--enable-debug", "-Dcassert=true"])),
            "patches": st.lists(st.sampled_from(["a.patch", "/p/b.diff"])),
        },
    ),  # fmt: skip
}
SPECIAL: dict[tuple[str, str], st.SearchStrategy[Any]] = {
    ("server", "bindir"): _names,  # source = "bindir" needs one that is not empty
    ("hosts", "ssh"): st.sampled_from(["root@10.0.0.1", "gen.example.com", "b@[fe80::1]"]),
    # "local": this machine (a host's name must be a [hosts] table, without a dsn, storage
    # targets or copy resets: test_server_host_units.py)
    ("server", "host"): st.just("local"),
    ("server", "dsn"): st.sampled_from(
        ["postgresql://bench@db1:5432/postgres", "host=db1 user=bench", "service=staging", ""]
    ),
}


def values(k: Key, table: str = "") -> st.SearchStrategy[Any]:
    """Valid values of ``k``, from its declaration: choices, type, range, pattern."""
    if (table, k.name) in SPECIAL:
        return SPECIAL[table, k.name]
    if k.choices:
        return st.sampled_from(k.choices)
    if k.type == "integer":
        low = int(k.minimum) if k.minimum is not None else -1000
        return st.integers(low, int(k.maximum) if k.maximum is not None else low + 10**6)
    if k.type == "number":
        low = k.minimum if k.minimum is not None else k.above or 0.0
        high = k.maximum if k.maximum is not None else 1e9
        return st.floats(low, high, exclude_min=k.above is not None) | st.integers(
            int(low) + 1, int(high))  # fmt: skip
    if k.type == "boolean":
        return st.booleans()
    if k.type == "string":
        return st.from_regex(k.pattern, fullmatch=True) if k.pattern else _names
    return SHAPE_VALUES[k.type]


@st.composite
def table_of(draw, table: Table, keys: tuple[Key, ...] | None = None) -> dict[str, Any]:
    out = {}
    for k in keys if keys is not None else table.keys:
        if draw(st.booleans()):
            out[k.name] = draw(values(k, table.name))
    for a, b in table.exclusive:
        if a in out and b in out:
            del out[draw(st.sampled_from((a, b)))]
    return out


@st.composite
def servers(draw) -> dict[str, Any]:
    server = draw(table_of(schema.SERVER))
    named = [k for k in ("bindir", "build", "version") if k in server]
    source = server.get("source", named[0] if named else "")
    if source in ("bindir", "build", "version"):  # the key of that source, and no other
        for other in named:
            if other != source:
                del server[other]
        if not server.get(source):
            server[source] = draw(values(schema.key(schema.SERVER, source)))
        if source == "bindir":
            server["bindir"] = server.get("bindir") or "/usr/lib/postgresql/15/bin"
    return server


@st.composite
def targets(draw) -> dict[str, Any]:
    out = {}
    for name in draw(st.lists(st.sampled_from(TARGET_NAMES), unique=True, max_size=3)):
        kind = draw(st.sampled_from(list(schema.TARGET_KEYS)))
        keys = tuple(k for k in schema.TARGETS.keys if kind in k.kinds)
        target = draw(table_of(schema.TARGETS, keys))
        for key in schema.TARGET_REQUIRED[kind]:
            target[key] = draw(values(schema.key(schema.TARGETS, key)))
        target["kind"] = kind
        out[name] = target
    return out


@st.composite
def documents(draw) -> dict[str, Any]:  # noqa: C901 (one draw per section, in the file's order)
    """A campaign document from the schema's declarations, references kept consistent (names
    of phases and storage targets), that parse.py is expected to accept."""
    doc = draw(table_of(schema.TOP))
    parts: dict[str, Any] = {
        "server": servers(),
        "dataset": table_of(schema.DATASET),
        "workload": table_of(schema.WORKLOAD),
        "phases": st.lists(table_of(schema.PHASES, schema.PHASES.keys[1:] +
                                    schema.WORKLOAD.keys), min_size=1, max_size=3),
        "telemetry": table_of(schema.TELEMETRY),
        "storage_bench": table_of(schema.STORAGE_BENCH),
        "analysis": table_of(schema.ANALYSIS),
        "targets": targets(),
        "hosts": st.dictionaries(st.sampled_from(["gen1", "gen2", "gen3"]),
                                 table_of(schema.HOSTS), max_size=2),
    }  # fmt: skip
    for name, strategy in parts.items():
        if draw(st.booleans()):
            doc[name] = draw(strategy)
    phases = doc.get("phases", [])
    for i, phase in enumerate(phases):
        phase["name"] = f"p{i}"
        for a, b in schema.WORKLOAD.exclusive:
            if a in phase and b in phase:
                del phase[b]
    defined = sorted(doc.get("targets", {}))
    if defined:
        target = st.sampled_from(defined)
        if draw(st.booleans()):
            doc["storage"] = draw(
                st.fixed_dictionaries({}, optional={"data": target, "wal": target})
            )
        for axis in schema.STORAGE_AXES:
            if draw(st.booleans()):
                doc.setdefault("matrix", {})[axis] = draw(st.lists(target, min_size=1))
    if draw(st.booleans()):
        axes = [k for k in schema.WORKLOAD.keys + schema.DATASET.keys if k.axis]
        for k in draw(st.lists(st.sampled_from(axes), unique_by=lambda k: k.name, max_size=3)):
            doc.setdefault("matrix", {})[k.name] = draw(st.lists(values(k), min_size=1, max_size=3))
        if draw(st.booleans()):
            doc.setdefault("matrix", {})["settings"] = draw(SHAPE_VALUES["axis_settings"])
    if draw(st.booleans()):
        names = [p["name"] for p in phases] or ["main"]
        derived = draw(st.lists(table_of(schema.DERIVED, schema.DERIVED.keys[:2]), max_size=2))
        for d in derived:
            d.update(a=draw(st.sampled_from(names)), b=draw(st.sampled_from(names)))
        doc["derived"] = derived
    variants = {}
    for name in draw(st.lists(_names, unique=True, max_size=3)):
        variant = draw(table_of(schema.VARIANTS, schema.VARIANTS.keys[:2]))
        for key, strategy in (("server", servers()), ("dataset", table_of(schema.DATASET)),
                              ("workload", table_of(schema.WORKLOAD))):  # fmt: skip
            if draw(st.booleans()):
                variant[key] = draw(strategy)
        if defined and draw(st.booleans()):
            variant["storage"] = draw(st.sampled_from(defined))
        variants[name] = variant
    if variants:
        doc["variants"] = variants
    _fit_existing(doc)
    _fit_hosts(doc)
    _fit_operations(doc)
    _fit_kits(doc)
    _fit_progress(doc)
    _fit_sampling(doc)
    _fit_reference(doc)
    return doc


def _fit_reference(doc: dict[str, Any]) -> None:
    """What the schema cannot say: ``[analysis] reference`` names a variant and compared axes
    of the file, at one of their values: a variant of the file's where it names one, else
    the key left out (tests/unit/test_engine.py parses references)."""
    ref = doc.get("analysis", {}).get("reference")
    if ref is None:
        return
    variants = list(doc.get("variants", {}))
    ref.clear()
    if variants:
        ref["variant"] = variants[-1]


def _fit_progress(doc: dict[str, Any]) -> None:
    """What the schema cannot say: progress = false needs latency_log = "aggregate" in every
    phase it reaches: then every table's log is the aggregate one."""
    workload = doc.get("workload", {})
    tables = [workload, *doc.get("phases", []), doc.get("matrix", {}),
              *(v.get("workload", {}) for v in doc.get("variants", {}).values())]  # fmt: skip
    said = [t["progress"] for t in tables if "progress" in t]
    if not any(v is False for s in said for v in (s if isinstance(s, list) else [s])):
        return
    doc["workload"] = workload
    workload["latency_log"] = "aggregate"
    for t in tables[1:]:
        if "latency_log" in t:
            t["latency_log"] = ["aggregate"] if isinstance(t["latency_log"], list) else "aggregate"


def _fit_sampling(doc: dict[str, Any]) -> None:
    """What the schema cannot say: sampling_rate needs latency_log = "full" (pgbench refuses it
    without -l or with an aggregated log): left out where any table sets another log."""
    tables = [doc.get("workload", {}), *doc.get("phases", []), doc.get("matrix", {}),
              *(v.get("workload", {}) for v in doc.get("variants", {}).values())]  # fmt: skip
    logs = [t["latency_log"] for t in tables if "latency_log" in t]
    if any(v != "full" for log in logs for v in (log if isinstance(log, list) else [log])):
        for t in tables:
            t.pop("sampling_rate", None)


def _fit_operations(doc: dict[str, Any]) -> None:
    """What the schema cannot say: an operation's option needs a phase running an operation
    that takes it (in its table, or among the phases a [matrix] axis or a variant reaches); a
    restore needs a dump before it (made dumps here)."""

    def op_of(table: dict[str, Any], base: str | None) -> str | None:
        if "operation" in table:
            return str(table["operation"])
        return None if "script" in table or "scripts" in table else base

    def strip(table: dict[str, Any], ops: set[str | None]) -> None:
        taken = {k for op in ops if op for k in OPERATION_OPTIONS[op]}
        for k in OPERATION_KEYS:
            if k in table and k not in taken:
                del table[k]

    tables = [doc.get("workload", {}), *doc.get("phases", [])]
    for t in tables + [v.get("workload", {}) for v in doc.get("variants", {}).values()]:
        if t.get("operation") == "restore":  # it needs a dump phase before it: made a dump
            t["operation"] = "dump"
    work = doc.get("workload", {})
    base = op_of(work, None)
    strip(work, {base})
    ops: set[str | None] = set()
    for phase in doc.get("phases", []) or [{}]:
        ops.add(op := op_of(phase, base))
        strip(phase, {op})
    kinds = {op_of(ph, base) is None for ph in doc.get("phases", []) if ph.get("measured", True)}
    for phase in doc.get("phases", []) if len(kinds) > 1 else []:
        if op_of(phase, base) is not None:  # a run's measured phases: TPS or MB/s, not both
            phase["measured"] = False
    final: set[str | None] = set()  # the operations of the phases the variants run
    for v in doc.get("variants", {}).values():
        vwork = v.get("workload", {})
        vops = {op_of(vwork, op) for op in ops}
        strip(vwork, vops)
        final |= vops
    strip(doc.get("matrix", {}), final if doc.get("variants") else ops)


def _fit_kits(doc: dict[str, Any]) -> None:
    """What the schema cannot say: a mode needs a kit, a test sysbench, a record shape YCSB,
    pacing and think_time TPC-C, and a kit (or sysbench) every phase of the run (its tables
    are the dataset); a replay an existing workload file. They are left out here;
    tests/unit/test_kit_spec.py, test_tpcc_pacing.py and test_replay_spec.py parse them."""
    tables = [doc.get("workload", {}), *doc.get("phases", []), doc.get("matrix", {})]
    tables += [v.get("workload", {}) for v in doc.get("variants", {}).values()]
    for table in tables:
        for key in ("kit", "mode", "distribution", "generator", "test", "pacing", "think_time",
                    "replay", *TpchWork.KEYS):  # fmt: skip
            table.pop(key, None)
    datasets = [doc.get("dataset", {}), doc.get("matrix", {})]
    datasets += [v.get("dataset", {}) for v in doc.get("variants", {}).values()]
    for dataset in datasets:  # the shape of YCSB's records, without YCSB
        for key in ("fields", "field_length"):
            dataset.pop(key, None)


def _fit_hosts(doc: dict[str, Any]) -> None:
    """Every host a phase names as a generator is defined (the schema cannot say), with the
    ssh every host needs."""
    hosts = doc.setdefault("hosts", {})
    for host in hosts.values():
        host.setdefault("ssh", "root@10.0.0.1")
    tables = [doc.get("workload", {}), *doc.get("phases", [])]
    tables += [v.get("workload", {}) for v in doc.get("variants", {}).values()]
    for t in tables:
        names = t.get("generators", [])
        for name in [names] if isinstance(names, str) else names:
            if name != "local":
                hosts.setdefault(name, {"ssh": f"root@{name}.example.com"})
    if not hosts:
        del doc["hosts"]


def _fit_existing(doc: dict[str, Any]) -> None:
    """What the schema cannot say: manage and database need a dsn (here or in the base), and a
    reset a copy makes is refused where it was said for an existing server, "reinit" for a
    server pglab makes (parse.py's ``_reset_for``)."""
    base_server, base_ds = doc.get("server", {}), doc.get("dataset", {})
    base_dsn = "dsn" in base_server
    for server in [base_server] + [v.get("server", {}) for v in doc.get("variants", {}).values()]:
        if not base_dsn and "dsn" not in server:
            server.pop("manage", None)
            server.pop("database", None)
    variants = list(doc.get("variants", {}).values())
    if not variants and base_ds.get("reset") in (("run", "point") if base_dsn else ("reinit",)):
        base_ds["reset"] = "never" if base_dsn else "run"
    for v in variants:
        dsn = base_dsn or "dsn" in v.get("server", {})
        own = v.get("dataset", {})
        said = own if "reset" in own else base_ds
        if dsn and said.get("reset") in ("run", "point") and (said is own or base_dsn):
            said["reset"] = "never"
        if not dsn and said.get("reset", "run") == "reinit":
            said["reset"] = "run"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents())
def test_a_document_made_from_the_schema_is_valid_for_both(doc: dict[str, Any]) -> None:
    assert schema_errors(doc) == []
    campaign.parse(doc, default_name="t", base_dir=EXAMPLES)  # no CampaignError


def mutations(k: Key) -> list[Any]:
    """Values of ``k`` that break its declaration (and that parse.py checks)."""
    bad: list[Any] = []
    if k.choices:
        bad.append("not-" + str(k.choices[0]))
    if k.type in ("integer", "number", "boolean", "threads") or k.choices:
        bad.append({"a": 1} if k.type != "boolean" else "yes")
    if k.type in ("integer", "number"):
        bad.append("3")
        if k.minimum is not None:
            bad.append(k.minimum - (1 if k.type == "integer" else k.minimum / 2 or 0.5))
        if k.maximum is not None:
            bad.append(k.maximum + 1)
        if k.above is not None:
            bad.append(k.above)
    if k.type == "threads":
        bad.append(0)
    return bad


MUTABLE = [schema.TOP, schema.DATASET, schema.WORKLOAD, schema.PHASES, schema.TELEMETRY,
           schema.STORAGE_BENCH, schema.ANALYSIS, schema.DERIVED]  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents(), data=st.data())
def test_a_document_broken_against_the_schema_is_rejected_by_both(doc: dict, data) -> None:
    table = data.draw(st.sampled_from(MUTABLE))
    keys = table.keys + (schema.WORKLOAD.keys if table is schema.PHASES else ())
    k = data.draw(st.sampled_from([k for k in keys if mutations(k)] + [None]))
    value = data.draw(st.sampled_from(mutations(k))) if k else 1
    name = k.name if k else data.draw(st.sampled_from(keys)).name + "z"  # a misspelled key
    where = doc
    if table.form == "array":
        phase = [p["name"] for p in doc.get("phases", [])] or ["main"]
        items = doc.get(table.name) or [{"a": phase[0], "b": phase[0]} if table is
                                        schema.DERIVED else {}]  # fmt: skip
        doc[table.name] = items
        where = items[0]
    elif table.name:
        where = doc.setdefault(table.name, {})
    where[name] = value
    assert schema_errors(doc), f"the JSON Schema accepts {name} = {value!r}"
    assert name in problems(doc)


# -- what is generated from the schema is what the docs and --help show ---------------------


def test_the_docs_campaign_page_is_made_from_the_schema() -> None:
    """The documentation's campaign file reference is made from ``docs_table`` when the site is
    built (docs/hooks/reference.py; tests/integration/test_docs_site.py checks the built page):
    the page asks for it, and the table has a row for every table and key."""
    page = (REPO / "docs" / "reference" / "campaign-file.md").read_text()
    assert "<!-- pglab:campaign-keys -->" in page
    table = schema.docs_table()
    for t in TABLES:
        if t.name:
            assert f"| `{t.header}` |" in table, t.header
        for k in t.keys:
            assert f"| `{k.name}` |" in table, (t.name, k.name)


def test_run_help_shows_the_generated_layout(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert schema.help_layout() in capsys.readouterr().out
    layout = schema.help_layout()
    assert max(len(line) for line in layout.splitlines()) <= schema.WIDTH
    for table in TABLES[1:]:
        assert f"[{table.name}" in layout
    for k in (k for t in TABLES for k in t.keys):
        assert re.search(rf"^  (# )?{k.name} = ", layout, re.M) or k.subtable, k.name


def test_the_layout_is_a_campaign_file_the_schema_accepts() -> None:
    layout = schema.help_layout()
    body = layout[layout.index("\n  ") :]
    doc = tomllib.loads(body)
    assert schema_errors(doc) == []
    assert set(doc) == schema.TOP_KEYS


# -- pglab schema ------------------------------------------------------------------------------


def test_pglab_schema_prints_the_json_schema(capsys) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == json_schema.build()


def test_pglab_schema_writes_it_to_a_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "campaign.schema.json"
    assert main(["schema", "-o", str(out)]) == 0
    assert json.loads(out.read_text()) == json_schema.build()
    assert capsys.readouterr().out == ""


def test_the_docs_export_columns_are_made_from_the_code() -> None:
    from pglab.analysis import tidy

    page = (REPO / "docs" / "reference" / "export-columns.md").read_text()
    assert "<!-- pglab:export-columns -->" in page
    assert all(f"| `{c.name}` | {c.doc} |" in tidy.docs_table() for c in tidy.COLUMNS)


def test_the_store_s_pglab_runs_view_has_the_export_s_columns() -> None:
    """Migration 4 froze the export's columns into the view: a change of the export's columns
    needs a new migration that recreates it."""
    from pglab.analysis import tidy
    from pglab.store import schema as store_schema

    assert store_schema.V4_COLUMNS == tidy.NAMES
