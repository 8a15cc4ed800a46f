"""settings against real catalogs: pg_settings of PostgreSQL 15.18 (Debian) and 18.6 (the embedded
wheel), saved by running ``settings.CATALOG_SQL`` in tests/data/pg_settings_{15,18}.json.

The verdicts below were checked against the servers themselves (``ALTER SYSTEM SET`` / ``SET``)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from pglab.errors import SettingsError
from pglab.postgres import settings
from pglab.postgres.settings import SettingDef, check_value, needs_restart, same_value, validate

DATA = Path(__file__).resolve().parents[1] / "data"
VERSIONS = ("15", "18")


@functools.cache
def catalog(version: str) -> dict[str, SettingDef]:
    rows = json.loads((DATA / f"pg_settings_{version}.json").read_text())
    return settings.catalog_from_rows(rows)


@pytest.fixture(params=VERSIONS)
def cat(request: pytest.FixtureRequest) -> dict[str, SettingDef]:
    return catalog(request.param)


def problem(cat: dict[str, SettingDef], name: str, value: str) -> str | None:
    return check_value(cat[name], value)


# -- the catalog -------------------------------------------------------------------------------


def test_catalog_sql_reads_the_columns_from_row_needs() -> None:
    for column in (
        "name",
        "vartype",
        "unit",
        "min_val",
        "max_val",
        "enumvals",
        "context",
        "boot_val",
        "reset_val",
    ):
        assert column in settings.CATALOG_SQL
    assert "FROM pg_settings" in settings.CATALOG_SQL
    assert "WHERE" not in settings.CATALOG_SQL


def test_from_row(cat: dict[str, SettingDef]) -> None:
    sb = cat["shared_buffers"]
    assert (sb.vartype, sb.unit, sb.min_val, sb.max_val, sb.context) == (
        "integer",
        "8kB",
        16.0,
        1073741823.0,
        "postmaster",
    )
    assert sb.reset_val == "16384"
    assert cat["wal_sync_method"].enumvals[:2] == ("fsync", "fdatasync")
    assert cat["work_mem"].enumvals == ()
    assert cat["random_page_cost"].max_val == pytest.approx(1.79769e308)
    row = {
        "name": "x",
        "vartype": "string",
        "unit": None,
        "min_val": None,
        "max_val": None,
        "enumvals": None,
        "context": "user",
        "boot_val": "",
        "reset_val": "",
    }
    assert SettingDef.from_row(row) == SettingDef("x", "string", boot_val="", reset_val="")


def test_every_default_is_accepted(cat: dict[str, SettingDef]) -> None:
    for defn in cat.values():
        for value in (defn.boot_val, defn.reset_val):
            if value is not None and defn.vartype != "string":
                assert check_value(defn, value) is None, (defn.name, value)


# -- numbers -----------------------------------------------------------------------------------

ACCEPTED = (
    [
        ("shared_buffers", v)
        for v in (
            "128MB",
            "1GB",
            "1.5GB",
            "131072",
            "16",
            "128kB",
            "1 GB",
            " 1GB ",
            "\t64MB",
            "0x10",
            "1e3",
        )
    ]
    + [("work_mem", v) for v in ("4MB", "1.5MB", "64kB", "0100", "0x1000", "64.4kB", "2047GB ")]
    + [("checkpoint_timeout", v) for v in ("5min", "30s", "1d", "300", "1h", "0.5h", "30000ms")]
    + [("statement_timeout", v) for v in ("0", "1.5s", "250ms", "1min", "1500us", "1e3")]
    + [
        ("log_min_duration_statement", "-1"),
        ("max_connections", "1"),
        ("max_connections", "+5"),
        ("random_page_cost", "1.1"),
        ("random_page_cost", "1e1"),
        ("random_page_cost", "0x10"),
        ("random_page_cost", ".5"),
        ("vacuum_cost_delay", "2ms"),
        ("vacuum_cost_delay", "0.5"),
        ("vacuum_cost_delay", "500us"),
        ("cursor_tuple_fraction", "1"),
    ]
)


@pytest.mark.parametrize(("name", "value"), ACCEPTED)
def test_accepted_numbers(cat: dict[str, SettingDef], name: str, value: str) -> None:
    assert problem(cat, name, value) is None


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "shared_buffers",
            "12XB",
            'shared_buffers = "12XB": invalid value; expected an integer '
            "with an optional unit (B, kB, MB, GB, TB), between 128kB and 8TB",
        ),
        ("shared_buffers", "1gb", "invalid value"),  # units are case-sensitive
        ("shared_buffers", "1 G B", "invalid value"),
        ("shared_buffers", "8191B", "below the minimum 128kB"),  # rounds to 1 block
        ("shared_buffers", "8TB", "above the maximum 8589934584kB (about 8TB)"),
        ("work_mem", "08", "invalid value"),  # octal: strtol stops at the 8
        ("work_mem", "010", "below the minimum 64kB"),  # octal 8
        ("work_mem", "3TB", "above the maximum 2147483647kB (about 2TB)"),
        ("work_mem", "2TB", "above the maximum 2147483647kB (about 2TB)"),  # 1kB too much
        ("work_mem", "63.4kB", "below the minimum 64kB"),
        ("work_mem", "-.5", "invalid value"),
        ("work_mem", " .5", "invalid value"),
        ("work_mem", "1,000", "invalid value"),
        ("work_mem", "", "invalid value"),
        ("checkpoint_timeout", "10s", 'checkpoint_timeout = "10s": below the minimum 30s'),
        ("checkpoint_timeout", "2d", "above the maximum 1d"),
        (
            "checkpoint_timeout",
            "5 mins",
            "invalid value; expected an integer with an optional "
            "unit (us, ms, s, min, h, d), between 30s and 1d",
        ),
        ("checkpoint_timeout", "5m", "invalid value"),
        ("checkpoint_timeout", "5MB", "invalid value"),
        ("max_connections", "0", 'max_connections = "0": below the minimum 1'),
        ("max_connections", "1000000", "above the maximum 262143"),
        ("max_connections", "100kB", "invalid value; expected an integer, between 1 and 262143"),
        ("geqo_threshold", "x", "invalid value; expected an integer, at least 2"),
        ("statement_timeout", "1e400", "invalid value"),  # strtod overflow
        ("statement_timeout", "1e-310", "invalid value"),  # strtod underflow, ERANGE
        ("statement_timeout", "2147483648", "above the maximum 2147483647ms (about 24.86d)"),
        ("log_min_duration_statement", "x", "between -1 and 24.86d"),
        ("random_page_cost", "-1", "below the minimum 0"),
        ("random_page_cost", "fast", "invalid value; expected a number, at least 0"),
        ("random_page_cost", "nan", "invalid value"),
        ("random_page_cost", "inf", "above the maximum"),
        ("random_page_cost", "1ms", "invalid value"),
        ("vacuum_cost_delay", "101", "above the maximum 100ms"),
        (
            "vacuum_cost_delay",
            "1x",
            "invalid value; expected a number with an optional unit "
            "(us, ms, s, min, h, d), between 0 and 100ms",
        ),
    ],
)
def test_rejected_numbers(cat: dict[str, SettingDef], name: str, value: str, message: str) -> None:
    got = problem(cat, name, value)
    assert got is not None and message in got, got
    assert got.startswith(f'{name} = "{value}": ')


@pytest.mark.parametrize(
    ("name", "value", "base"),
    [
        ("shared_buffers", "1GB", 131072),
        ("shared_buffers", "1.5GB", 196608),
        ("shared_buffers", "0x1E3kB", 60),  # 483 kB = 60.375 blocks
        ("shared_buffers", "0x1.8", 2),  # a hex float, rounded half to even
        ("work_mem", "30.1GB", 31561728),  # 30822.4 MB rounded to 30822 MB first
        ("work_mem", "1.5kB", 2),
        ("work_mem", "2.5kB", 2),  # half to even
        ("work_mem", "3.5kB", 4),
        ("work_mem", "010", 8),
        ("work_mem", "010.5", 10),  # a '.' makes it a decimal float
        ("work_mem", "010e1", 100),
        ("work_mem", "0X1f", 31),
        ("work_mem", "0x1e", 30),  # 'e' is a hex digit here
        ("work_mem", "1e3", 1000),
        ("work_mem", "\t5 ", 5),
        ("work_mem", ".5", 0),
        ("checkpoint_timeout", "1.5min", 90),
        ("checkpoint_timeout", "0.5h", 1800),
        ("statement_timeout", "0.5s", 500),
        ("statement_timeout", "1500us", 2),
        ("random_page_cost", "010", 10.0),  # reals are never octal
        ("random_page_cost", "0x10", 16.0),
        ("vacuum_cost_delay", "1.3125ms", 1.312),  # rounded to whole microseconds
        ("vacuum_cost_delay", "1.3125", 1.3125),  # a bare number is not rounded
    ],
)
def test_conversion_to_base_units(
    cat: dict[str, SettingDef], name: str, value: str, base: float
) -> None:
    assert settings._number(cat[name], value) == pytest.approx(base, rel=1e-12)


# -- booleans and enums ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["on", "OFF", "t", "tr", "TRUE", "fa", "y", "Ye", "n", "no", "of", "1", "0"]
)
def test_accepted_booleans(cat: dict[str, SettingDef], value: str) -> None:
    assert problem(cat, "enable_seqscan", value) is None


@pytest.mark.parametrize("value", ["o", " on", "on ", "maybe", "2", "01", "truex", "nope", ""])
def test_rejected_booleans(cat: dict[str, SettingDef], value: str) -> None:
    assert problem(cat, "enable_seqscan", value) == (
        f'enable_seqscan = "{value}": not a boolean; expected on, off, true, false, yes, no, 1 or 0'
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("wal_sync_method", "fdatasync"),
        ("wal_sync_method", "OPEN_SYNC"),
        ("synchronous_commit", "Remote_Apply"),
        ("synchronous_commit", "TRUE"),
        ("synchronous_commit", "0"),
        ("huge_pages", "yes"),
        ("archive_mode", "1"),
        ("wal_level", "LOGICAL"),
        ("wal_level", "hot_standby"),
        ("wal_level", "archive"),
        ("client_min_messages", "debug"),
        ("client_min_messages", "info"),
        ("log_min_messages", "debug"),
        ("log_min_messages", "FATAL"),
        ("default_transaction_isolation", "Repeatable Read"),
        ("wal_compression", "no"),
    ],
)
def test_accepted_enums(cat: dict[str, SettingDef], name: str, value: str) -> None:
    assert problem(cat, name, value) is None


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "wal_sync_method",
            "opensync",
            'wal_sync_method = "opensync": not one of fsync, fdatasync, open_sync, open_datasync',
        ),
        ("synchronous_commit", "remote", "not one of local, remote_write, remote_apply, on, off"),
        ("synchronous_commit", "t", "not one of"),  # no prefixes for enums
        ("synchronous_commit", " on", "not one of"),
        ("wal_level", "hot-standby", "not one of minimal, replica, logical"),
        ("log_min_messages", "information", "not one of"),
        (
            "default_transaction_isolation",
            "repeatable  read",
            'not one of serializable, "repeatable read", "read committed", "read uncommitted"',
        ),
    ],
)
def test_rejected_enums(cat: dict[str, SettingDef], name: str, value: str, message: str) -> None:
    got = problem(cat, name, value)
    assert got is not None and message in got, got


def test_enums_follow_the_build_not_only_the_version() -> None:
    # Debian's 15 is built with lz4 and zstd, the embedded 18 is not
    assert check_value(catalog("15")["wal_compression"], "lz4") is None
    assert check_value(catalog("18")["wal_compression"], "lz4") == (
        'wal_compression = "lz4": not one of pglz, on, off'
    )


def test_check_hook_rules_of_18() -> None:
    cat = catalog("18")
    assert problem(cat, "commit_timestamp_buffers", "100") == (
        'commit_timestamp_buffers = "100": must be a multiple of 16'
    )
    assert problem(cat, "commit_timestamp_buffers", "1MB") is None  # 128 buffers
    assert problem(cat, "commit_timestamp_buffers", "0") is None
    assert "must be 0 or at least 128kB" in problem(cat, "vacuum_buffer_usage_limit", "64kB")
    assert problem(cat, "vacuum_buffer_usage_limit", "0") is None
    assert problem(cat, "vacuum_buffer_usage_limit", "256kB") is None
    assert "must be -1 or at least 1" in problem(cat, "io_max_concurrency", "0")


# -- validate ----------------------------------------------------------------------------------


def test_validate_reports_every_problem_with_where(cat: dict[str, SettingDef]) -> None:
    got = validate(
        {
            "shared_buffer": "1GB",
            "Shared_Buffers": "1GB",  # names are case-insensitive
            "work_mem": "4XB",
            "checkpoint_timeout": "10s",
            "pg_stat_statements.track": "all",  # a custom placeholder: not checked
            "fsync": "maybe",
            "block_size": "16384",
        },
        cat,
        where='variant "big": ',
    )
    assert len(got) == 5
    assert all(p.startswith('variant "big": ') for p in got)
    assert got[0].startswith(
        'variant "big": unknown setting "shared_buffer" — did you mean shared_buffers, '
    )
    assert got[1].startswith('variant "big": work_mem = "4XB": invalid value')
    assert got[2] == 'variant "big": checkpoint_timeout = "10s": below the minimum 30s'
    assert got[3].startswith('variant "big": fsync = "maybe": not a boolean')
    assert got[4] == (
        'variant "big": block_size = "16384": cannot be set: a read-only setting '
        "(fixed by the build or by initdb)"
    )


def test_validate_names(cat: dict[str, SettingDef]) -> None:
    assert validate({"DATESTYLE": "iso, dmy", "timezone": "UTC", "my.custom_1": "x"}, cat) == []
    assert validate({"SHARED_BUFFERS": "x"}, cat)[0].startswith('SHARED_BUFFERS = "x": invalid')
    assert validate({"xyzzy_plugh": "1"}, cat) == ['unknown setting "xyzzy_plugh"']
    assert validate({"chekpoint_timout": "1"}, cat) == [
        'unknown setting "chekpoint_timout" — did you mean checkpoint_timeout, '
        "checkpoint_warning or archive_timeout?"
    ]
    assert validate({"a..b": "1"}, cat) == [
        'invalid setting name "a..b": a custom name is two or more identifiers joined by dots'
    ]
    assert validate({"a.1b": "1"}, cat)[0].startswith('invalid setting name "a.1b"')
    assert validate({"transaction_isolation": "serializable"}, cat) == [
        'transaction_isolation = "serializable": cannot be set in a configuration file'
    ]
    assert validate({"server_version": "99"}, cat)[0].endswith(
        "cannot be set: a read-only setting (fixed by the build or by initdb)"
    )


def test_validate_old_names(cat: dict[str, SettingDef]) -> None:
    assert (
        validate({"sort_mem": "8MB", "vacuum_mem": "1GB", "ssl_ecdh_curve": "prime256v1"}, cat)
        == []
    )
    assert validate({"sort_mem": "1kB"}, cat) == ['sort_mem = "1kB": below the minimum 64kB']


def test_validate_knows_each_version() -> None:
    assert validate({"io_method": "worker", "debug_parallel_query": "on"}, catalog("18")) == []
    old = validate({"io_method": "worker"}, catalog("15"))
    assert len(old) == 1 and old[0].startswith('unknown setting "io_method"')
    assert validate({"force_parallel_mode": "on"}, catalog("15")) == []
    assert validate({"force_parallel_mode": "on"}, catalog("18"))[0].startswith(
        'unknown setting "force_parallel_mode"'
    )


def test_raise_if_problems() -> None:
    settings.raise_if_problems([])
    with pytest.raises(SettingsError) as info:
        settings.raise_if_problems(["first problem", "second problem"])
    assert str(info.value).splitlines() == [
        "PostgreSQL would reject 2 settings:",
        "  first problem",
        "  second problem",
    ]
    assert "SHOW ALL" in info.value.hint


# -- restarts and comparisons ------------------------------------------------------------------


def test_needs_restart(cat: dict[str, SettingDef]) -> None:
    base = {"shared_buffers": "1GB", "work_mem": "4MB"}
    assert needs_restart(base, {**base, "shared_buffers": "2GB"}, cat) == ["shared_buffers"]
    assert needs_restart(base, {**base, "work_mem": "64MB"}, cat) == []
    assert needs_restart(base, {"shared_buffers": "131072", "work_mem": "4096kB"}, cat) == []
    assert needs_restart(base, {"SHARED_BUFFERS": "1024MB", "work_mem": "4MB"}, cat) == []
    assert needs_restart(base, {"work_mem": "4MB"}, cat) == ["shared_buffers"]  # removed
    assert needs_restart({}, {"max_connections": "50", "work_mem": "1MB"}, cat) == [
        "max_connections"
    ]
    assert needs_restart({}, {"pg_stat_statements.track": "all"}, cat) == [
        "pg_stat_statements.track"
    ]  # unknown to the catalog: play safe
    assert needs_restart(base, base, cat) == []


@pytest.mark.parametrize(
    ("name", "a", "b"),
    [
        ("shared_buffers", "1GB", "131072"),
        ("shared_buffers", "1GB", "1024MB"),
        ("shared_buffers", "1GB", "1048576kB"),
        ("shared_buffers", "1GB", "1073741824B"),
        ("work_mem", "4MB", "4096"),
        ("checkpoint_timeout", "5min", "300s"),
        ("statement_timeout", "1s", "1000"),
        ("enable_seqscan", "on", "true"),
        ("enable_seqscan", "off", "0"),
        ("synchronous_commit", "yes", "on"),
        ("wal_compression", "on", "pglz"),
        ("wal_level", "hot_standby", "replica"),
        ("client_min_messages", "debug", "debug2"),
        ("random_page_cost", "1.23456789", "1.23457"),  # pg_settings shows 6 digits
        ("vacuum_cost_delay", "2ms", "2"),
        ("vacuum_cost_delay", "0x1.5", "1.3125ms"),  # 1.3125 vs 1.312 after unit rounding
        ("vacuum_cost_delay", "0.5", "500us"),
        ("DateStyle", "iso, dmy", "ISO, DMY"),
        ("shared_buffers", "bogus", "bogus"),
    ],
)
def test_same_value(cat: dict[str, SettingDef], name: str, a: str, b: str) -> None:
    assert same_value(cat[name], a, b)
    assert same_value(cat[name], b, a)


@pytest.mark.parametrize(
    ("name", "a", "b"),
    [
        ("shared_buffers", "1GB", "1025MB"),
        ("work_mem", "4MB", "4097kB"),
        ("enable_seqscan", "on", "off"),
        ("synchronous_commit", "local", "on"),
        ("random_page_cost", "1.1", "1.2"),
        ("vacuum_cost_delay", "2", "3"),
        ("shared_buffers", "bogus", "1GB"),
        ("application_name", "a", "b"),
    ],
)
def test_different_value(cat: dict[str, SettingDef], name: str, a: str, b: str) -> None:
    assert not same_value(cat[name], a, b)


def test_same_value_takes_pg_settings_output(cat: dict[str, SettingDef]) -> None:
    # what server.py compares with: pg_settings.setting, alone or followed by its unit
    for defn in cat.values():
        if defn.vartype in ("integer", "real") and defn.reset_val is not None:
            assert same_value(defn, defn.reset_val, defn.reset_val), defn.name
            if defn.unit and not defn.unit[0].isdigit():
                assert same_value(defn, defn.reset_val, defn.reset_val + defn.unit), defn.name


@hsettings(max_examples=300, deadline=None)
@given(data=st.data())
def test_printed_bounds_read_back(data: st.DataObject) -> None:
    """Any amount printed exactly in a human unit reads back as the same base-unit amount."""
    cat = catalog(data.draw(st.sampled_from(VERSIONS)))
    names = sorted(n for n, d in cat.items() if d.vartype == "integer" and d.unit)
    defn = cat[data.draw(st.sampled_from(names))]
    x = data.draw(st.integers(1, int(defn.max_val or 1)))
    text = settings._amount(defn, x, exact=True)
    assert settings._number(defn, text) == x
    assert same_value(defn, text, str(x))


def test_differences_between_15_and_18() -> None:
    old, new = catalog("15"), catalog("18")
    assert needs_restart({}, {"autovacuum_max_workers": "5"}, old) == ["autovacuum_max_workers"]
    assert needs_restart({}, {"autovacuum_max_workers": "5"}, new) == []  # sighup since 18
    assert problem(old, "maintenance_work_mem", "512kB") == (
        'maintenance_work_mem = "512kB": below the minimum 1MB'
    )
    assert problem(new, "maintenance_work_mem", "512kB") is None
    assert problem(old, "log_connections", "receipt,authorization") is not None  # a bool in 15
    assert problem(new, "log_connections", "receipt,authorization") is None  # a list in 18
