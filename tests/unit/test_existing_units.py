"""The pure parts of existing servers: masking passwords, libpq options, error hints, limits."""

from __future__ import annotations

import dataclasses

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from pglab.campaign import parse
from pglab.campaign.spec import mask_dsn, masked_document
from pglab.errors import CampaignError, ServerError
from pglab.postgres import altered
from pglab.postgres.reach import Facts, _options, explain, require_version
from pglab.store import mask_url


@pytest.mark.parametrize(
    ("dsn", "masked"),
    [
        ("postgresql://u:secret@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgres://u:s%40cret@h/db?sslmode=require", "postgres://u:***@h/db?sslmode=require"),
        ("postgresql://u@h/db?password=secret&x=1", "postgresql://u@h/db?password=***&x=1"),
        ("host=h password=secret user=u", "host=h password=*** user=u"),
        ("host=h password = 'se cret' user=u", "host=h password = *** user=u"),
        ("host=h user=u", "host=h user=u"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
    ],
)
def test_a_password_is_masked_in_every_form_of_dsn(dsn: str, masked: str) -> None:
    assert mask_dsn(dsn) == masked
    assert "secret" not in mask_dsn(dsn) and "cret" not in mask_dsn(dsn)
    if "://" in dsn:
        assert mask_url(dsn) == masked  # the store's URLs are masked the same way


def test_the_stored_campaign_and_spec_hold_no_password() -> None:
    doc = {
        "server": {"dsn": "postgresql://u:secret@h/db"},
        "variants": {"b": {"server": {"dsn": "host=h2 password=secret"}}},
    }
    assert "secret" not in repr(masked_document(doc))
    assert doc["server"]["dsn"].endswith(":secret@h/db")  # the original is left as it was
    camp = parse.parse(doc, "t")
    for v in camp.variants:
        assert "secret" not in repr(v.server.identity()) and "secret" not in repr(v.server)
        assert v.dataset.reset == "never"  # a copy cannot reset an existing server


def test_reset_policies_that_copy_files_are_refused_for_existing_servers() -> None:
    with pytest.raises(CampaignError, match='use "reinit"'):
        parse.parse({"server": {"dsn": "host=h"}, "dataset": {"reset": "point"}}, "t")
    with pytest.raises(CampaignError, match='reinit" is for a server over the network'):
        parse.parse({"dataset": {"reset": "reinit"}}, "t")
    # said in the base for provisioned variants: the existing one goes without, silently
    camp = parse.parse({"dataset": {"reset": "run"}, "variants": {
        "mine": {}, "theirs": {"server": {"dsn": "host=h"}}}}, "t")  # fmt: skip
    assert [v.dataset.reset for v in camp.variants] == ["run", "never"]


def test_manage_and_database_need_a_dsn_and_a_bad_dsn_is_named() -> None:
    with pytest.raises(CampaignError) as err:
        parse.parse({"server": {"manage": "reload", "database": "x"}}, "t")
    assert str(err.value).count("needs dsn") == 2
    with pytest.raises(CampaignError, match="dsn is not a valid connection string"):
        parse.parse({"server": {"dsn": "host='unterminated"}}, "t")
    with pytest.raises(CampaignError, match="database = 'a-b'"):
        parse.parse({"server": {"dsn": "host=h", "database": "a-b"}}, "t")


def test_session_settings_go_in_libpq_options_with_spaces_escaped() -> None:
    words = _options({"work_mem": "64MB", "search_path": "a, b", "x.y": "c\\d"})
    assert words == ["-c search_path=a,\\ b", "-c work_mem=64MB", "-c x.y=c\\\\d"]
    # and libpq reads them back as one options value
    assert conninfo_to_dict(psycopg.conninfo.make_conninfo("", options=" ".join(words)))


FACTS = Facts(version_num=180001, version="18.1", version_full="PostgreSQL 18.1", role="bench",
              superuser=False, createdb=True, pg_monitor=True, read_all_settings=True,
              may_reload=True, started=None, server_addr="10.0.0.5", server_port=5432,
              max_connections=100, reserved=3, in_use=7)  # fmt: skip


def test_room_for_connections_counts_reserved_slots_only_for_non_superusers() -> None:
    assert FACTS.room() == 100 - 3 - 7
    assert dataclasses.replace(FACTS, superuser=True).room() == 100 - 7


def test_a_server_older_than_15_is_refused() -> None:
    old = dataclasses.replace(FACTS, version_num=140012, version="14.12 (Debian)")
    with pytest.raises(ServerError, match="runs PostgreSQL 14.12; pglab needs 15 or later"):
        require_version(old, "bench@db1:5432")
    assert require_version(FACTS, "x") is FACTS


@pytest.mark.parametrize(
    ("said", "hint"),
    [
        ('FATAL:  password authentication failed for user "bench"', "~/.pgpass"),
        ("fe_sendauth: no password supplied", "PGPASSWORD"),
        (
            'no pg_hba.conf entry for host "127.0.0.1", user "x", database "p", no encryption',
            "sslmode=require",
        ),
        ("server does not support SSL, but SSL was required", "remove sslmode"),
        ("connection refused", "pg_isready"),
        ('database "nope" does not exist', "name an existing database"),
        ("something new", "psql"),
    ],
)
def test_connection_failures_come_with_what_to_do(said: str, hint: str) -> None:
    err = explain(psycopg.OperationalError(said), "bench@db1:5432")
    assert err.message.startswith("cannot connect to the existing server bench@db1:5432: ")
    assert hint in (err.hint or "")


def test_the_sql_to_put_settings_back_by_hand_quotes_values() -> None:
    text = altered.by_hand({"a": None, "b": "it's"})
    assert text == "ALTER SYSTEM RESET a;\nALTER SYSTEM SET b = 'it''s';\nSELECT pg_reload_conf();"
