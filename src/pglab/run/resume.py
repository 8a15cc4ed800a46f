"""What stands between a stopped campaign and its resumption: leftovers of a dead pglab
(servers, storage targets) to undo, and stored points that the campaign file no longer has."""

from __future__ import annotations

from pglab.disks import targets as storage_targets
from pglab.errors import CampaignError
from pglab.lab import Lab
from pglab.postgres import server
from pglab.run import changes


def clean_leftovers(lab: Lab) -> list[str]:
    """Stop the servers and undo the storage targets that a dead pglab left in ``lab`` (what
    its records say it made); one line for each."""
    lines = [
        f"stopped a leftover of an earlier pglab: {line}" for line in server.stop_leftovers(lab)
    ]
    return lines + storage_targets.cleanup_leftovers(lab)


def find_stale(store, campaign: str, points) -> list[changes.StalePoint]:
    """Stored points of ``campaign`` that the campaign (as parsed now) no longer has."""

    def spec_of(run_id: int) -> dict | None:
        run = store.get_run(run_id)
        return run.spec if run else None

    return changes.stale_points(store.list_runs(campaign), points, spec_of)


def stale_error(campaign: str, stale: list[changes.StalePoint]) -> CampaignError:
    lines = "\n".join(f"  - {s.describe()}" for s in stale)
    return CampaignError(
        f"campaign {campaign!r} changed since some of its runs were stored; these stored "
        f"points are not in it as it is now, and resuming would mix old and new results:\n{lines}",
        hint="to keep both, give the file another `name = ...`; to delete those runs and go "
        "on, run it again with --replace",
    )
