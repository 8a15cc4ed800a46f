"""The lab's home directory and the unprivileged account its servers run as.

Layout under the home (``PGLAB_HOME``; default ``/var/lib/pglab`` as root, else
``$XDG_DATA_HOME/pglab``)::

    results.sqlite        the default results store
    bin/                  embedded binaries staged where the server account can read them (root)
    catalog/              pg_settings of each server version, cached as JSON
    datasets/<key>/       initialized, stopped template clusters, one per (source, dataset)
    clusters/<name>/      working clusters the runs use (copies of a template)
    sock/<name>/          private socket directories (mode 0700)
    work/<name>/          pgbench's per-transaction logs while a run is measured
    kit-scripts/<kit>/<digest>/  the workload kits' scripts as pgbench runs them (by content)

PostgreSQL refuses to run as root, so as root the servers run as ``PGLAB_RUN_USER`` (default
``pglab``, created as a system account if missing). Everything the account must reach is
checked to be traversable, with an error that says which directory blocks it.
"""

from __future__ import annotations

import fcntl
import grp
import os
import pwd
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from pglab import procs
from pglab.errors import LabError
from pglab.procs import RunAs

DEFAULT_RUN_USER = "pglab"


def default_home() -> Path:
    if env := os.environ.get("PGLAB_HOME"):
        return Path(env).expanduser().absolute()
    if os.geteuid() == 0:
        return Path("/var/lib/pglab")
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "pglab"


# the lab a command names (``--lab-dir``) while it runs: what is written for the lab before it
# is opened (the kits' scripts, when a campaign file is read) goes there (``command_home``)
COMMAND_HOME: ContextVar[Path | None] = ContextVar("pglab_command_home", default=None)


def command_home() -> Path:
    """The lab of the command running (``--lab-dir``), else the default one (``PGLAB_HOME``,
    ``/var/lib/pglab`` as root)."""
    return (COMMAND_HOME.get() or default_home()).absolute()


def said_home(home: Path) -> str:
    """Where the lab is, as a run's last lines say it: as root, the default lab is the
    machine's, shared by every user who runs pglab as root (datasets, builds, results)."""
    said = f"the lab: {home}"
    if os.geteuid() == 0 and home == Path("/var/lib/pglab"):
        said += (
            " (as root, the machine's lab, shared by everyone who runs pglab as root: its "
            "datasets, builds, kit scripts and results; PGLAB_HOME or --lab-dir for one of "
            "your own)"
        )
    return said


def default_store_url(home: Path | None = None) -> str:
    if env := os.environ.get("PGLAB_STORE"):
        return env
    return str((home or default_home()) / "results.sqlite")


def find_run_user() -> RunAs | None:
    """The account servers run as: None when pglab is not root (servers run as the caller)."""
    if os.geteuid() != 0:
        return None
    name = os.environ.get("PGLAB_RUN_USER", DEFAULT_RUN_USER)
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        entry = _create_system_user(name)
    if entry.pw_uid == 0:
        raise LabError(
            f"PGLAB_RUN_USER={name} is root; PostgreSQL refuses to run as root",
            hint="name an unprivileged account, or unset PGLAB_RUN_USER to use 'pglab'",
        )
    return RunAs(user=name, uid=entry.pw_uid, gid=entry.pw_gid)


def _create_system_user(name: str) -> pwd.struct_passwd:
    useradd = shutil.which("useradd")
    if useradd is None:
        raise LabError(
            f"account {name!r} does not exist and useradd is not installed to create it",
            hint="install Debian's passwd package, or set PGLAB_RUN_USER to an existing account",
        )
    group_exists = True
    try:
        grp.getgrnam(name)
    except KeyError:
        group_exists = False
    argv = [
        useradd,
        "--system",
        "--no-create-home",
        "--home-dir",
        "/nonexistent",
        "--shell",
        "/usr/sbin/nologin",
    ]
    argv += ["--gid", name] if group_exists else ["--user-group"]
    proc = procs.run([*argv, name], timeout=60, check=False)
    if proc.returncode != 0:
        raise LabError(
            f"cannot create account {name!r}: {proc.stderr.strip()}",
            hint="set PGLAB_RUN_USER to an existing unprivileged account",
        )
    return pwd.getpwnam(name)


@dataclass(frozen=True)
class Lab:
    """Paths of a lab home and the account its servers run as."""

    home: Path
    run_as: RunAs | None

    @classmethod
    def open(cls, home: Path | None = None) -> Lab:
        home = (home or default_home()).absolute()
        run_as = find_run_user()
        lab = cls(home=home, run_as=run_as)
        for sub in ("", "bin", "catalog", "datasets", "clusters", "sock", "work"):
            try:
                (home / sub).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise LabError(
                    f"cannot create the lab directory {home / sub}: {exc.strerror}",
                    hint="set PGLAB_HOME (or --lab-dir) to a writable directory",
                ) from exc
        if run_as is not None:
            os.chmod(home, 0o755)
            lab.check_reachable(home)
        return lab

    @property
    def datasets(self) -> Path:
        return self.home / "datasets"

    @property
    def clusters(self) -> Path:
        return self.home / "clusters"

    def make_private_dir(self, path: Path) -> Path:
        """A directory owned by the server account, mode 0700 (PGDATA, socket directories)."""
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, 0o700)
        self.give(path)
        return path

    def give(self, path: Path, recursive: bool = False) -> None:
        """Hand ``path`` to the server account (no-op unless root)."""
        if self.run_as is None:
            return
        os.chown(path, self.run_as.uid, self.run_as.gid)
        if recursive:
            for root, dirs, files in os.walk(path):
                for name in dirs + files:
                    os.chown(
                        os.path.join(root, name),
                        self.run_as.uid,
                        self.run_as.gid,
                        follow_symlinks=False,
                    )

    def check_reachable(self, path: Path) -> None:
        """Raise if the server account cannot traverse every directory leading to ``path``."""
        if self.run_as is None:
            return
        for parent in [*reversed(path.parents), path]:
            st = parent.stat()
            if st.st_uid == self.run_as.uid:
                continue
            if not st.st_mode & stat.S_IXOTH:
                raise LabError(
                    f"the server account {self.run_as.user!r} cannot reach {path}: "
                    f"{parent} has mode {stat.filemode(st.st_mode)}",
                    hint="put the lab under a reachable directory (PGLAB_HOME=/var/lib/pglab) "
                    f"or allow traversal with: chmod o+x {parent}",
                )


@contextmanager
def locked(path: Path, on_wait: Callable[[], object] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (made if missing) for the block: one pglab
    at a time makes a dataset, a catalog or a build. ``on_wait`` is called when another
    process holds it (before waiting for it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
