"""A pgbench script: a built-in name or a file path, with a weight (what ``-b name@weight``
and ``-f path@weight`` pass). A core module: the campaign's specs, the kits and pgbench's
own work declaration (``workloads/pgbench/work``) share it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

BUILTIN_SCRIPTS = ("tpcb-like", "simple-update", "select-only")


@dataclass(frozen=True, slots=True)
class Script:
    """A pgbench script: a built-in name or a file path, with a weight.

    Passed to pgbench as ``-b name@weight`` or ``-f path@weight``.
    """

    builtin: str | None = None
    path: str | None = None
    weight: int = 1
    sha256: str | None = None  # of a script file's content, so an edited script is a new point

    @property
    def label(self) -> str:
        return self.builtin if self.builtin else PurePath(str(self.path)).name
