"""The SQLite results store: the shared store contract, plus what only a file can get wrong."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

pytest.register_assert_rewrite("store_checks")

from helpers.store_checks import WRITER_SCRIPT, StoreContract, sample_run, start_python  # noqa: E402

from pglab.errors import StoreError  # noqa: E402
from pglab.store import mask_url, open_store, schema  # noqa: E402
from pglab.store import sqlite as sqlite_backend  # noqa: E402


class TestSqliteStore(StoreContract):
    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return str(tmp_path / "results.sqlite")


def test_path_and_sqlite_url_name_the_same_store(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "r.sqlite"
    with open_store(str(path)) as store:
        run_id = store.save_run(sample_run())
    assert path.is_file()
    with open_store(f"sqlite://{path}") as store:
        assert store.load_run(run_id) == sample_run()
        assert repr(store) == f"<SqliteStore {path} schema v{schema.latest_version()}>"
    with open_store(path) as store:  # a Path is fine too
        assert store.done_run_keys("camp") == {"p1/1"}


def test_connection_settings(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "r.sqlite")) as store:
        conn = store._conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
        assert conn.isolation_level is None  # transactions are explicit, never implicit
        assert not conn.in_transaction


def test_parent_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("not a directory")
    path = tmp_path / "plain" / "sub" / "r.sqlite"
    with pytest.raises(StoreError) as err:
        open_store(str(path))
    assert str(path) in str(err.value) and "is a file, not a directory" in str(err.value)


def test_store_path_that_is_a_directory(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="it is not a file") as err:
        open_store(str(tmp_path))
    assert str(tmp_path) in str(err.value)


GARBAGE = [b"\x00garbage\xff" * 1000, b"hello", b"SQLite format 3\x00" + b"\xee" * 4080]


@pytest.mark.parametrize("content", GARBAGE)
def test_corrupt_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "r.sqlite"
    path.write_bytes(content)
    with pytest.raises(StoreError) as err:
        open_store(str(path))
    assert str(path) in str(err.value)
    assert "not a database" in str(err.value) or "malformed" in str(err.value)
    assert "not a pglab results store" in (err.value.hint or "")
    assert path.read_bytes() == content  # left as it was


def test_locked_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.sqlite"
    open_store(str(path)).close()
    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with open_store(str(path)) as store:  # reading is fine while another process writes
            assert store.list_runs() == []
            with pytest.raises(StoreError, match="locked") as err:
                store.save_run(sample_run())
            assert str(path) in str(err.value) and "locked" in (err.value.hint or "")
        holder.execute("ROLLBACK")
        with open_store(str(path)) as store:
            store.save_run(sample_run())
    finally:
        holder.close()


def test_processes_create_and_write_the_same_file_at_once(tmp_path: Path) -> None:
    url = str(tmp_path / "r.sqlite")  # created by whichever process gets there first
    start = time.time() + 1.0  # time for the interpreters to start
    tags = ("a", "b", "c", "d")
    procs = [start_python(WRITER_SCRIPT, url=url, n=8, tag=tag, start=start) for tag in tags]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with open_store(url) as store:
        keys = store.done_run_keys("camp")
    assert len(keys) == 32 and {k.split("-")[0] for k in keys} == set(tags)


def test_unknown_scheme_is_refused_without_its_password(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="unknown results store scheme 'mysql'") as err:
        open_store("mysql://me:s3cret@db.example/results")
    assert "s3cret" not in str(err.value) and "me:***@" in str(err.value)
    with pytest.raises(StoreError, match="no results store"):
        open_store("  ")


def test_postgres_connection_failure_never_shows_the_password() -> None:
    url = "postgresql://me:s3cr%40t@127.0.0.1:1/results?connect_timeout=3"
    with pytest.raises(StoreError) as err:
        open_store(url)
    text = f"{err.value} {err.value.hint} {err.value!r} {err.value.__cause__!r}"
    assert "cannot connect to the results store postgresql://me:***@127.0.0.1:1/" in text
    assert "s3cr" not in text and err.value.__cause__ is None
    with pytest.raises(StoreError) as err:
        open_store("postgres://127.0.0.1:1/results?password=hunter2&connect_timeout=3")
    assert "hunter2" not in str(err.value) and "password=***" in str(err.value)


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("postgresql://u:pw@host:5432/db", "postgresql://u:***@host:5432/db"),
        ("postgres://u:p%40ss@/db?host=/tmp/s", "postgres://u:***@/db?host=/tmp/s"),
        ("postgresql://u:p@ss/w@host/db", "postgresql://u:***@host/db"),
        ("postgresql://u@host/db?sslmode=require&password=x", "postgresql://u@host/db?sslmode=require&password=***"),
        ("postgresql://host/db", "postgresql://host/db"),
        ("/var/lib/pglab/results.sqlite", "/var/lib/pglab/results.sqlite"),
    ],
)  # fmt: skip
def test_mask_url(url: str, masked: str) -> None:
    assert mask_url(url) == masked


def test_point_labels_are_the_listed_runs_points_in_their_order(tmp_path: Path) -> None:
    # what serve's compare picker offers, read without every run's row
    from helpers.synthetic_runs import fill

    with open_store(str(tmp_path / "r.sqlite")) as store:
        fill(store, "one", clients=(1, 2), repeats=2, seconds=3)
        fill(store, "two", variants=("x",), scripts=("select-only",), repeats=2, seconds=3)
        expected = list(dict.fromkeys((r.campaign, r.label) for r in store.list_runs()))
        assert len(expected) == 8 + 5
        assert store.point_labels(100) == expected
        assert store.point_labels(3) == expected[:3]
