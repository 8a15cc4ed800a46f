"""What stands between a stopped campaign and its resumption: leftovers of a dead pglab
(servers, storage targets) to undo, and stored points that the campaign file no longer has."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from pglab.campaign.spec import RunSpec, ServerSpec, mask_dsn
from pglab.errors import CampaignError, LabError
from pglab.lab import Lab
from pglab.planning import changes
from pglab.postgres import altered, existing, server
from pglab.profile import watch as profile_watch
from pglab.run import memory_limit, os_state
from pglab.store.base import Store
from pglab.stored_spec import RunSpecJson
from pglab.targets import targets as storage_targets


def clean_leftovers(lab: Lab, servers: Iterable[ServerSpec] = ()) -> list[str]:
    """Stop the servers and undo the storage targets that a dead pglab left in ``lab`` (what
    its records say it made), and put back the settings it had changed on existing servers
    (reached with the dsn of ``servers`` that names the same server); one line for each."""
    lines = [
        f"stopped a leftover of an earlier pglab: {line}" for line in server.stop_leftovers(lab)
    ]
    lines += profile_watch.sweep_leftovers(lab)  # perf's files, when it was killed with pglab
    lines += os_state.put_back_leftovers(lab)  # [os]: before its loop devices go
    lines += memory_limit.remove_leftovers(lab)  # [os] memory: the server's cgroup
    return lines + storage_targets.cleanup_leftovers(lab) + put_back_leftovers(lab, servers)


def put_back_leftovers(lab: Lab, servers: Iterable[ServerSpec] = ()) -> list[str]:
    """Settings a killed pglab changed by ALTER SYSTEM on existing servers, put back now."""
    known = {mask_dsn(s.dsn): s for s in servers if s.dsn is not None}
    lines = []
    for journal in altered.left_behind(lab):
        spec = known.get(journal.server_key) or ServerSpec(dsn=_without_password(journal))
        try:
            names = existing.put_back(existing.ExistingServer(spec, lab), journal)
        except LabError as exc:
            lines.append(
                f"warning: an earlier pglab was killed while it had changed settings of "
                f"{journal.server_key}, and they could not be put back now ({exc.message}); "
                f"as a superuser there, run:\n{altered.by_hand(journal.originals)}"
            )
            continue
        lines.append(
            f"put back settings an earlier, killed pglab had changed on {journal.server_key}: "
            + ", ".join(names)
        )
    return lines


def find_stale(
    store: Store,
    campaign: str,
    points: Sequence[RunSpec],
    owned: Callable[[str], bool] | None = None,
) -> list[changes.StalePoint]:
    """Stored points of ``campaign`` that the campaign (as parsed now) no longer has, but for
    those of the variants a caller makes as it goes (``owned``: by the variant's name)."""

    def spec_of(run_id: int) -> RunSpecJson | None:
        run = store.get_run(run_id)
        return run.spec if run else None

    stored = [r for r in store.list_runs(campaign) if owned is None or not owned(r.variant)]
    return changes.stale_points(stored, points, spec_of)


def stale_error(campaign: str, stale: list[changes.StalePoint]) -> CampaignError:
    lines = "\n".join(f"  - {s.describe()}" for s in stale)
    return CampaignError(
        f"campaign {campaign!r} changed since some of its runs were stored; these stored "
        f"points are not in it as it is now, and resuming would mix old and new results:\n{lines}",
        hint="to keep both, give the file another `name = ...`; to delete those runs and go "
        "on, run it again with --replace",
    )


def _without_password(journal: altered.Journal) -> str:
    """The journal's (masked) dsn without the mask: libpq finds the password, if it can."""
    params = conninfo_to_dict(journal.server_key)
    params.pop("password", None)
    return make_conninfo("", **params)
