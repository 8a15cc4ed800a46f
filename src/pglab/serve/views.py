"""What the list pages of ``pglab serve`` show, gathered from the store, the fleet's queue and
the lab's live state: plain data, drawn by the templates (``CampaignsPage``, ``FleetPage``,
a ``RunningCampaign`` each, which ``/live.json`` also gives)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypedDict

from pglab.errors import LabError
from pglab.fleet import queue
from pglab.rows import CampaignRow
from pglab.run import live
from pglab.store import Store


class ListedCampaign(CampaignRow):
    """A campaign of the list page: the store's row with its servers' versions and hosts."""

    versions: list[str]
    hosts: list[str]


class CampaignsPage(TypedDict):
    """The campaigns page: the campaigns kept, and the filters' choices."""

    rows: list[ListedCampaign]  # newest run first
    total: int  # campaigns in the store
    versions: list[str]  # every server version of a run
    hosts: list[str]  # every host a run ran on


class FleetPage(TypedDict):
    """The fleet page: its queue's jobs and its workers (none with a SQLite store: ``note``)."""

    jobs: list[queue.JobRow]
    workers: list[queue.WorkerRow]
    counts: dict[str, int]  # jobs by status
    now: float
    note: str


class RunningCampaign(TypedDict):
    """A campaign running now, as ``pglab watch`` reads its live state."""

    campaign: str
    pid: int
    started: float
    run_index: int
    run_total: int
    ok: int
    failed: int
    label: str
    repeat: int
    phase: str
    status: str
    tps: float | None  # of the last second
    latency_ms: float | None
    tps_window: list[Any]  # the last seconds' TPS, as the live state keeps them
    done_pct: float
    eta_s: float
    updated: float
    waits: list[list[Any]]  # [wait, sessions] of the top five
    finished: list[list[Any]]  # [label, repeat, ok, tps or reason] of the runs done


@dataclass(frozen=True)
class Filters:
    """The campaigns page's search: words of the name, a server version, a host, and the
    dates of the last run (inclusive)."""

    q: str = ""
    version: str = ""
    host: str = ""
    since: date | None = None
    until: date | None = None

    @classmethod
    def of(cls, params: dict[str, str]) -> Filters:
        """From the query; a date that is not YYYY-MM-DD is a LabError naming it."""

        def day(key: str) -> date | None:
            text = params.get(key, "").strip()
            if not text:
                return None
            try:
                return date.fromisoformat(text)
            except ValueError:
                raise LabError(
                    f"{key}={text!r} is not a date", hint="write it as YYYY-MM-DD, e.g. 2026-11-26"
                ) from None

        return cls(
            params.get("q", "").strip(),
            params.get("version", "").strip(),
            params.get("host", "").strip(),
            day("since"),
            day("until"),
        )

    def keeps(self, camp: ListedCampaign) -> bool:
        words = self.q.lower().split()
        if any(w not in camp["name"].lower() for w in words):
            return False
        if self.version and not any(v.startswith(self.version) for v in camp["versions"]):
            return False
        if self.host and self.host not in camp["hosts"]:
            return False
        last = camp["last_run_at"]
        on = datetime.fromtimestamp(last).date() if last else None
        if self.since and (on is None or on < self.since):
            return False
        return not (self.until and (on is None or on > self.until))


def campaigns(store: Store, filters: Filters) -> CampaignsPage:
    """The campaigns the filters keep, newest run first, with their versions and hosts; and
    every version and host there is (the filters' choices)."""
    facts = store.campaign_facts()
    rows: list[ListedCampaign] = []
    for camp in store.list_campaigns():
        found = facts.get(camp["name"], {"versions": [], "hosts": []})
        rows.append(ListedCampaign(**camp, versions=found["versions"], hosts=found["hosts"]))
    kept = [c for c in rows if filters.keeps(c)]
    kept.sort(key=lambda c: c["last_run_at"] or c["created_at"] or 0, reverse=True)
    return {
        "rows": kept,
        "total": len(rows),
        "versions": sorted({v for c in rows for v in c["versions"]}),
        "hosts": sorted({h for c in rows for h in c["hosts"]}),
    }


def fleet(store_url: str) -> FleetPage:
    """The fleet's jobs (queued, running where, finished) and workers with their heartbeats;
    ``note`` says why there is none (a SQLite store holds no queue)."""
    if not queue.is_postgres_url(store_url):
        return {
            "jobs": [],
            "workers": [],
            "counts": {},
            "now": time.time(),
            "note": "This store is a SQLite file: the fleet's queue lives in a PostgreSQL "
            "store (pglab fleet needs one), so there is no fleet to show.",
        }
    jobs = queue.jobs_of(store_url)
    return {
        "jobs": jobs,
        "workers": queue.workers_of(store_url),
        "counts": queue.counts(jobs),
        "now": time.time(),
        "note": "" if jobs else "No job was ever queued in this store.",
    }


def running(home: Path) -> list[RunningCampaign]:
    """The campaigns running now in the lab, as ``pglab watch`` reads them: counters, the
    current run, its last seconds, ETA."""
    now = time.time()
    out: list[RunningCampaign] = []
    for s in live.running(home):
        last = s.samples[-1] if s.samples else None
        out.append(
            {
                "campaign": s.campaign,
                "pid": s.pid,
                "started": s.started,
                "run_index": s.run_index,
                "run_total": s.run_total,
                "ok": s.ok,
                "failed": s.failed,
                "label": s.label,
                "repeat": s.repeat,
                "phase": s.phase,
                "status": s.status,
                "tps": last[1] if last else None,
                "latency_ms": last[2] if last else None,
                "tps_window": [row[1] for row in s.samples],
                "done_pct": 100 * min(s.done_s / s.total_s, 1.0) if s.total_s else 0.0,
                "eta_s": s.eta_s(now),
                "updated": s.updated,
                "waits": [[w[0], w[1]] for w in s.waits[:5]],
                "finished": s.finished,
            }
        )
    return out
