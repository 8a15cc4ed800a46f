"""One fleet job, run by a worker in a child process: ``python -m pglab.fleet.job`` reads the job
(JSON on stdin: the campaign's document, its directory, the files it names (by content, in the
store: ``fleet/files.py``), the points of the group and, with ``[fleet] spread = "rounds"``, its
round, the store, the lab home, the worker's name), writes the files this machine lacks, runs
those points as ``pglab run`` does (``run/campaign_run.py``: leftovers of a dead pglab cleaned
first, every run stored whole, the worker's name in each run's fingerprint) and
says what happens a line at a time on stdout.

Exit: 0 every run ok, 1 some run failed (stored as failed: not the queue's to retry),
2 the campaign cannot run here (an error before any run), 3 interrupted (SIGINT: the worker is
stopping or died; nothing half is stored, the server is stopped).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pglab.campaign.parse import parse
from pglab.campaign.spec import RunSpec
from pglab.errors import LabError
from pglab.fleet import files
from pglab.fleet.queue import JobPayload, document_of
from pglab.lab import Lab
from pglab.records import RunResult, reason_of
from pglab.run.campaign_run import How, run_campaign
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store


class LineEvents(QuietEvents):
    def status(self, message: str) -> None:
        print(message, flush=True)

    def run_started(self, run: RunSpec, index: int, total: int) -> None:
        print(f"run {index}/{total}: {run.label} repeat {run.repeat}", flush=True)

    def run_finished(self, run: RunSpec, result: RunResult) -> None:
        said = "ok" if result.status == "ok" else f"failed: {reason_of(result.error or '')}"
        print(f"  {run.label} repeat {run.repeat}: {said}", flush=True)


def main() -> int:
    job: JobPayload = json.load(sys.stdin)  # as the worker wrote it
    try:
        with open_store(job["store"]) as store:
            for path in files.place(store, job.get("files", [])):
                print(f"wrote {path} (the job carries it)", flush=True)
            campaign = parse(
                document_of(job),
                default_name=job["campaign"],
                base_dir=Path(job["base_dir"]),
                source_file=job.get("source_file"),
            )
            lab = Lab.open(Path(job["lab_home"]))
            executor = Executor(lab, store, LineEvents(), worker=job["worker"])
            # the group's runs as `pglab run` runs a campaign; the tidy rows are left to export
            # (the campaign's other jobs store runs at the same time)
            how = How(points=set(job["points"]), rounds=job.get("rounds"), tidy=False)
            outcome = run_campaign(executor, campaign, how)
    except KeyboardInterrupt:
        print("interrupted: the run in progress was abandoned, nothing of it stored", flush=True)
        return 3
    except LabError as exc:
        print(f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else ""), flush=True)
        return 2
    return 1 if outcome.failed else 0


if __name__ == "__main__":
    sys.exit(main())
