"""Ground truth for ``pglab tune``: an exhaustive grid over 3 knobs × 3 levels on a write-heavy
point (tpcb-like), every configuration run ``--repeats`` times (interleaved, so the machine's
drift spreads over all of them), stored as the campaign ``tune-truth`` in the results store.
``bench/tune.py`` then replays tuning against this recorded grid.

The levels include the server's defaults (shared_buffers 128MB, max_wal_size 1GB, wal_buffers
automatic) and the levels nearest PGTune's rules for a machine of this size (1GB, 4GB, 16MB).
Prints each configuration's median TPS with a bootstrap 95% CI, then ``grid_best: CONFIG X tps``
and ``grid_spread: best/worst``.

    .venv/bin/python bench/tune_truth.py [--repeats 3] [--duration 10] [--scale 10] [--clients 4]
        [--store FILE] [--lab-dir DIR]
"""

from __future__ import annotations

import argparse
import statistics
import tomllib
from itertools import product
from pathlib import Path

from _common import bootstrap_median_ci, parser

from pglab.cli import main as pglab
from pglab.store import open_store

NAME = "tune-truth"
GRID = {
    "shared_buffers": ["16MB", "128MB", "1GB"],
    "max_wal_size": ["64MB", "1GB", "4GB"],
    "wal_buffers": ["64kB", "-1", "16MB"],
}
DEFAULT_STORE = Path("/tmp/pglab-bench-tune/truth.sqlite")


def grid_parser(doc: str | None, repeats: int) -> argparse.ArgumentParser:
    """The point's options (the grid's and the live tuning's are the same point) and --store."""
    ap = parser(doc, point=False)
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--store", default=str(DEFAULT_STORE))
    return ap


def point_text(name: str, args: argparse.Namespace, top: str = "") -> str:
    """The write-heavy point, as the start of a campaign file (``top``: more top-level keys)."""
    return f"""name = "{name}"
{top}[dataset]
scale = {args.scale}
[workload]
script = "tpcb-like"
clients = {args.clients}
duration = {args.duration}
latency_log = "aggregate"
"""


def campaign_text(args: argparse.Namespace) -> str:
    axes = "\n".join(f"{k} = {[v for v in vs]!r}".replace("'", '"') for k, vs in GRID.items())
    return point_text(NAME, args, f"repeats = {args.repeats}\n") + f"[matrix.settings]\n{axes}\n"


def grid(store_path: str) -> dict[tuple[str, ...], list[float]]:
    """Each configuration's TPS values, stored by this script: (sb, mws, wb) -> [tps, ...]."""
    with open_store(store_path, read_only=True) as store:
        runs = store.list_runs(NAME)
    found: dict[tuple[str, ...], list[float]] = {c: [] for c in product(*GRID.values())}
    for run in runs:
        if run.ok and run.tps is not None:
            key = tuple(str(run.axes[f"settings.{k}"]) for k in GRID)
            found[key].append(run.tps)
    return found


def main() -> None:
    args = grid_parser(__doc__, repeats=3).parse_args()
    Path(args.store).parent.mkdir(parents=True, exist_ok=True)
    path = Path(args.store).with_name("tune-truth.toml")
    path.write_text(campaign_text(args))
    tomllib.loads(path.read_text())
    argv = ["run", str(path), "--store", args.store]
    if args.lab_dir:
        argv += ["--lab-dir", str(args.lab_dir)]
    status = pglab(argv)
    if status not in (0, 1):
        raise SystemExit(status)
    found = grid(args.store)
    medians = {}
    for config, values in sorted(found.items()):
        if not values:
            continue
        medians[config] = statistics.median(values)
        low, high = bootstrap_median_ci(values) if len(values) > 1 else (values[0], values[0])
        print(
            f"{' '.join(config):22s} {medians[config]:9.1f} tps  (95% CI {low:.1f}–{high:.1f},"
            f" {len(values)} runs)",
            flush=True,
        )
    best = max(medians, key=medians.__getitem__)
    worst = min(medians, key=medians.__getitem__)
    print(f"grid_best: {' '.join(best)} {medians[best]:.1f} tps")
    print(f"grid_spread: {medians[best] / medians[worst]:.3f}")


if __name__ == "__main__":
    main()
