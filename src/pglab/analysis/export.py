"""Stored runs as a table for other tools: one CSV row per run with its ids, status, times,
matrix coordinates, server version, every metric and its error."""

from __future__ import annotations

import csv
import io
from typing import Any


def runs_csv(runs: list[dict[str, Any]]) -> str:
    base = ["id", "campaign", "variant", "label", "repeat", "status", "started_at", "finished_at"]
    axes = sorted({k for r in runs for k, _ in (r.get("spec") or {}).get("axes", [])})
    metrics = sorted({k for r in runs for k in (r.get("metrics") or {})})
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(base + axes + ["server_version"] + metrics + ["error"])
    for r in runs:
        ax = dict((r.get("spec") or {}).get("axes", []))
        m = r.get("metrics") or {}
        writer.writerow(
            [r.get(k) for k in base]
            + [ax.get(a) for a in axes]
            + [(r.get("fingerprint") or {}).get("server_version")]
            + [m.get(k) for k in metrics]
            + [r.get("error") or ""]
        )
    return out.getvalue()
