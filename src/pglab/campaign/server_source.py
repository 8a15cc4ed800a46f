"""Where a ``[server]`` (or a variant's ``server``) gets PostgreSQL from: ``source`` with
``bindir``, ``build = { source, options, patches }`` (or ``{ git, ref, … }``: a clone's commit)
or ``version``, and which ``pgbench``
runs. A variant that names none of them keeps its base's source; paths are taken from the
campaign file's directory."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pglab.campaign import git_refs as git_sources
from pglab.campaign.checks import Problems
from pglab.campaign.schema import BUILD_KEYS, SOURCES
from pglab.campaign.spec import PGBENCH_CHOICES, BuildSpec, ServerSpec
from pglab.errors import LabError

KINDS = ("bindir", "build", "version")  # keys that name a source, and that source's name


@dataclass(frozen=True)
class Source:
    source: str
    bindir: str | None
    build: BuildSpec | None
    version: str | None
    pgbench: str


def parse(
    table: dict[str, Any], base: ServerSpec, p: Problems, where: str, base_dir: Path
) -> Source:
    given = [k for k in KINDS if k in table]
    if len(given) > 1:
        p.add(where, f"give one of {', '.join(given)}: each names where PostgreSQL comes from")
    if "source" in table:
        source = table["source"]
    elif given:
        source = given[0]
    else:
        source = base.source
    if source not in SOURCES:
        p.add(where, f'source = "{source}": use one of {", ".join(SOURCES)}')
    inherit = source == base.source and not given
    bindir = table.get("bindir", base.bindir if inherit else None)
    if isinstance(bindir, str) and bindir and not Path(bindir).is_absolute():
        bindir = _from(base_dir, bindir)  # like scripts: from the file's directory
    if source == "bindir" and not bindir:
        p.add(where, 'source = "bindir" needs bindir = "/path/to/postgresql/bin"')
    build = base.build if inherit else None
    if "build" in table:
        build = _build(table["build"], p, f"{where} build", base_dir)
    if source == "build" and build is None and "build" not in table:
        p.add(where, 'source = "build" needs build = { source = "postgresql-X.Y.tar.bz2" }')
    version = base.version if inherit else None
    if "version" in table:
        version = _version(table["version"], p, where)
    if source == "version" and version is None and "version" not in table:
        p.add(where, 'source = "version" needs version = "N" (a major version, e.g. "16")')
    pgbench = table.get("pgbench", base.pgbench)
    if not isinstance(pgbench, str) or not pgbench:
        p.add(where, f"pgbench = {pgbench!r}: use newest, server or a bindir path")
        pgbench = base.pgbench
    elif pgbench not in PGBENCH_CHOICES and "pgbench" in table:
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


def _version(value: Any, p: Problems, where: str) -> str | None:
    text = str(value) if isinstance(value, int | str) and not isinstance(value, bool) else ""
    if not text.isdigit():
        p.add(where, f'version = {value!r}: expected a major version, e.g. "16"')
        return None
    return text


def _build(value: Any, p: Problems, where: str, base_dir: Path) -> BuildSpec | None:
    if not isinstance(value, dict):
        p.add(where, 'expected a table: build = { source = "postgresql-X.Y.tar.bz2" }')
        return None
    p.unknown_keys(where, value, BUILD_KEYS)
    if "git" in value:
        return _from_git(value, p, where, base_dir)
    source = value.get("source")
    if not isinstance(source, str) or not source:
        p.add(where, "source: a PostgreSQL source tree or release tarball (a path) is needed, "
              "or git: a local clone")  # fmt: skip
        return None
    lists = _lists(value, p, where)
    return BuildSpec(
        source=_from(base_dir, source),
        options=lists["options"],
        patches=tuple(_from(base_dir, patch) for patch in lists["patches"]),
    )


def _lists(value: dict[str, Any], p: Problems, where: str) -> dict[str, tuple[str, ...]]:
    lists = {}
    for key in ("options", "patches"):
        items = value.get(key, [])
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
            p.add(where, f"{key} must be an array of strings")
            items = []
        lists[key] = tuple(items)
    return lists


def _from_git(value: dict[str, Any], p: Problems, where: str, base_dir: Path) -> BuildSpec | None:
    """``build = {git = CLONE, ref = REF}``: the ref resolved to its commit now (pglab never
    fetches: the clone is as the user left it)."""
    if "source" in value:
        p.add(where, "give source or git, not both")
        return None
    repo, ref = value.get("git"), value.get("ref", "HEAD")
    if not isinstance(repo, str) or not repo or not isinstance(ref, str) or not ref:
        p.add(where, "git: a local clone's path, ref: a branch, tag or commit (strings)")
        return None
    clone = _from(base_dir, repo)
    try:
        commit = git_sources.commit_of(clone, ref)
    except LabError as exc:
        p.add(where, exc.message + (f" ({exc.hint})" if exc.hint else ""))
        return None
    lists = _lists(value, p, where)
    return BuildSpec(
        source=clone,
        options=lists["options"],
        patches=tuple(_from(base_dir, patch) for patch in lists["patches"]),
        git_ref=ref,
        commit=commit,
    )
