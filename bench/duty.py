"""How much of a campaign's wall time is measurement? The duty cycle of a real campaign.

Runs a campaign of 12 runs (2 variants, ``synchronous_commit`` on and off, × 6 repeats,
interleaved) of one 30 s tpcb-like write phase at scale 50 with 4 clients, everything at its
default (a fresh copy of the dataset and a fresh server per run, full telemetry, the
per-transaction latency log), in a fresh results store, and prints where the wall time went:
the measured seconds (pgbench's -T of the measured phases), and around them the dataset's
making (once, when the lab has no template yet), the previous run's server stopped, the dataset
reset by copy, the server started with the run's settings, the environment fingerprint,
telemetry (samplers started, the closing snapshot that waits for every session to end),
pgbench beyond its -T (vacuum, connections, its log read back), storing the run, and the rest
(the executor's own work, the last server's stop). The next run's copy is begun as a run ends
(``postgres/ahead.py``): "dataset reset (copy)" is the time a run waited for its copy, and the
copy's own time is said beside it. With ``--profile`` every measured phase is profiled (perf
at 99 Hz, its recording folded once the run's server is stopped): "profiles" is perf's stop
and the folding. The last line is ``duty_cycle: X`` (measured seconds ÷ wall seconds; target
≥ 0.95, issue 57), with the same excluding the dataset's making.

    .venv/bin/python bench/duty.py [--runs 12] [--duration 30] [--scale 50] [--clients 4]
        [--profile]
    .venv/bin/python bench/duty.py --quick      # 4 runs of 10 s at scale 10: about a minute
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from _common import open_lab, parser

from pglab.campaign import parse as campaign
from pglab.records import RunResult
from pglab.run import campaign_run
from pglab.run.executor import Executor
from pglab.store import Store, open_store


class TimedStore:
    """The store, with the seconds spent saving runs counted."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.saving = 0.0

    def save_run(self, result: RunResult) -> int:
        t = time.monotonic()
        try:
            return int(self.store.save_run(result))
        finally:
            self.saving += time.monotonic() - t

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--duration", type=int, default=30)
    ap.add_argument("--scale", type=int, default=50)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--quick", action="store_true", help="4 runs of 10 s at scale 10")
    ap.add_argument("--profile", action="store_true", help="perf in every measured phase")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.duration, args.scale = 4, 10, 10
    doc = {
        "name": f"duty-{int(time.time())}",
        "repeats": max(1, args.runs // 2),
        "dataset": {"scale": args.scale},
        "workload": {"script": "tpcb-like", "clients": args.clients, "duration": args.duration},
        "variants": {"sync-on": {}, "sync-off": {"settings": {"synchronous_commit": "off"}}},
    }
    if args.profile:
        doc["profile"] = {"frequency": 99}
    camp = campaign.parse(doc, doc["name"])
    lab = open_lab(args)
    with (
        tempfile.TemporaryDirectory(prefix="pglab-duty-") as tmp,
        open_store(str(Path(tmp) / "results.sqlite")) as inner,
    ):
        timed = TimedStore(inner)
        store = cast(Store, timed)  # a Store to the executor, timing its saves
        t0, began = time.monotonic(), time.time()
        outcome = campaign_run.run_campaign(Executor(lab, store), camp)
        wall = time.monotonic() - t0
        got = [
            inner.get_run(r.id, skip_kinds=("latency", "pg.io", "waits"))
            for r in inner.list_runs(doc["name"])
        ]
    runs = [r for r in got if r is not None]
    assert outcome.failed == 0 and len(runs) == outcome.ok, "a run failed: see pglab show"
    measured = pgbench_extra = 0.0
    for r in runs:
        for ph in r.phases:
            if ph.measured:
                seconds = float(ph.report.duration_s or args.duration)
                measured += seconds
                pgbench_extra += float(ph.elapsed_s or 0) - seconds

    def total(key: str) -> float:
        return sum(float(r.timings.get(key, 0.0)) for r in runs)

    init = max(
        (
            float(r.timings.get("dataset_init_s", 0.0))
            for r in runs
            if r.timings.get("dataset_made_now")
        ),
        default=0.0,
    )
    # a copy begun as the previous run ended (reset_ahead): the run waited for what was left
    ahead = [r for r in runs if r.timings.get("reset_ahead")]
    copies = sum(
        float(r.timings.get("reset_waited_s", 0.0))
        + (0.0 if r.timings.get("reset_ahead") else float(r.timings.get("reset_s", 0.0)))
        for r in runs
    )
    parts = {
        "measured (pgbench -T of the measured phases)": measured,
        "dataset made (pgbench -i, once)": init,
        "server stopped (at once when its copy is thrown away)": total("stop_s"),
        "dataset reset (copy; waited for, when begun ahead)": copies,
        "profiles: perf stopped, its recording folded": total("profile_s"),
        "server started with the run's settings": total("settings_s"),
        "fingerprint": total("fingerprint_s"),
        "telemetry: samplers started, closing snapshot": total("telemetry_s"),
        "pgbench beyond -T: vacuum, connections, its log read": pgbench_extra,
        "storing the runs": timed.saving,
    }
    parts["the rest: the executor, the last server's stop"] = wall - sum(parts.values())
    print(
        f"{len(runs)} runs of {args.duration} s at scale {args.scale}, "
        f"{args.clients} clients: {wall:.1f} s of wall time"
    )
    for name, seconds in parts.items():
        print(f"  {name:55s} {seconds:8.1f} s  {seconds / wall:6.1%}")
    print(
        f"copies begun ahead: {len(ahead)} of {len(runs)} runs; the copies' own time "
        f"{total('reset_s'):.1f} s"
    )
    if args.profile:
        print(
            f"profiles: of which folding, once each run's server stopped: "
            f"{total('profile_fold_s'):.1f} s"
        )
    per_run = [float(r.finished_at - r.started_at) - args.duration for r in runs]
    print(
        f"overhead per run (its wall time less -T): median {statistics.median(per_run):.1f} s "
        f"(range {min(per_run):.1f}–{max(per_run):.1f})"
    )
    # each run's slot of the wall: from the previous run's end (the campaign's start for the
    # first, less the dataset's making) to its own end; the interval resamples the runs
    ordered = sorted(runs, key=lambda r: float(r.finished_at))
    ends = [began + init] + [float(r.finished_at) for r in ordered]
    slots = [b - a for a, b in zip(ends, ends[1:], strict=False)]
    lo, hi = ratio_of_sums_ci([float(args.duration)] * len(slots), slots)
    print(
        f"duty_cycle_without_dataset: {measured / (wall - init):.4f} "
        f"(95% CI {lo:.4f}–{hi:.4f}, {len(slots)} runs resampled)"
    )
    print(f"duty_cycle: {measured / wall:.4f}")


def ratio_of_sums_ci(
    num: list[float], den: list[float], rounds: int = 10_000, seed: int = 1
) -> tuple[float, float]:
    """A 95% bootstrap interval of sum(num) / sum(den), the pairs resampled."""
    rng = random.Random(seed)
    idx = range(len(num))
    got = []
    for _ in range(rounds):
        pick = rng.choices(idx, k=len(num))
        got.append(sum(num[i] for i in pick) / sum(den[i] for i in pick))
    got.sort()
    return got[int(0.025 * rounds)], got[int(0.975 * rounds) - 1]


if __name__ == "__main__":
    main()
