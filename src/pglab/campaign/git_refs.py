"""A ref of a local git clone resolved to its commit, when the campaign file is read: a build
from git (``[server] build = {git = CLONE, ref = REF}``) is of that commit, recorded in the
point, whatever the branch does later. pglab never fetches: the clone is as its user left it."""

from __future__ import annotations

import shutil
from pathlib import Path

from pglab import procs
from pglab.errors import CommandError, LabError


def git() -> str:
    found = shutil.which("git")
    if found is None:
        raise LabError(
            "a build from git needs git, which is not on this machine's PATH",
            hint="apt-get install git",
        )
    return found


def _git(clone: str, *args: str) -> str:
    argv = [git(), "-c", f"safe.directory={clone}", "-C", clone, *args]
    return str(procs.run(argv, timeout=60, what="git").stdout).strip()


def commit_of(clone: str, ref: str) -> str:
    """The full hash of the commit ``ref`` names in ``clone``."""
    if not Path(clone, ".git").exists() and not Path(clone, "HEAD").is_file():
        raise LabError(
            f"git = {clone!r}: not a git clone", hint="give the path of a local clone of PostgreSQL"
        )
    try:
        return _git(clone, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except CommandError:
        raise LabError(
            f"ref = {ref!r}: no such branch, tag or commit in {clone}",
            hint=f"git -C {clone} branch -a; git -C {clone} tag",
        ) from None


def tree_of(clone: str, commit: str) -> str:
    """The hash of the commit's tree: what a build of it is made from (two commits with the
    same tree, a revert, share a build)."""
    return _git(clone, "rev-parse", f"{commit}^{{tree}}")


def subject_of(clone: str, commit: str) -> str:
    return _git(clone, "log", "-1", "--format=%s", commit)


def commits_between(clone: str, good: str, bad: str) -> list[str]:
    """The commits after ``good`` up to ``bad`` on the ancestry path between them, oldest
    first ([] when ``good`` is not an ancestor of ``bad``)."""
    said = _git(clone, "rev-list", "--reverse", "--ancestry-path", f"{good}..{bad}")
    return said.split()
