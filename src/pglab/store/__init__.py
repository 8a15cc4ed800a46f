"""The results store: campaigns, runs, phases and per-second series, in SQLite or PostgreSQL.

``open_store(url)`` takes a file path (or ``sqlite:///abs/path``) for SQLite, or a
``postgresql://`` / ``postgres://`` URL; both give a :class:`Store` with the same interface
and the same schema (see ``schema.py``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pglab.errors import StoreError
from pglab.store.base import Store, mask_url

__all__ = ["Store", "StoreError", "mask_url", "open_store", "peek_store"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def _located(url: str | os.PathLike[str]) -> tuple[str, Path | None]:
    """The store a URL names: (a ``postgresql://`` URL, None) or (its text, the SQLite file).
    Raises StoreError for an empty URL or an unknown scheme (without the URL's password)."""
    text = os.fspath(url).strip()
    if not text:
        raise StoreError("no results store given", hint="give a SQLite path or a postgresql:// URL")
    m = _SCHEME.match(text)
    scheme = m.group(1).lower() if m else None
    if scheme in ("postgresql", "postgres"):
        return text, None
    if scheme not in (None, "sqlite"):
        raise StoreError(
            f"unknown results store scheme {scheme!r} in {mask_url(text)}",
            hint="use a SQLite file path (or sqlite:///abs/path) or a postgresql:// URL",
        )
    return text, Path(text[len("sqlite://") :] if scheme else text)


def open_store(url: str | os.PathLike[str], read_only: bool = False) -> Store:
    """Open the results store at ``url``, creating it or migrating its schema if needed.
    ``read_only``: a SQLite store file that cannot be written is opened for reading instead
    (if its schema is current); writing to it then fails with a StoreError.

    Raises StoreError when it cannot be opened (unreadable, locked, not a store, made by a
    newer pglab, unknown URL scheme); the message never contains the URL's password.
    """
    text, path = _located(url)
    if path is None:
        from pglab.store.postgres import open_postgres  # psycopg is only imported when needed

        store = open_postgres(text)
        assert store is not None  # only a peek finds nothing
        return store
    from pglab.store.sqlite import open_sqlite

    return open_sqlite(path, read_only)


def peek_store(url: str | os.PathLike[str]) -> Store | None:
    """The store at ``url`` for reading, as it is: None when there is none yet (a SQLite file
    that does not exist, a PostgreSQL database without pglab's tables). Nothing is created,
    migrated or written (what ``--dry-run`` reads). Raises StoreError when it exists but cannot
    be read as it is (another schema version, unreadable, unreachable)."""
    text, path = _located(url)
    if path is None:
        from pglab.store.postgres import open_postgres

        return open_postgres(text, peek=True)
    from pglab.store.sqlite import open_sqlite_as_it_is

    path = path.expanduser().absolute()
    return open_sqlite_as_it_is(path) if path.is_file() else None
