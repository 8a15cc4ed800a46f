"""The PostgreSQL backend, through psycopg 3: the same schema and queries as SQLite.

The connection is in autocommit mode and :class:`Store` issues BEGIN/COMMIT itself, so every
write is one explicit transaction. The URL's password is never put in a message or a repr.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

import psycopg
import psycopg.conninfo
import psycopg.errors

from pglab.errors import StoreError
from pglab.store.base import Store, mask_url
from pglab.store.schema import POSTGRES

CONNECT_TIMEOUT_S = 10  # unless the URL says otherwise

# Errors of the server or the connection, not of pglab's SQL.
_USER_ERRORS = (
    psycopg.OperationalError,
    psycopg.errors.InsufficientPrivilege,
    psycopg.errors.ReadOnlySqlTransaction,
    psycopg.errors.InvalidSchemaName,
)


class PostgresStore(Store):
    _db_errors = (psycopg.Error,)

    def __init__(self, conn: psycopg.Connection, url: str) -> None:
        super().__init__(conn, POSTGRES, mask_url(url))
        self._secrets = _secrets(url)

    def _store_error(self, exc: Exception, doing: str) -> StoreError | None:
        if not isinstance(exc, _USER_ERRORS):
            return None
        return StoreError(
            f"results store {self.where}: {doing} failed: {_scrub(str(exc), self._secrets)}",
            hint=_hint(exc),
        )


def open_postgres(url: str, peek: bool = False) -> PostgresStore | None:
    """Connect to a ``postgresql://`` (or ``postgres://``) URL and bring its schema up to date;
    ``peek``: read it as it is (None when it has no pglab tables yet), never migrate it."""
    where = mask_url(url)
    secrets = _secrets(url)
    try:
        # None: the URL's own connect_timeout (psycopg drops parameters that are None)
        timeout = None if "connect_timeout" in _params(url) else CONNECT_TIMEOUT_S
        # client_encoding: a SQL_ASCII database's text would come back as bytes
        conn = psycopg.connect(
            url,
            autocommit=True,
            application_name="pglab",
            connect_timeout=timeout,
            client_encoding="UTF8",
        )
    except psycopg.Error as exc:
        # from None: the driver's exception may carry the connection string.
        raise StoreError(
            f"cannot connect to the results store {where}: {_scrub(str(exc), secrets).strip()}",
            hint="check the URL, that the server is up and that the role may connect "
            "(--store or PGLAB_STORE)",
        ) from None
    store = PostgresStore(conn, url)
    try:
        with store._guard("opening"):
            if peek and store._current_version() == 0:
                conn.close()
                return None
            store._migrate(read_only=peek)
    except BaseException:
        conn.close()
        raise
    return store


def _params(url: str) -> dict[str, str]:
    try:
        return psycopg.conninfo.conninfo_to_dict(url)  # type: ignore[return-value]
    except psycopg.Error:
        return {}


def _secrets(url: str) -> list[str]:
    """The URL's password in every spelling that could show up in a message."""
    found: list[str] = []
    try:
        parts = urlsplit(url)
        if parts.password:
            found.append(parts.password)
        found += [v for k, v in parse_qsl(parts.query) if k.lower() == "password" and v]
    except ValueError:
        pass
    found += [unquote(s) for s in found]
    return sorted({s for s in found if s}, key=len, reverse=True)


def _scrub(text: str, secrets: list[str]) -> str:
    for s in secrets:
        text = text.replace(s, "***")
    return text


def _hint(exc: Exception) -> str | None:
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return "the role needs CREATE on the schema (once) and read/write on pglab's tables"
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return "the URL points at a read-only server (a standby?): use the primary"
    if isinstance(exc, psycopg.OperationalError):
        return "the connection to the store failed: check the server and the network"
    return None
