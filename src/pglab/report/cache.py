"""What a report keeps of each stored run between reports: its latency histogram merged over
its measured phases (what the point's percentiles over every transaction need), so that the
next report of a campaign of 1,000 runs does not decode 60 per-second histograms per run again.

A stored run never changes: the key is the campaign, the run's key and id, and when it started
and finished (a run deleted and run again is another key). The files live in the lab home
(``cache/report/``, a few kB a run); one that cannot be read or written is simply not used.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from pglab.pgbench import latency as latency_hist
from pglab.rows import RunRow

VERSION = 2  # of what a file holds (2: sampled logs weighted by 1/rate)


class RunCache:
    def __init__(self, home: Path | None):
        self.dir = home / "cache" / "report" if home is not None else None

    def _path(self, run: RunRow) -> Path | None:
        if self.dir is None:
            return None
        ident = "|".join(
            map(repr, (VERSION, run.campaign, run.run_key, run.id, run.started_at, run.finished_at))
        )
        return self.dir / f"{hashlib.sha256(ident.encode()).hexdigest()[:32]}.json"

    def histogram(self, run: RunRow) -> latency_hist.Histogram | None:
        path = self._path(run)
        if path is None:
            return None
        try:
            found = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return tuple((int(b), int(c)) for b, c in found["histogram"])

    def keep(self, run: RunRow, hist: latency_hist.Histogram) -> None:
        path = self._path(run)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # a file per writer: the threads of pglab serve may keep one run at once
            tmp = path.with_suffix(f".{os.getpid()}-{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps({"histogram": [list(p) for p in hist]}))
            tmp.replace(path)
        except OSError:
            pass  # a report without its cache is only slower next time
