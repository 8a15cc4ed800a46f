"""The data as it was when a capture's window opened: a ``pg_dump -Fd`` made from the
snapshot the window opens at (``pglab capture --with-dump DIR``), or a dump the user made
(``--dump DIR``), checked to be of a database the workload's sessions use."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pglab import procs
from pglab.errors import WorkloadError
from pglab.postgres.sources import Binaries
from pglab.workloads.replay.logfile import OWN_APPLICATION

DUMP_TIMEOUT = 24 * 3600
_DBNAME = re.compile(r"^;\s+dbname: (.*)$", re.MULTILINE)


@dataclass
class Dumping:
    """``pg_dump -Fd`` running from a snapshot while the window is open."""

    proc: subprocess.Popen[str]
    target: Path
    dbname: str  # the database dumped

    @classmethod
    def start(
        cls,
        binaries: Binaries,
        conninfo: str,
        dbname: str,
        env: dict[str, str],
        snapshot: str,
        target: Path,
    ) -> Dumping:
        if target.exists():
            raise WorkloadError(
                f"{target} exists: pg_dump -Fd writes a new directory",
                hint="name a directory that does not exist yet",
            )
        argv = [
            binaries.exe("pg_dump"),
            "-Fd",
            "-f",
            str(target),
            f"--snapshot={snapshot}",
            "--no-sync",
            "-d",
            conninfo,
        ]
        # its session named as pglab's own: not captured (logfile.OWN_APPLICATION)
        env = {**env, "PGAPPNAME": OWN_APPLICATION}
        proc = procs.spawn(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return cls(proc, target, dbname)

    def wait(self) -> str:
        """Until the dump is made; the database it holds (refused when pg_dump failed)."""
        try:
            _, err = self.proc.communicate(timeout=DUMP_TIMEOUT)
        finally:
            procs.terminate(self.proc)
        if self.proc.returncode != 0:
            raise WorkloadError(
                f"pg_dump failed (exit {self.proc.returncode}): {procs.tail(err or '')}"
            )
        self.target.chmod(0o700)  # it holds the data
        return self.dbname


def database_of(binaries: Binaries, dump: Path) -> str:
    """The database a ``pg_dump`` archive was made of (``pg_restore -l``'s header)."""
    if not dump.exists():
        raise WorkloadError(f"no dump {dump}")
    done = procs.run(
        [binaries.exe("pg_restore"), "-l", str(dump)],
        timeout=600,
        check=False,
        what="pg_restore -l",
    )
    found = _DBNAME.search(done.stdout)
    if done.returncode != 0 or found is None:
        raise WorkloadError(
            f"{dump} is not a pg_dump archive pg_restore reads: {procs.tail(done.stderr)}",
            hint="make it with pg_dump -Fd (or --with-dump)",
        )
    return found.group(1).strip()


def check_matches(dumped: str, databases: list[str], dump: Path) -> None:
    """A dump of another database than the workload's sessions use is refused."""
    if dumped not in databases:
        raise WorkloadError(
            f"the dump {dump} is of database {dumped!r}, but the workload's sessions use "
            f"{', '.join(repr(d) for d in databases)}: replayed on it, their statements would "
            "find other tables",
            hint="dump the database the workload ran on (pg_dump -Fd -d NAME), or capture "
            "with --with-dump",
        )
