"""The SQLite backend: one file, WAL journal, several pglab processes may write it at once."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from pglab.errors import StoreError
from pglab.store.base import Store
from pglab.store.schema import SQLITE

BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another process's write to finish

_BUG_ERRORS = (
    sqlite3.IntegrityError,
    sqlite3.ProgrammingError,
    sqlite3.InterfaceError,
    sqlite3.NotSupportedError,
)


class SqliteStore(Store):
    _db_errors = (sqlite3.Error,)

    def _store_error(self, exc: Exception, doing: str) -> StoreError | None:
        if not isinstance(exc, sqlite3.Error) or isinstance(exc, _BUG_ERRORS):
            return None
        return _error(self.where, doing, exc)


def open_sqlite(path: Path, read_only: bool = False) -> SqliteStore:
    """Open (creating it and its directories if needed) the SQLite store at ``path``; with
    ``read_only``, an existing store that cannot be written is opened for reading."""
    path = path.expanduser().absolute()
    try:
        return _open(path)
    except StoreError as exc:
        code = getattr(exc.__cause__, "sqlite_errorname", "") or ""
        if not (read_only and path.is_file() and code.startswith(_CANNOT_WRITE)):
            raise
    return _open_read_only(path)


def open_sqlite_as_it_is(path: Path) -> SqliteStore:
    """An existing SQLite store for reading only, never migrated (``peek_store``)."""
    return _open_read_only(path)


_CANNOT_WRITE = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")


def _open_read_only(path: Path) -> SqliteStore:
    """The store at ``path`` for reading only. A WAL store on a read-only file system has no
    -shm file to share, so it is opened as immutable (nobody can be writing it there)."""
    where = str(path)
    last: sqlite3.Error | None = None
    for flags in ("mode=ro", "mode=ro&immutable=1"):
        uri = f"{path.as_uri()}?{flags}"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            last = exc
            continue
        store = SqliteStore(conn, SQLITE, where)
        try:
            with store._guard("opening for reading"):
                store._migrate(read_only=True)
            return store
        except StoreError as exc:
            conn.close()
            if not isinstance(exc.__cause__, sqlite3.Error):
                raise  # the schema: another flag will not change it
            last = exc.__cause__
    assert last is not None
    raise _error(where, "opening for reading", last) from last


def _open(path: Path) -> SqliteStore:
    where = str(path)
    _make_parent(path)
    if path.exists() and not path.is_file():
        raise StoreError(
            f"cannot open the results store {where}: it is not a file",
            hint="give the path of a file (it is created if missing) with --store or PGLAB_STORE",
        )
    try:
        # isolation_level=None: no implicit transactions; Store issues BEGIN/COMMIT itself.
        conn = sqlite3.connect(where, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as exc:
        raise _error(where, "opening", exc) from exc
    store = SqliteStore(conn, SQLITE, where)
    try:
        with store._guard("opening"):
            conn.execute("PRAGMA foreign_keys = ON")
            _use_wal(conn)
            store._migrate()
    except BaseException:
        conn.close()
        raise
    return store


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch to the WAL journal (readers never block the writer, nor the writer readers).

    The switch needs a moment alone with the file and, unlike other statements, returns
    SQLITE_BUSY at once instead of waiting: two processes creating the store together would
    fail. So wait here, as long as any other statement would.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = getattr(exc, "sqlite_errorname", "") == "SQLITE_BUSY"
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _make_parent(path: Path) -> None:
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            raise StoreError(
                f"cannot create the results store {path}: {parent} is a file, not a directory",
                hint="choose another store path with --store or PGLAB_STORE",
            )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the directory of the results store {path}: {exc.strerror or exc}",
            hint="choose another store path with --store or PGLAB_STORE",
        ) from exc


def _error(where: str, doing: str, exc: sqlite3.Error) -> StoreError:
    code = getattr(exc, "sqlite_errorname", "") or ""
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        hint = (
            f"another process kept the store locked for more than {BUSY_TIMEOUT_S:.0f} s: "
            "is a sqlite3 shell or a stuck pglab holding it open in a transaction?"
        )
    elif code.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        hint = (
            "the file is not a pglab results store, or it is damaged: move it away, "
            "or choose another store with --store or PGLAB_STORE"
        )
    elif code.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        hint = (
            "the store needs a readable and writable file in a writable directory "
            "(SQLite keeps -wal and -shm files next to it)"
        )
    elif code.startswith("SQLITE_FULL"):
        hint = "free some disk space"
    else:
        hint = None
    return StoreError(f"results store {where}: {doing} failed: {exc}", hint=hint)
