"""The next run's copy of its dataset, made while the last run ends.

A run whose data directory is thrown away after it (``reset = "run"``) has its server stopped
at once when its phases are over (``lease.LocalLease.finish``); the next run's fresh copy of
the dataset is then made in a thread of its own while this run's profiles are folded and it is
stored. The next run's ``prepare`` takes the copy when it is the one it needs (the same data
directory, WAL directory and dataset), waiting for what is left of it, and makes its own
otherwise: a copy that failed is made again in the foreground, where its error fails that run
as before. Nothing measured runs beside it: the copy ends before the next server starts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pglab.lab import Lab
from pglab.postgres import dataset as datasets


@dataclass
class CopyAhead:
    """A copy of ``dataset`` into ``datadir`` (its pg_wal in ``waldir``) under way in a thread."""

    datadir: Path
    waldir: Path | None
    key: str  # the dataset's
    seconds: float = 0.0  # the copy's own, once done
    failed: BaseException | None = None
    _thread: threading.Thread | None = field(default=None, repr=False)

    @classmethod
    def start(
        cls,
        lab: Lab,
        dataset: datasets.Dataset,
        datadir: Path,
        waldir: Path | None,
        status: Callable[[str], None],
    ) -> CopyAhead:
        ahead = cls(datadir, waldir, dataset.key)

        def copy() -> None:
            try:
                ahead.seconds = datasets.reset(lab, dataset, datadir, waldir, on_status=status)
            except BaseException as exc:  # told to whoever takes it: made again there
                ahead.failed = exc

        ahead._thread = threading.Thread(target=copy, name="pglab-copy-ahead", daemon=True)
        ahead._thread.start()
        return ahead

    def wait(self) -> float:
        """Until the copy is done; the seconds waited."""
        t0 = time.monotonic()
        if self._thread is not None:
            self._thread.join()
        return time.monotonic() - t0

    def fits(self, datadir: Path, waldir: Path | None, key: str) -> bool:
        """Whether it is the copy a run needs, made whole."""
        return self.failed is None and (self.datadir, self.waldir, self.key) == (
            datadir,
            waldir,
            key,
        )
