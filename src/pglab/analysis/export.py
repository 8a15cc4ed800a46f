"""Stored runs as a table for other tools: one CSV row per run with its ids, status, times,
matrix coordinates, server version, every metric and its error."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from pglab.rows import StoredRun


def runs_csv(runs: Sequence[StoredRun]) -> str:
    base = ["id", "campaign", "variant", "label", "repeat", "status", "started_at", "finished_at"]
    axes = list(dict.fromkeys(k for r in runs for k in r.axes))
    metrics = sorted({k for r in runs for k in r.metrics})
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(base + axes + ["server_version"] + metrics + ["error"])
    for r in runs:
        writer.writerow(
            [getattr(r, k) for k in base]
            + [r.axes.get(a) for a in axes]
            + [r.fingerprint.get("server_version")]
            + [r.metrics.get(k) for k in metrics]
            + [r.error or ""]
        )
    return out.getvalue()
