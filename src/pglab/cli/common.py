"""What every command shares: the consoles (the CLI is the only part of pglab that prints), where
the lab and the results store are, and finding a campaign or run by what the user typed."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from pglab.errors import LabError
from pglab.lab import default_home, default_store_url
from pglab.store import Store, mask_url, open_store

# Piped or captured output gets 120 columns (rich's 80 wraps the tables); COLUMNS still wins.
console = Console(
    stderr=False,
    highlight=False,
    width=None if sys.stdout.isatty() or "COLUMNS" in os.environ else 120,
)
err_console = Console(stderr=True, highlight=False)


@dataclass(frozen=True)
class Where:
    """The lab directory and the results store a command works on (``--lab-dir``,
    ``--store``; else ``PGLAB_HOME`` / ``PGLAB_STORE`` and their defaults)."""

    store: str | None = None
    lab_dir: Path | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Where:
        return cls(getattr(args, "store", None), getattr(args, "lab_dir", None))

    @property
    def home(self) -> Path:
        return (self.lab_dir or default_home()).absolute()

    @property
    def store_url(self) -> str:
        return self.store or default_store_url(self.home)

    def command(self, *args: str) -> str:
        """A ``pglab`` command line that runs against this lab and store when pasted into a
        shell: the ``--lab-dir``/``--store`` the user gave, every word quoted as the shell needs
        it, and a store URL with a password never written out (``"$PGLAB_STORE"`` instead)."""
        words = ["pglab"]
        if self.lab_dir is not None:
            words += ["--lab-dir", shlex.quote(str(self.lab_dir))]
        if self.store is not None:
            secret = mask_url(self.store) != self.store
            words += ["--store", '"$PGLAB_STORE"' if secret else shlex.quote(self.store)]
        return " ".join(words + [shlex.quote(a) for a in args])

    @property
    def secret_store(self) -> bool:
        """Whether the store was given with a password (hints then name $PGLAB_STORE)."""
        return self.store is not None and mask_url(self.store) != self.store

    def open(self, read_only: bool = False) -> Store:
        """The results store; ``read_only`` commands (ls, show, report…) can also read a store
        file they cannot write (a read-only mount, another user's file)."""
        return open_store(self.store_url, read_only=read_only)


def find(store: Store, ident: str, as_run: bool = False) -> tuple[str, Any]:
    """("campaign", the campaign) for a campaign of that name (all digits too, as ``pglab
    report`` and ``pglab serve`` take it), else ("run", the run) for a run id; ``as_run``
    (``--run``): ``ident`` is a run's id, whatever campaigns are named."""
    if as_run and not ident.isdigit():
        raise LabError(f"--run takes a run's id: {ident!r} is not one", hint="pglab ls lists runs")
    camp = None if as_run else store.get_campaign(ident)
    if camp is not None and camp["name"] == ident:
        if ident.isdigit() and store.get_run(int(ident), series=False) is not None:
            err_console.print(
                f"{ident} is a campaign's name and a run's id: this is the "
                f"campaign (--run {ident} for the run)",
                markup=False,
            )
        return "campaign", camp
    if ident.isdigit():
        run = store.get_run(int(ident))
        if run is not None:
            return "run", run
    if camp is not None:  # found by its id
        return "campaign", camp
    raise LabError(
        f"no campaign or run {ident!r} in the store",
        hint="`pglab ls --campaigns` lists campaigns, `pglab ls` lists runs",
    )
