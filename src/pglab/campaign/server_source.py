"""Where a ``[server]`` (or a variant's ``server``) gets PostgreSQL from: ``source`` with
``bindir``, ``build = { source, options, patches }`` (or ``{ git, ref, … }``: a clone's commit)
or ``version``, and which ``pgbench``
runs. A variant that names none of them keeps its base's source; paths are taken from the
campaign file's directory."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pglab.campaign import declared, schema
from pglab.campaign import git_refs as git_sources
from pglab.campaign.checks import Problems
from pglab.campaign.schema import BUILD_KEYS
from pglab.campaign.spec import PGBENCH_CHOICES, BuildSpec, ServerSpec
from pglab.errors import LabError
from pglab.jsonish import TomlTable

KINDS = ("bindir", "build", "version")  # keys that name a source, and that source's name


@dataclass(frozen=True)
class Source:
    source: str
    bindir: str | None
    build: BuildSpec | None
    version: str | None
    pgbench: str


def parse(
    table: TomlTable,
    vals: TomlTable,
    base: ServerSpec,
    p: Problems,
    where: str,
    base_dir: Path,
) -> Source:
    """The source of ``table`` (its values checked by their declarations: ``vals``)."""
    given = [k for k in KINDS if k in table]
    if len(given) > 1:
        p.add(where, f"give one of {', '.join(given)}: each names where PostgreSQL comes from")
    source = vals.get("source", given[0] if given else base.source)
    inherit = source == base.source and not given
    bindir = vals.get("bindir", base.bindir if inherit else None)
    if isinstance(bindir, str) and bindir and not Path(bindir).is_absolute():
        bindir = _from(base_dir, bindir)  # like scripts: from the file's directory
    if source == "bindir" and not bindir:
        p.add(where, 'source = "bindir" needs bindir = "/path/to/postgresql/bin"')
    build = base.build if inherit else None
    if "build" in vals:
        build = _build(vals["build"], p, f"{where} build", base_dir)
    if source == "build" and build is None and "build" not in table:
        p.add(where, 'source = "build" needs build = { source = "postgresql-X.Y.tar.bz2" }')
    version = vals.get("version", base.version if inherit else None)
    if source == "version" and version is None and "version" not in table:
        p.add(where, 'source = "version" needs version = "N" (a major version, e.g. "16")')
    pgbench = vals.get("pgbench", base.pgbench)
    if pgbench not in PGBENCH_CHOICES and "pgbench" in vals:
        pgbench = _from(base_dir, pgbench)
    return Source(
        str(source),
        bindir if source == "bindir" else None,
        build if source == "build" else None,
        version if source == "version" else None,
        pgbench,
    )


def _from(base_dir: Path, path: str) -> str:
    return os.path.normpath(base_dir.absolute() / path)


def _build(value: TomlTable, p: Problems, where: str, base_dir: Path) -> BuildSpec | None:
    vals = declared.check(schema.BUILD, value, p, where, allowed=BUILD_KEYS)
    if "git" in value:
        return _from_git(value, vals, p, where, base_dir)
    if "source" not in value:
        p.add(
            where,
            "source: a PostgreSQL source tree or release tarball (a path) is needed, "
            "or git: a local clone",
        )
    if "ref" in value:
        p.add(where, "ref is the commit of git = CLONE to build: give git, or leave ref out")
    if "source" not in vals:
        return None
    lists = _lists(vals)
    return BuildSpec(
        source=_from(base_dir, vals["source"]),
        options=lists["options"],
        patches=tuple(_from(base_dir, patch) for patch in lists["patches"]),
    )


def _lists(vals: TomlTable) -> dict[str, tuple[str, ...]]:
    """options and patches: an array of strings, or one string."""
    return {
        key: (vals[key],) if isinstance(vals.get(key), str) else tuple(vals.get(key, ()))
        for key in ("options", "patches")
    }


def _from_git(
    value: TomlTable, vals: TomlTable, p: Problems, where: str, base_dir: Path
) -> BuildSpec | None:
    """``build = {git = CLONE, ref = REF}``: the ref resolved to its commit now (pglab never
    fetches: the clone is as the user left it)."""
    if "source" in value:
        p.add(where, "give source or git, not both")
        return None
    if "git" not in vals or ("ref" in value and "ref" not in vals):
        return None  # said
    ref = vals.get("ref", "HEAD")
    clone = _from(base_dir, vals["git"])
    try:
        commit = git_sources.commit_of(clone, ref)
    except LabError as exc:
        p.add(where, exc.message + (f" ({exc.hint})" if exc.hint else ""))
        return None
    lists = _lists(vals)
    return BuildSpec(
        source=clone,
        options=lists["options"],
        patches=tuple(_from(base_dir, patch) for patch in lists["patches"]),
        git_ref=ref,
        commit=commit,
    )
