"""What every benchmark script shares: its command line and the lab it runs in."""

from __future__ import annotations

import argparse
import atexit
import math
import random
import re
import shutil
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from pglab import procs
from pglab.campaign.spec import RunSpec
from pglab.jsonish import JsonObject
from pglab.lab import Lab
from pglab.pgbench.invoke import auto_threads
from pglab.postgres.server import Cluster
from pglab.postgres.sources import Binaries
from pglab.records import RunResult
from pglab.run.executor import Executor
from pglab.store import Store, open_store


def parser(doc: str | None, point: bool = True, **defaults: object) -> argparse.ArgumentParser:
    """A parser showing the script's docstring, with ``--lab-dir`` and, for scripts that run
    one pgbench point, ``--duration --clients --script --scale`` (``defaults`` override)."""
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    if point:
        ap.add_argument("--duration", type=int, default=10)
        ap.add_argument("--clients", type=int, default=2)
        ap.add_argument("--script", default="select-only")
        ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--lab-dir", type=Path, default=None)
    ap.set_defaults(**defaults)
    return ap


def open_lab(args: argparse.Namespace) -> Lab:
    return Lab.open(args.lab_dir) if args.lab_dir else Lab.open()


def scratch_store() -> Store:
    """A SQLite store in a temporary directory, removed when the bench exits: the executor
    reads a campaign's stored runs before a phase with a full latency log (its sampling rate),
    so it needs one even where the bench keeps nothing."""
    tmp = tempfile.mkdtemp(prefix="pglab-bench-")
    atexit.register(shutil.rmtree, tmp, True)
    return open_store(Path(tmp) / "bench.sqlite")


def point_doc(name: str, args: argparse.Namespace, **workload: object) -> JsonObject:
    """A one-point campaign document from the point options."""
    return {
        "name": name,
        "dataset": {"scale": args.scale},
        "workload": {
            "script": args.script,
            "clients": args.clients,
            "duration": args.duration,
            **workload,
        },
    }


def wilson(k: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k/n."""
    z = 1.959964
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, mid - half), min(1.0, mid + half)


def bootstrap_median_ci(
    values: list[float], rounds: int = 10_000, seed: int = 1
) -> tuple[float, float]:
    """A 95% bootstrap interval of the median of ``values``."""
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds))
    return medians[int(0.025 * rounds)], medians[int(0.975 * rounds) - 1]


def run_pairs(
    executor: Executor,
    binaries: Binaries,
    points: dict[str, RunSpec],
    pairs: int,
    check: Callable[[str, RunResult], None] | None = None,
) -> dict[str, list[float]]:
    """``pairs`` rounds of each of the two ``points`` (name -> RunSpec) once through the
    executor, the order alternating between rounds so that the drift of a shared machine falls
    on both; each run's TPS by name. ``check(name, result)`` looks at a run as it ends."""
    names = list(points)
    tps: dict[str, list[float]] = {name: [] for name in names}
    for i in range(pairs):
        for name in names if i % 2 == 0 else reversed(names):
            result = executor.run_one(points[name], binaries)
            assert result.status == "ok", result.error
            if check is not None:
                check(name, result)
            tps[name].append(result.metrics.value("tps"))
            print(f"pair {i + 1} {name:5s} {tps[name][-1]:10.1f} tps", flush=True)
    return tps


def bare_tps(
    binaries: Binaries,
    cluster: Cluster,
    args: argparse.Namespace,
    extra: tuple[str, ...],
    cwd: str | Path,
) -> float:
    """Bare pgbench at the point of ``args`` (``--clients --duration --script``) against a
    running ``cluster``, with ``extra`` options, in ``cwd``: its ``tps =`` line."""
    out = procs.run(
        [
            binaries.exe("pgbench"),
            "-c",
            str(args.clients),
            "-j",
            str(auto_threads(args.clients)),
            "-T",
            str(args.duration),
            "-b",
            args.script,
            *extra,
            *cluster.pgbench_conn_args(),
        ],
        timeout=args.duration * 3 + 60,
        cwd=cwd,
    )
    found = re.search(r"^tps = ([0-9.]+)", out.stdout, re.M)
    assert found, out.stdout
    return float(found.group(1))
