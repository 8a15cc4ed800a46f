"""ETA honesty of maintenance operations longer than the integration test's: a VACUUM throttled
as autovacuum runs, and a CREATE INDEX with an external sort on a bigger table.

Two campaigns, ``--runs`` repeats each in sequence, stored in one SQLite store so that every run
after the first tells its ETA from the one before ("history"), as pglab does for a point's
repeats:
- "vacuum" (scale ``--vacuum-scale``, a fresh copy per run): VACUUM after ``dirty = 0.1`` (10%
  of pgbench_accounts updated, checkpointed), with the server's ``vacuum_cost_delay = 2ms`` and
  ``vacuum_cost_limit = --cost-limit``: its "scanning heap" phase paced by the cost delay, as
  an autovacuum's is;
- "index" (scale ``--index-scale``, one copy for all its runs: the index is dropped after each):
  CREATE INDEX on ``--columns`` with ``maintenance_work_mem = --index-mwm`` (an external sort,
  its runs written during the scan): its "building index: scanning table" phase.
Progress rows are read every ``--progress`` seconds (pglab's ``operations.PROGRESS_S``, 1 s by
default: the ETA is told the same way, but a phase's end is known to half that interval). At
the first rows past 25%, 50% and 75% of the main phase the ETA is compared with the time that
phase really had left, |ETA - left| / left (``workloads.maintenance.eta``), for two estimators:
"rate" (the remaining blocks at the phase's rate so far: what a first run shows; recomputed on
every run from its rows) and "history" (what every later run showed, from the run before).
Printed: each run's main phase length and errors; per operation and estimator the median error
with a 95% bootstrap interval over runs (a run's three errors are resampled together: they are
not independent), first as pglab's own rows once a second would have told it (every 4th row of
0.25 s, each of the 4 ways, the run before read alike, told again by ``eta.replay`` and judged
against the phase's end known from all rows), then as the runs showed it; last
``maintenance_eta_error_vacuum: X`` and ``maintenance_eta_error_index: Y``, the median over
runs, shares and both estimators as the runs showed them (the issue's target: at most 0.20).

    .venv/bin/python bench/maintenance_eta.py [--runs 5] [--cost-limit 200] [--index-scale 200]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import open_lab, parser

from pglab.campaign import parse as campaign
from pglab.jsonish import JsonObject
from pglab.rows import StoredRun
from pglab.run import campaign_run
from pglab.run.executor import Executor, QuietEvents
from pglab.store import open_store
from pglab.workloads.maintenance import operations
from pglab.workloads.maintenance.eta import eta_errors, phase_end, replay
from pglab.workloads.maintenance.figures import Prior

MAIN_PHASE = {"vacuum": "scanning heap", "index": "building index: scanning table"}
LABELS = {"vacuum": "maintenance_eta_error_vacuum", "index": "maintenance_eta_error_index"}
ESTIMATORS = ("rate", "history")
Errors = dict[tuple[str, str], list[list[float]]]  # (operation, estimator): each run's errors


def documents(args: argparse.Namespace) -> dict[str, JsonObject]:
    """The two campaigns, by operation."""
    return {
        "vacuum": {
            "name": "bench-eta-vacuum",
            "repeats": args.runs,
            "order": "sequential",
            "dataset": {"scale": args.vacuum_scale},
            "server": {
                "settings": {"vacuum_cost_delay": "2ms", "vacuum_cost_limit": str(args.cost_limit)}
            },
            "phases": [{"name": "vacuum", "operation": "vacuum", "dirty": 0.1}],
        },
        "index": {
            "name": "bench-eta-index",
            "repeats": args.runs,
            "order": "sequential",
            "dataset": {"scale": args.index_scale, "reset": "point"},
            "server": {"settings": {"maintenance_work_mem": args.index_mwm}},
            "phases": [{"name": "index", "operation": "create_index", "columns": args.columns}],
        },
    }


def runs_median_ci(
    per_run: list[list[float]], rounds: int = 10_000, seed: int = 1
) -> tuple[float, float]:
    """A 95% bootstrap interval of the median of all errors, the runs resampled (each run's
    errors together)."""
    rng = random.Random(seed)
    medians = sorted(
        statistics.median([e for run in rng.choices(per_run, k=len(per_run)) for e in run])
        for _ in range(rounds)
    )
    return medians[int(0.025 * rounds)], medians[int(0.975 * rounds) - 1]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--runs", type=int, default=5, help="repeats of each operation")
    ap.add_argument("--vacuum-scale", type=int, default=50)
    ap.add_argument("--cost-limit", type=int, default=200, help="the vacuum's vacuum_cost_limit")
    ap.add_argument("--index-scale", type=int, default=200)
    ap.add_argument("--index-mwm", default="1MB", help="the index's maintenance_work_mem")
    ap.add_argument("--columns", nargs="+", default=["filler", "aid"])
    ap.add_argument("--progress", type=float, default=0.25, help="seconds between rows")
    ap.add_argument("--store", type=Path, default=None, help="keep the runs in this SQLite file")
    args = ap.parse_args()
    if args.runs < 2:
        ap.error("--runs must be at least 2 (the history estimator needs a run before)")
    lab = open_lab(args)
    operations.PROGRESS_S = args.progress
    errors: Errors = {(op, how): [] for op in MAIN_PHASE for how in ESTIMATORS}
    at_1s: Errors = {(op, how): [] for op in MAIN_PHASE for how in ESTIMATORS}
    every = round(1.0 / args.progress)  # rows a second: pglab's own rows are every 4th of 0.25 s
    print(f"load average at start: {load()}", flush=True)
    t_start = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="pglab-eta-") as tmp,
        open_store(str(args.store or Path(tmp) / "r.sqlite")) as store,
    ):
        executor = Executor(lab, store, QuietEvents())
        for op, doc in documents(args).items():
            spec = campaign.parse(doc, default_name=doc["name"])
            out = campaign_run.run_campaign(executor, spec)
            assert out.ok == args.runs, f"{op}: {out.ok} of {args.runs} runs ok"
            found = [store.get_run(r.id) for r in store.list_runs(spec.name)][-args.runs :]
            runs = [run for run in found if run is not None]
            progress = [progress_of(run) for run in runs]
            for i, (run, (rows, ended)) in enumerate(zip(runs, progress, strict=True), 1):
                measure(op, i, run.phases[0].elapsed_s, rows, ended, errors)
            if every > 1:
                replayed(op, progress, every, at_1s)
            print(f"load average after {op}: {load()}", flush=True)
    print(f"{time.monotonic() - t_start:.0f} s in all")
    if every > 1:
        summary(at_1s, f"1 s rows: every {every}th, replayed")
    summary(errors, None)


def summary(errors: Errors, how_read: str | None) -> None:
    """Per operation and estimator the median error with its interval; then per operation over
    both estimators (the bench's last lines when ``how_read`` is None)."""
    tail = f", {how_read}" if how_read else ""
    for (op, how), per_run in errors.items():
        flat = [e for run in per_run for e in run]
        low, high = runs_median_ci(per_run)
        print(
            f"{op} {how}: median {statistics.median(flat):.3f} "
            f"(95% CI {low:.3f}–{high:.3f}, {len(flat)} errors of {len(per_run)} runs{tail})"
        )
    for op, label in LABELS.items():
        # a run's errors by both estimators resampled together
        rated, told = errors[(op, "rate")], errors[(op, "history")]
        per_run = [rated[0]] + [r + h for r, h in zip(rated[1:], told, strict=True)]
        flat = [e for run in per_run for e in run]
        low, high = runs_median_ci(per_run)
        print(
            f"{label if how_read is None else op + ' both'}: {statistics.median(flat):.3f} "
            f"(95% CI {low:.3f}–{high:.3f}, {len(flat)} errors of {len(per_run)} runs{tail})"
        )


def progress_of(run: StoredRun) -> tuple[list[list[Any]], float]:
    """A stored run's progress rows of its one phase and the epoch that phase ended."""
    ph = run.phases[0]
    table = next(t for k, t in run.series[str(ph.idx)].items() if k.startswith("progress."))
    return table["rows"], ph.started_at + ph.elapsed_s


def measure(
    op: str, i: int, elapsed: float, rows: list[list[Any]], ended: float, errors: Errors
) -> None:
    """Run ``i``'s errors of its main phase by both estimators as it showed them, kept and
    printed."""
    main = MAIN_PHASE[op]
    length = phase_end(rows, main, ended) - next(r[0] for r in rows if r[1] == main)
    rated = [e for e, _ in eta_errors(rows, main, ended, "rate")]
    errors[(op, "rate")].append(rated)
    shown = eta_errors(rows, main, ended, "shown")
    text = "-"
    if i > 1:  # told from the run before wherever that run had reached the share
        errors[(op, "history")].append([e for e, by in shown if by == "history"])
        text = " ".join(f"{e:.3f}" + ("" if by == "history" else f" ({by})") for e, by in shown)
    print(
        f"run {i} {op:6s} {main}: {length:5.1f} s of {elapsed:5.1f} s; errors at "
        f"25/50/75%: rate {' '.join(f'{e:.3f}' for e in rated)}, history {text}",
        flush=True,
    )


def replayed(
    op: str, progress: list[tuple[list[list[Any]], float]], every: int, errors: Errors
) -> None:
    """The runs' ETAs told again by today's estimator from every ``every``th row (each of the
    ``every`` ways to pick them, the run before picked alike), judged against the phase's end
    known from all rows: what rows read once a second would have shown."""
    main = MAIN_PHASE[op]
    for i, (rows, ended) in enumerate(progress):
        end = phase_end(rows, main, ended)
        rated: list[float] = []
        told: list[float] = []
        for offset in range(every):
            prior = None
            if i > 0:
                before, before_ended = progress[i - 1]
                prior = Prior(before[offset::every], before_ended)
            again = replay(rows[offset::every], prior)
            rated += [e for e, _ in eta_errors(again, main, ended, "rate", end=end)]
            told += [e for e, by in eta_errors(again, main, ended, end=end) if by == "history"]
        errors[(op, "rate")].append(rated)
        if i > 0:
            errors[(op, "history")].append(told)


if __name__ == "__main__":
    main()
