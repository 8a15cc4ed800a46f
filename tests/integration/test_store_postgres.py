"""The PostgreSQL results store against a real PostgreSQL 18: the shared store contract."""

from __future__ import annotations

import psycopg
import pytest

pytest.register_assert_rewrite("store_checks")

from helpers.store_checks import StoreContract, sample_run  # noqa: E402

from pglab.errors import StoreError  # noqa: E402
from pglab.store import open_store  # noqa: E402

pytestmark = pytest.mark.integration


@pytest.fixture
def store_url(pg_store: str) -> str:
    """An empty database of the session's PostgreSQL store server for each test."""
    return pg_store


class TestPostgresStore(StoreContract):
    pass


def test_postgres_types_and_scheme_alias(store_url: str) -> None:
    with open_store(store_url.replace("postgresql://", "postgres://")) as store:
        store.save_run(sample_run())
        types = {
            (r["table_name"], r["column_name"]): r["data_type"]
            for r in store._rows(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = current_schema()",
                shape=dict,
            )
        }
    assert types[("runs", "id")] == "bigint" and types[("runs", "campaign_id")] == "bigint"
    assert types[("runs", "tps")] == "double precision"
    assert types[("phases", "transactions")] == "bigint"


def test_password_never_shown(store_url: str) -> None:
    secret_url = store_url.replace("postgresql://postgres@", "postgresql://postgres:hunter2@")
    with open_store(secret_url) as store:  # trust authentication: the password is not checked
        assert "hunter2" not in repr(store) and "postgres:***@" in repr(store)
        assert "hunter2" not in store.where
    missing = secret_url.split("?")[0].rsplit("/", 1)[0] + "/no_such_db?" + secret_url.split("?")[1]
    with pytest.raises(StoreError) as err:
        open_store(missing)
    text = f"{err.value} {err.value.hint} {err.value!r}"
    assert "no_such_db" in text and "hunter2" not in text and "***" in text


def test_lost_connection_is_a_store_error(store_url: str, pg_server: str) -> None:
    with open_store(store_url) as store:
        pid = store._conn.info.backend_pid
        with psycopg.connect(pg_server, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(StoreError, match="saving run p1/1"):
            store.save_run(sample_run())
    with open_store(store_url) as store:
        assert store.list_runs() == []
