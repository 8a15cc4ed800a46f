"""The maintenance operations that are client programs of the server source: ``dump``
(``pg_dump -F d -j N`` of pgbench's database), ``restore`` (``pg_restore -j N`` of the run's own
dump into a database of its own, dropped after) and ``basebackup`` (``pg_basebackup`` of the
whole cluster into a directory). Their argv, where they write, and their progress as the server
shows it (``pg_stat_progress_copy``: the COPY of every table a dump or restore moves;
``pg_stat_progress_basebackup``). No process is started here: ``operations`` runs them
through ``procs``.

Their MB/s is of the database's size (``pg_database_size``: dump and restore) or of what the
base backup wrote (its files), over the program's elapsed time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pglab.campaign.spec import PhaseSpec
from pglab.workloads.maintenance.work import operation_work

CLIENT_OPERATIONS = ("dump", "restore", "basebackup")
RESTORE_DATABASE = "pglab_restore"  # where a restore goes: made before it, dropped after
DUMP_DIR = "dump"  # under the run's work directory: made by the dump, removed after the run
BACKUP_DIR = "pglab-basebackup"  # under the target (or the work directory), removed after
TIMEOUT_S = 24 * 3600.0  # a program that runs longer than a day is stuck
DATABASE_SIZE_SQL = "SELECT pg_database_size(current_database())"
# every COPY of the database now: one per table a dump or restore job moves at the moment
COPY_SQL = (
    "SELECT pid, relid, bytes_processed FROM pg_stat_progress_copy "
    "WHERE datname = %(db)s AND command = %(command)s"
)
BASEBACKUP_SQL = (
    "SELECT phase, backup_streamed, coalesce(backup_total, 0), 'bytes' "
    "FROM pg_stat_progress_basebackup LIMIT 1"
)
# the program's sessions in its database: a dump's leader and its -j workers; a restore's jobs
SESSIONS_SQL = (
    "SELECT pid FROM pg_stat_activity WHERE datname = %(db)s AND application_name = %(app)s"
)


@dataclass(frozen=True, slots=True)
class Client:
    """What a client program needs: the server source's programs, a database's conninfo
    (``conninfo(name)``), the environment (an existing server's password) and the run's work
    directory."""

    pg_dump: str
    pg_restore: str
    pg_basebackup: str
    conninfo: Any  # Callable[[str | None], str]: a database's conninfo (None: pgbench's)
    workdir: Path
    env: dict[str, str] = field(default_factory=dict)


def argv(phase: PhaseSpec, client: Client, database: str, into: Path) -> list[str]:
    """The program and its arguments for ``phase``: ``into`` is the dump's directory (written
    by a dump, read by a restore) or the base backup's."""
    op = operation_work(phase).operation
    if op == "dump":
        out = [client.pg_dump, "-F", "d", "-j", str(operation_work(phase).jobs), "-f", str(into)]
        if not operation_work(phase).compress:
            out += ["-Z", "0"]
        return out + ["-d", client.conninfo(database)]
    if op == "restore":
        return [
            client.pg_restore,
            "-j",
            str(operation_work(phase).jobs),
            "-d",
            client.conninfo(RESTORE_DATABASE),
            str(into),
        ]
    if op == "basebackup":
        return [
            client.pg_basebackup,
            "-D",
            str(into),
            "-c",
            "fast",
            "-X",
            "stream",
            "-d",
            client.conninfo(database),
        ]
    raise ValueError(f"not a client operation: {op!r}")


def backup_dir(phase: PhaseSpec, workdir: Path) -> Path:
    """Where a base backup goes: a directory of pglab's under the target (or the work dir)."""
    return Path(operation_work(phase).target or workdir) / BACKUP_DIR


def tree_bytes(path: Path) -> int:
    """The bytes of the files under ``path`` (what a base backup wrote)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def dump_data_bytes(dump: Path) -> int:
    """The bytes of table data an uncompressed dump holds (its ``NNNN.dat`` files: what a
    restore COPYs in); 0 for a compressed one (COPY counts the bytes it decompressed)."""
    files = list(dump.glob("*.dat*"))
    if any(f.suffix != ".dat" for f in files):
        return 0
    return sum(f.stat().st_size for f in files)


class CopyProgress:
    """A dump's or restore's progress from ``pg_stat_progress_copy``: the bytes of every COPY
    seen so far (a finished table's COPY leaves the view: its last count is kept), against
    ``total`` bytes when known (a restore of an uncompressed dump), else 0."""

    def __init__(self, phase_name: str, total: int = 0):
        self.phase_name = phase_name
        self.total = total
        self.seen: dict[tuple[int, int], int] = {}

    def row(self, copies: list[tuple[Any, ...]]) -> tuple[str, int, int, str] | None:
        for pid, relid, done in copies:
            key = (int(pid), int(relid or 0))
            self.seen[key] = max(self.seen.get(key, 0), int(done or 0))
        if not self.seen:
            return None
        return (self.phase_name, sum(self.seen.values()), self.total, "bytes")
