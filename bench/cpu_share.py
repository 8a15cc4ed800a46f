"""Where the CPU goes while pglab measures: pglab's own share, counted, not inferred from TPS.

On two saturated cores a TPS ratio of 0.98 against bare pgbench is a 2% effect that takes
dozens of noisy rounds to see. What pglab takes from the measured workload is, first of all,
CPU: its own process (the main thread reading pgbench's ``-P 1`` lines, each sampler's thread,
the live view) and the server sessions its samplers query through. This bench runs pglab's
point and, from 1 s after pgbench starts until 1 s before its ``-T`` ends, counts the CPU seconds of

- every thread of pglab's process (by name: ``pglab-stats``, ``pglab-waits``, ...; this
  bench's own counting thread left out),
- the server backends of pglab's sessions (``application_name`` pglab…, found in
  ``pg_stat_activity`` once at the start of the window),
- pgbench, the rest of the server, and everything else on the machine,

and prints each as a share of all the CPU time used in the window (busy, not idle), with the
median and 95% CI over the runs. ``pglab_cpu_share`` (pglab's process and its sessions) is
roughly the TPS it costs when pgbench and the server saturate every core.

    .venv/bin/python bench/cpu_share.py [--runs 5] [--duration 15] [--clients 2]
        [--script select-only] [--latency-log aggregate|full|off]
"""

from __future__ import annotations

import statistics
import subprocess
import threading
import time
from collections import defaultdict
from dataclasses import replace
from typing import Any

import psutil
from _common import bootstrap_median_ci, open_lab, parser, point_doc, scratch_store

from pglab.campaign import parse as campaign
from pglab.planning.plan import make_plan
from pglab.postgres.sources import resolve
from pglab.run.executor import Executor
from pglab.telemetry import watch

SETTLE_S = 1.0  # the window opens this long after pgbench starts (its clients connected)
# and closes this long before pgbench's -T ends (its backends still there to be counted)
CLOSE_S = 1.0
_window_s = 0.0  # the phase's duration less both margins


def busy(t: Any) -> float:  # psutil.cpu_times(): everything but idle and iowait
    return float(
        sum(v for k, v in t._asdict().items() if k not in ("idle", "iowait", "guest", "guest_nice"))
    )


class Counter:
    """Counts CPU per part between ``open()`` and ``close()`` for one phase."""

    def __init__(self, pw: watch.PhaseWatch):
        self.pw = pw
        self.me = psutil.Process()
        self.done = threading.Event()
        self.parts: dict[str, float] = {}
        self._thread = threading.Thread(target=self._run, name="bench-counter", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _snapshot(self, sessions: set[int]) -> dict[str, float]:
        names = {t.native_id: t.name for t in threading.enumerate()}
        out: dict[str, float] = defaultdict(float)
        for t in self.me.threads():
            name = names.get(t.id, "")
            if not name.startswith("pglab") and name != "MainThread":
                name = "pglab (other threads)"  # a phase's timer, pgbench's stderr reader
            if name == "bench-counter":
                continue
            if name == "MainThread":
                name = "pglab main thread"
            out[name] += t.user_time + t.system_time
        pgbench = set(self.pw._pgbench_pids())
        view = self.pw.cluster.os_view()
        postgres = view.postgres_pids() if view is not None and view.postgres_pids else []
        for pid in postgres + list(pgbench):
            try:
                c = psutil.Process(pid).cpu_times()
            except psutil.Error:
                continue
            part = (
                "pgbench"
                if pid in pgbench
                else "pglab's server sessions"
                if pid in sessions
                else "server (pgbench's backends and the rest)"
            )
            out[part] += c.user + c.system
        out["machine busy"] = busy(psutil.cpu_times())
        return out

    def _run(self) -> None:
        if self.done.wait(SETTLE_S):
            return
        with self.pw.cluster.connect() as conn:
            sessions = {
                r[0]
                for r in conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'pglab%%' "
                    "AND pid <> pg_backend_pid()"
                )
            }
        own = time.thread_time()
        before = self._snapshot(sessions)
        self.done.wait(_window_s)
        after = self._snapshot(sessions)
        spent = time.thread_time() - own  # this thread's own CPU, out of "machine busy"
        self.parts = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
        self.parts["machine busy"] -= spent


_counters: list[Counter] = []
_exit, _set_client = watch.PhaseWatch.__exit__, watch.PhaseWatch.set_client


def _counting_set_client(self: watch.PhaseWatch, proc: subprocess.Popen[Any]) -> None:
    _set_client(self, proc)
    c = Counter(self)
    _counters.append(c)
    c.start()


def _counting_exit(self: watch.PhaseWatch, *exc: object) -> None:
    for c in _counters:
        if c.pw is self and not c.done.is_set():
            c.done.set()
            c._thread.join()
    _exit(self, *exc)


watch.PhaseWatch.set_client = _counting_set_client  # type: ignore[method-assign]
watch.PhaseWatch.__exit__ = _counting_exit  # type: ignore[method-assign]


def main() -> None:
    ap = parser(__doc__, duration=15)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--latency-log", default="aggregate", choices=["aggregate", "full", "off"])
    args = ap.parse_args()
    lab = open_lab(args)
    doc = point_doc("bench-cpu-share", args)
    doc["workload"]["latency_log"] = args.latency_log
    point = make_plan(campaign.parse(doc, default_name="bench-cpu-share")).points[0]
    global _window_s
    # the phase less both margins and 1 s (the connection above)
    _window_s = (point.phases[0].duration or 0) - SETTLE_S - CLOSE_S - 1.0
    binaries = resolve(point.server, lab)
    executor = Executor(lab, store=scratch_store())
    shares: dict[str, list[float]] = defaultdict(list)
    try:
        for i in range(args.runs):
            _counters.clear()
            result = executor.run_one(replace(point), binaries)
            assert result.status == "ok", result.error
            parts = _counters[-1].parts
            total = parts.pop("machine busy")
            lab_share = sum(v for k, v in parts.items() if k.startswith("pglab"))
            parts["other processes on the machine"] = total - sum(parts.values())
            shares["pglab_cpu_share"].append(lab_share / total)
            for k, v in parts.items():
                shares[k].append(v / total)
            print(
                f"run {i + 1}: {result.metrics.value('tps'):.0f} tps, {total:.1f} CPU s busy, "
                f"pglab {lab_share / total:.2%}",
                flush=True,
            )
    finally:
        executor.close()
    print(
        f"{args.runs} runs, {args.script}, {args.clients} clients, {args.duration} s, "
        f"latency_log {args.latency_log}; share of the machine's busy CPU in each phase:"
    )
    for k in sorted(shares, key=lambda k: -statistics.median(shares[k])):
        if k == "pglab_cpu_share":
            continue
        lo, hi = bootstrap_median_ci(shares[k])
        print(f"  {k:42s} {statistics.median(shares[k]):7.2%} (95% CI {lo:.2%}–{hi:.2%})")
    lo, hi = bootstrap_median_ci(shares["pglab_cpu_share"])
    print(
        f"pglab_cpu_share: {statistics.median(shares['pglab_cpu_share']):.4f} "
        f"(95% CI {lo:.4f}–{hi:.4f})"
    )


if __name__ == "__main__":
    main()
