"""A campaign checked and queued as the fleet's jobs: what ``pglab run FILE --fleet`` and a
schedule's execution (``fleet.schedules``) both do. Checked as a run would be (settings,
scripts, connections, capacity: ``planning.preflight``), refused when stored points are no longer
in the file, the campaign stored, the files it names kept in the store for the workers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pglab.campaign.parse import Campaign
from pglab.campaign.spec import masked_document
from pglab.fleet import files
from pglab.fleet import queue as fleet
from pglab.lab import Lab
from pglab.planning.plan import Plan
from pglab.planning.preflight import preflight
from pglab.run.resume import find_stale, stale_error
from pglab.store import open_store


@dataclass(frozen=True)
class Enqueued:
    submitted: fleet.Submitted
    plan: Plan
    carried: list[dict[str, str]]  # the files the jobs carry

    @property
    def runs(self) -> int:
        return sum(g.runs for g in self.submitted.added)


def enqueue(url: str, lab_home: Path, camp: Campaign, queue: str) -> Enqueued:
    """Check ``camp`` here (``lab_home``'s lab: its sources, its machine) and queue its jobs."""
    fleet.require_postgres(url)
    lab = Lab.open(lab_home)
    with open_store(url) as store:
        plan, _ = preflight(camp, lab, store.done_run_keys(camp.name))  # what workers would
        stale = find_stale(store, camp.name, plan.points)
        if stale:
            raise stale_error(camp.name, stale)
        store.ensure_campaign(camp.name, masked_document(camp.document), camp.source_file)
        carried = files.carry(store, plan.points)
    return Enqueued(fleet.submit(url, camp, plan, queue, carried), plan, carried)
