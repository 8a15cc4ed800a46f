"""How many runs ``repeats = "auto"`` saves, and whether its verdicts stay honest.

Each campaign is replayed round by round exactly as the executor runs it (``pglab.stats.sequential
.undecided`` before every round: a point runs on while a comparison it takes part in is not
decided) and its verdicts read as ``pglab show`` reads them (``analysis.engine.ask``: the
anytime-valid sequence of the within-round ratios), beside the fixed design's verdicts as
``pglab show`` gives them for an interleaved campaign of ``max`` repeats of the same data (the
engine's blocked analysis, paired by round, Holm; "=" within the effect). Prints per scenario
the share of runs saved against ``max`` fixed repeats, the share of comparisons whose verdict
is the fixed design's (and which differ, as "auto's for fixed's"), and the share of campaigns
with any "+"/"−" where no variant differs (the family-wise false-positive rate, which must stay
at or below 5%), each with a 95% Wilson interval; then over all scenarios
``aa_false_positive_rate: X``, ``same_verdicts: Y`` and, last, ``runs_saved: Z``.

Simulated (the default; no server, CPU only): log-normal TPS (heavy-tailed and unequal spreads
too, rounds that drift) in the designs of ``bench/verdicts.py`` (A, A-again and a −5% B at 0.8%
noise, the rate-limited live case) and of ``examples/settings-sweep.toml`` (a baseline and 5
variants).

    .venv/bin/python bench/sequential.py [--campaigns 500] [--seed 1]

Recorded (``--campaign NAME``, from the store of ``--lab-dir``/``--store``): a campaign stored
with fixed repeats replayed with ``max`` = its repeats, the rounds in the order they ran, each
side's runs paired by round on the figure ``pglab show`` judges (a round one side lacks, a failed
run, left out of all: ``engine.in_common_rounds``);
``--live`` first runs ``examples/auto-repeats.toml``'s three rate-limited variants with 10
fixed repeats (about 4 minutes) and replays that.

    .venv/bin/python bench/sequential.py --campaign NAME [--min 3] [--effect 5]
    .venv/bin/python bench/sequential.py --live
"""

from __future__ import annotations

import argparse
import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from _common import open_lab, parser

from pglab.analysis import engine, points
from pglab.campaign import parse as campaign
from pglab.rows import RunRow
from pglab.run import campaign_run
from pglab.run.executor import Executor
from pglab.stats.sequential import Point, SequentialSpec, undecided
from pglab.store import Store, open_store

# the fixed design as pglab show judges an interleaved campaign: paired by round (blocked)
FIXED = engine.Pairing(engine.ROUNDS, "runs of one interleaved campaign pair by round")
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "auto-repeats.toml"


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.959964
    p = k / n if n else 0.0
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, mid - half), min(1.0, mid + half)


@dataclass
class Tally:
    runs: int = 0
    runs_fixed: int = 0
    same: int = 0
    compared: int = 0
    aa_campaigns: int = 0
    aa_false: int = 0
    pairs: dict[tuple[str, str], int] = field(default_factory=dict)  # (auto's, fixed's): count
    each: list[tuple[int, int]] = field(default_factory=list)  # per campaign: runs, fixed's

    def saved(self) -> tuple[float, float, float]:
        """The share of runs saved (ratio of sums) and its 95% interval over the campaigns
        (the ratio estimator's standard error, by the delta method)."""
        x = np.array(self.each, dtype=float)
        share = x[:, 0].sum() / x[:, 1].sum()
        se = float(np.std(x[:, 0] - share * x[:, 1], ddof=1) / x[:, 1].mean() / math.sqrt(len(x)))
        return 1 - share, 1 - share - 1.96 * se, 1 - share + 1.96 * se

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            if name == "each":
                self.each += other.each
            elif name != "pairs":
                setattr(self, name, getattr(self, name) + getattr(other, name))
        for k, n in other.pairs.items():
            self.pairs[k] = self.pairs.get(k, 0) + n


def replay(tps: list[list[float]], spec: SequentialSpec, effect: float, null: list[bool]) -> Tally:
    """One campaign of one coordinate: tps[0] the baseline's runs in round order, tps[i] the
    i-th variant's; ``null[i-1]``: variant i does not truly differ."""
    pts = [Point(str(i), "0" if i else None) for i in range(len(tps))]
    rounds = min(spec.max, min(len(v) for v in tps))
    runs = {p.key: 0 for p in pts}
    active = set(runs)
    for _ in range(rounds):
        for key in active:
            runs[key] += 1
        seen = {p.key: dict(enumerate(tps[int(p.key)][: runs[p.key]], 1)) for p in pts}
        active = undecided(pts, seen, spec, effect)
        if not active:
            break
    auto = engine.Pairing(engine.SEQUENTIAL, 'repeats = "auto"', spec.precision)
    pairs = [engine.Pair(seen["0"], seen[p.key]) for p in pts[1:]]
    found = [c.verdict for c in engine.ask(engine.Question(pairs, auto, effect))]
    full = [dict(enumerate(v[:rounds], 1)) for v in tps]
    fixed_pairs = [engine.Pair(full[0], full[i]) for i in range(1, len(tps))]
    fixed = [c.verdict for c in engine.ask(engine.Question(fixed_pairs, FIXED, effect))]
    t = Tally(sum(runs.values()), rounds * len(tps))
    t.each = [(t.runs, t.runs_fixed)]
    t.same = sum(a == b for a, b in zip(found, fixed, strict=True))
    t.compared = len(found)
    for a, b in zip(found, fixed, strict=True):
        t.pairs[(a, b)] = t.pairs.get((a, b), 0) + 1
    if all(null):
        t.aa_campaigns = 1
        t.aa_false = int(any(v in "+-" for v in found))
    return t


Draw = Callable[[np.random.Generator, int], np.ndarray]  # (variants, rounds) of log TPS


def lognormal(cvs: list[float], effects: list[float]) -> Draw:
    shift = np.log1p(np.array(effects))[:, None]
    sd = np.array(cvs)[:, None]
    return lambda rng, n: shift + sd * rng.standard_normal((len(cvs), n))


def drifting(cv: float, drift: float, effects: list[float]) -> Draw:
    """Each round's runs share a drift of SD ``drift`` (a machine that changes between rounds:
    what pairing by round removes)."""
    base = lognormal([cv] * len(effects), effects)
    return lambda rng, n: base(rng, n) + drift * rng.standard_normal(n)[None, :]


def heavy(cv: float, k: int) -> Draw:
    return lambda rng, n: cv / math.sqrt(3) * rng.standard_t(3, (k, n))


SCENARIOS: list[tuple[str, Draw, list[bool], SequentialSpec, float]] = [
    (
        "A, A-again, B −5% at 0.8% noise (bench/verdicts.py), effect 5, max 10",
        lognormal([0.008] * 3, [0, 0, -0.05]),
        [True, False],
        SequentialSpec(3, 10),
        5.0,
    ),
    (
        "A/A: a baseline and 5 identical variants at 2% noise, effect 10, max 10",
        lognormal([0.02] * 6, [0] * 6),
        [True] * 5,
        SequentialSpec(3, 10),
        10.0,
    ),
    (
        "one variant +10% among 5 at 3% noise, effect 10, max 20",
        lognormal([0.03] * 6, [0, 0.10, 0, 0, 0, 0]),
        [False] + [True] * 4,
        SequentialSpec(3, 20),
        10.0,
    ),
    (
        "A/A heavy tails (Student t, 3 df) at 2%, effect 10, max 10",
        heavy(0.02, 6),
        [True] * 5,
        SequentialSpec(3, 10),
        10.0,
    ),
    (
        "one variant −5% among 3 at 1% noise, each round drifting 4% (shared), effect 5, max 10",
        drifting(0.01, 0.04, [0, 0, -0.05]),
        [True, False],
        SequentialSpec(3, 10),
        5.0,
    ),
    (
        "A/A spreads 1–5% across variants, effect 10, max 15",
        lognormal(list(np.linspace(0.01, 0.05, 6)), [0] * 6),
        [True] * 5,
        SequentialSpec(3, 15),
        10.0,
    ),
]


def report(name: str, t: Tally) -> None:
    saved, slo, shi = t.saved()
    lo, hi = wilson(t.same, t.compared)
    line = (
        f"{name}\n  runs {t.runs} of {t.runs_fixed} fixed: saved {saved:.1%} (95% CI "
        f"{slo:.1%}–{shi:.1%}); same verdict "
        f"as fixed {t.same / t.compared:.1%} (95% CI {lo:.1%}–{hi:.1%})"
    )
    if t.aa_campaigns:
        flo, fhi = wilson(t.aa_false, t.aa_campaigns)
        line += (
            f"; A/A campaigns with a +/−: {t.aa_false / t.aa_campaigns:.1%} "
            f"(95% CI {flo:.1%}–{fhi:.1%})"
        )
    differ = sorted(((n, a, b) for (a, b), n in t.pairs.items() if a != b), reverse=True)
    if differ:
        line += "\n  differing (auto's, fixed's): " + ", ".join(
            f"{a} for {b} {n}" for n, a, b in differ
        )
    print(line, flush=True)


def simulate(campaigns: int, seed: int) -> Tally:
    total = Tally()
    rng = np.random.default_rng(seed)
    for name, draw, null, spec, effect in SCENARIOS:
        t = Tally()
        for _ in range(campaigns):
            data = 1000 * np.exp(draw(rng, spec.max))
            t.add(replay([list(row) for row in data], spec, effect, null))
        report(name, t)
        total.add(t)
    return total


def recorded(store: Store, name: str, min_rounds: int, effect: float | None) -> Tally:
    """A stored campaign of fixed repeats replayed: each coordinate's baseline and variants in
    the order their runs ran (null: unknown, so no false-positive figure)."""
    camp = store.get_campaign(name)
    if camp is None:
        raise SystemExit(f"no campaign {name!r} in the store")
    baseline = points.baseline_of(camp)
    if baseline is None:
        raise SystemExit(f"campaign {name!r} has one variant: nothing is compared")
    effect = effect if effect is not None else points.effect_of(camp)
    runs = store.list_runs(name)
    figure = points.figure_of(runs)  # what show judges the points on: TPS, NOPM, MB/s...
    by: dict[str, dict[str, list[RunRow]]] = {}
    for r in runs:
        coords = " ".join(f"{k}={v}" for k, v in r.axes.items())
        by.setdefault(coords, {}).setdefault(r.variant, []).append(r)
    total = Tally()
    for coords, mine in by.items():
        # each variant's figure by round, as the engine pairs them
        variants = {v: points.tps_by_round(rs, figure) for v, rs in mine.items()}
        if baseline not in variants or len(variants) < 2:
            continue
        sides = [variants[baseline]] + [v for k, v in variants.items() if k != baseline]
        tps = engine.in_common_rounds(sides)
        rounds = min(len(v) for v in tps)
        if rounds == 0:
            continue
        t = replay(
            tps, SequentialSpec(min(min_rounds, rounds), rounds), effect, [False] * (len(tps) - 1)
        )
        report(f"{name} {coords or '(one coordinate)'}: {rounds} rounds, effect {effect:g}", t)
        total.add(t)
    return total


def live(args: argparse.Namespace) -> str:
    """examples/auto-repeats.toml with 10 fixed repeats, run now; its name in the store."""
    doc = tomllib.loads(EXAMPLE.read_text())
    doc.pop("sequential")
    doc.update(name="sequential-bench", repeats=10)
    camp = campaign.parse(doc, "sequential-bench", base_dir=EXAMPLE.parent)
    lab = open_lab(args)
    with open_store(args.store or str(lab.home / "results.sqlite")) as store:
        campaign_run.run_campaign(Executor(lab, store), camp)
    return "sequential-bench"


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--campaigns", type=int, default=500, help="per simulated scenario")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--campaign", help="replay this stored campaign instead")
    ap.add_argument("--live", action="store_true", help="run the rate-limited case, replay it")
    ap.add_argument("--store", help="results store (default: the lab's)")
    ap.add_argument("--min", type=int, default=3, help="rounds before the first look")
    ap.add_argument("--effect", type=float, help="effect of interest (default: the campaign's)")
    args = ap.parse_args()
    name = live(args) if args.live else args.campaign
    if name:
        lab = open_lab(args)
        with open_store(args.store or str(lab.home / "results.sqlite")) as store:
            total = recorded(store, name, args.min, args.effect)
    else:
        total = simulate(args.campaigns, args.seed)
    if total.aa_campaigns:
        lo, hi = wilson(total.aa_false, total.aa_campaigns)
        print(
            f"aa_false_positive_rate: {total.aa_false / total.aa_campaigns:.4f} "
            f"(95% CI {lo:.4f}–{hi:.4f}, {total.aa_campaigns} A/A campaigns)"
        )
    lo, hi = wilson(total.same, total.compared)
    print(
        f"same_verdicts: {total.same / total.compared:.4f} (95% CI {lo:.4f}–{hi:.4f}, "
        f"{total.compared} comparisons)"
    )
    saved, lo, hi = total.saved()
    print(f"runs_saved: {saved:.4f} (95% CI {lo:.4f}–{hi:.4f}, {len(total.each)} campaigns)")


if __name__ == "__main__":
    main()
