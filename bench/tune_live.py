"""A live ``pglab tune`` on this machine, then its answer re-measured: the tune file tunes the
point of ``bench/tune_truth.py`` over ranges spanning its grid (shared_buffers 16MB–1GB,
max_wal_size 64MB–4GB, wal_buffers 64kB–16MB, log scale), with ``--trials`` trials and its
confirmation; then the confirmed winner (or the defaults when nothing won), the grid's best
configuration and the defaults are re-run ``--repeats`` times each, interleaved, as one campaign,
and compared by ``pglab show``'s verdicts (Δ% against the defaults, Welch's 95% CI, Holm).
Needs the grid stored first (``bench/tune_truth.py``, same ``--store``).

Prints the study's answer, the re-measurement table, then ``tune_live_vs_default: Δ% [CI]`` and
``tune_live_vs_grid_best: Δ% [CI]`` (the winner against the defaults and against the grid's best).

    .venv/bin/python bench/tune_live.py [--trials 30] [--repeats 5] [--duration 10] [--store FILE]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from tune_truth import GRID, grid, grid_parser, point_text

from pglab.analysis import verdicts
from pglab.cli import main as pglab
from pglab.cli.common import Where
from pglab.store import open_store
from pglab.tune import summary

NAME = "tune-live"


def tune_text(args: argparse.Namespace) -> str:
    return (
        point_text(NAME, args)
        + f"""[tune]
trials = {args.trials}
confirm_repeats = {args.repeats}
[tune.knobs]
shared_buffers = {{min = "16MB", max = "1GB", log = true}}
max_wal_size = {{min = "64MB", max = "4GB", log = true}}
wal_buffers = {{min = "64kB", max = "16MB", log = true}}
"""
    )


def check_text(args: argparse.Namespace, variants: dict[str, dict[str, str]]) -> str:
    parts = [point_text(f"{NAME}-check", args, f"repeats = {args.repeats}\n")]
    for name, settings in variants.items():
        parts.append(f"[variants.{name}]" if not settings else f"[variants.{name}.settings]")
        parts += [f'{k} = "{v}"' for k, v in settings.items()]
    return "\n".join(parts) + "\n"


def main() -> None:
    ap = grid_parser(__doc__, repeats=5)
    ap.add_argument("--trials", type=int, default=30)
    args = ap.parse_args()
    common = ["--store", args.store] + (["--lab-dir", str(args.lab_dir)] if args.lab_dir else [])
    path = Path(args.store).with_name(f"{NAME}.toml")
    path.write_text(tune_text(args))
    if pglab(["tune", str(path), *common]) != 0:
        raise SystemExit("pglab tune failed")
    with open_store(args.store) as store:
        study = summary.of(store, Where(args.store).store_url, NAME)
    winner = study.winner
    chosen = dict(winner.settings) if winner else {}
    print(f"study answer: {study.decision.text if study.decision else 'none'}")
    truth = grid(args.store)  # read now: the grid may have been recorded meanwhile
    medians = {c: statistics.median(v) for c, v in truth.items() if v}
    best = max(medians, key=medians.__getitem__)
    variants = {"defaults": {}, "tuned": chosen, "grid_best": dict(zip(GRID, best, strict=True))}
    check = path.with_name(f"{NAME}-check.toml")
    check.write_text(check_text(args, variants))
    pglab(["run", str(check), *common])
    with open_store(args.store) as store:
        runs = store.list_runs(f"{NAME}-check")
    tps = {v: [r.tps for r in runs if r.variant == v and r.ok and r.tps] for v in variants}
    pairs = [(tps["defaults"], tps["tuned"]), (tps["grid_best"], tps["tuned"])]
    vs_default, vs_best = verdicts.compare_family(pairs)
    for name, c in (("tune_live_vs_default", vs_default), ("tune_live_vs_grid_best", vs_best)):
        ci = f"[{c.ci_low:+.1f}%, {c.ci_high:+.1f}%]" if c.ci_low is not None else "[no CI]"
        print(f"{name}: {c.delta_pct:+.1f}% {ci} {c.verdict} (tuned: {chosen or 'the defaults'})")


if __name__ == "__main__":
    main()
