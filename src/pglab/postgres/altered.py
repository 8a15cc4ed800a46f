"""What pglab changed on an existing server with ALTER SYSTEM, written down before it changes it.

With ``manage = "reload"``, pglab sets sighup settings of a server it did not start. Before the
first ``ALTER SYSTEM`` on a setting, the setting's original state is written to a journal under
the lab home (``altered/<server>.json``: the value in ``postgresql.auto.conf``, or that it had
none), flushed to disk. The campaign's end, Ctrl-C and SIGTERM put every setting back and remove
the journal; after a SIGKILL the journal stays, and the next pglab that starts finds it (its
owner is dead) and puts the settings back then (``run/resume.py``).

The journal holds the dsn without its password: the next pglab reaches the server with the
campaign's dsn when it names the same server, else with the masked one (``~/.pgpass``, PG*
variables) — and, failing that, prints the SQL that puts the settings back by hand.

Typed: the journal's file is a :class:`JournalFile`, its writer an :class:`Owner`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import psutil
from psycopg import sql

from pglab.lab import Lab

# name -> the value ALTER SYSTEM had set before pglab (a string), or None: ALTER SYSTEM RESET
Originals = dict[str, str | None]


class Owner(TypedDict):
    """The pglab process that wrote a journal (``me()``): told from a later one of the same
    pid by its start time."""

    pid: int
    create_time: float


class JournalFile(TypedDict):
    """A journal as written to ``altered/<server>.json``."""

    server: str  # the masked dsn
    owner: Owner
    originals: Originals


def directory(lab: Lab) -> Path:
    return lab.home / "altered"


def path_for(lab: Lab, server_key: str) -> Path:
    digest = hashlib.sha256(server_key.encode()).hexdigest()[:16]
    return directory(lab) / f"{digest}.json"


def me() -> Owner:
    proc = psutil.Process()
    return Owner(pid=proc.pid, create_time=proc.create_time())


def alive(owner: Owner) -> bool:
    """Whether the process that wrote ``owner`` (``me()``) still runs."""
    try:
        proc = psutil.Process(int(owner["pid"]))
        return bool(abs(proc.create_time() - float(owner["create_time"])) < 0.01)
    except (KeyError, TypeError, ValueError, psutil.NoSuchProcess):
        return False


@dataclass
class Journal:
    """The originals of the settings pglab has changed on one server, kept on disk."""

    path: Path
    server_key: str  # the masked dsn
    originals: Originals

    @classmethod
    def open(cls, lab: Lab, server_key: str) -> Journal:
        path = path_for(lab, server_key)
        return cls(path, server_key, {})

    def record(self, more: Originals) -> None:
        """Add originals (first seen wins) and write the journal durably, before any change."""
        for name, value in more.items():
            self.originals.setdefault(name, value)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial")
        data = JournalFile(server=self.server_key, owner=me(), originals=self.originals)
        with open(partial, "w") as f:
            json.dump(data, f, indent=2)
            f.flush()
            os.fsync(f.fileno())
        partial.replace(self.path)
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def forget(self, names: list[str]) -> None:
        for name in names:
            self.originals.pop(name, None)
        if self.originals:
            self.record({})
        else:
            self.path.unlink(missing_ok=True)


def left_behind(lab: Lab) -> list[Journal]:
    """Journals of pglab processes that are gone (killed before they put settings back)."""
    found = []
    for path in sorted(directory(lab).glob("*.json")):
        try:
            data: JournalFile = json.loads(path.read_text())
            owner, originals = data["owner"], dict(data["originals"])
            server_key = str(data["server"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not alive(owner):
            found.append(Journal(path, server_key, originals))
    return found


def statements(originals: Originals) -> list[sql.Composed]:
    """The ALTER SYSTEM statements that put ``originals`` back."""
    out = []
    for name, value in sorted(originals.items()):
        if value is None:
            out.append(sql.SQL("ALTER SYSTEM RESET {}").format(sql.Identifier(name)))
        else:
            out.append(
                sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
            )
    return out


def by_hand(originals: Originals) -> str:
    """The SQL to put the originals back, for a person to run (psql as a superuser)."""
    lines = []
    for name, value in sorted(originals.items()):
        if value is None:
            lines.append(f"ALTER SYSTEM RESET {name};")
        else:
            lines.append(f"ALTER SYSTEM SET {name} = '{value.replace(chr(39), chr(39) * 2)}';")
    return "\n".join([*lines, "SELECT pg_reload_conf();"])
