"""A campaign checked and queued as the fleet's jobs: what ``pglab run FILE --fleet`` and a
schedule's execution (``fleet.schedules``) both do. Checked as a run would be (settings,
scripts, connections, capacity: ``run/campaign_run.checked``), refused when stored points are
no longer in the file, the campaign stored, the files it names kept in the store for the
workers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pglab.campaign.parse import Campaign
from pglab.fleet import files
from pglab.fleet import queue as fleet
from pglab.lab import Lab
from pglab.planning.plan import Plan
from pglab.run import campaign_run
from pglab.store import open_store


@dataclass(frozen=True)
class Enqueued:
    submitted: fleet.Submitted
    plan: Plan
    carried: list[files.Carried]  # the files the jobs carry

    @property
    def runs(self) -> int:
        return sum(g.runs for g in self.submitted.added)


def enqueue(url: str, lab_home: Path, camp: Campaign, queue: str) -> Enqueued:
    """Check ``camp`` here (``lab_home``'s lab: its sources, its machine) and queue its jobs."""
    fleet.require_postgres(url)
    lab = Lab.open(lab_home)
    with open_store(url) as store:
        stored = campaign_run.Stored.read(store, camp)
        outline, _ = campaign_run.checked(lab, camp, stored)  # what workers would check
        campaign_run.refuse_stale(camp, stored)
        campaign_run.record(store, camp)
        plan = outline.plan
        carried = files.carry(store, plan.points)
    return Enqueued(fleet.submit(url, camp, plan, queue, carried), plan, carried)
