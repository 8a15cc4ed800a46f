"""Does ``pglab tune`` find a configuration near the best, and does its confirmation keep it?
Replays tuning against the grid ``bench/tune_truth.py`` recorded (3 knobs × 3 levels, each
configuration run several times on a real server): a trial's TPS is one of its configuration's
recorded runs drawn at random (so the run-to-run noise stays), the knobs are the grid's levels as
choices. Each seed runs what ``pglab tune`` runs — the same sampler (``study.make_sampler``), the
defaults and PGTune's configuration (the grid levels nearest its rules) as the first two trials,
``--trials`` trials, then the confirmation's candidates (``confirm.candidates``: the top 3, the
defaults, PGTune's), ``--repeats`` runs of each drawn from the recorded ones (with replacement),
and the decision (``confirm.decide``: Welch, Holm). The pick is the confirmed winner, or the
defaults when no configuration is significantly better.

Prints, per sampler over ``--seeds`` seeds, the share of seeds whose pick's recorded median TPS is
≥ 95% of the grid's best median (with a 95% Wilson interval), the same share for the search's own
best trial before confirmation (one noisy run: the winner's curse), and how often the answer was
"no configuration is significantly better", and the pick's recorded median as a share of the
best's (mean and least over the seeds). The last two lines: ``tune_hit_rate: X`` (TPE) and
``tune_hit_rate_random: Y`` (random search).

    .venv/bin/python bench/tune.py [--seeds 20] [--trials 30] [--repeats 5] [--store FILE]

``--synthetic CV``: instead of the recorded grid, a made-up one whose truth is known (each
knob's level a factor on TPS, about what these knobs do on a write-heavy point: the best
configuration 1GB shared_buffers, 4GB max_wal_size, wal_buffers automatic; the defaults 15%
slower, PGTune's levels 7%) with 5 "recorded" runs per configuration drawn log-normal at that
CV: what the search and the confirmation do when the noise is the machine's usual 5-9% rather
than a shared machine's worst.
"""

from __future__ import annotations

import math
import random
import statistics
import warnings
from itertools import product

import optuna
from _common import parser, wilson
from optuna.distributions import BaseDistribution, CategoricalDistribution
from tune_truth import DEFAULT_STORE, GRID, grid

from pglab.tune import confirm
from pglab.tune import study as studies
from pglab.tune.spec import TuneSpec
from pglab.tune.trials import TrialRecord

DEFAULTS = ("128MB", "1GB", "-1")  # the server's own values
PGTUNE = ("1GB", "4GB", "16MB")  # the levels nearest PGTune's rules on this machine
SHARE = 0.95
# --synthetic: each level's factor on TPS, per knob in GRID's order
FACTORS = (
    {"16MB": 0.70, "128MB": 0.90, "1GB": 1.0},
    {"64MB": 0.60, "1GB": 0.95, "4GB": 1.0},
    {"64kB": 0.90, "-1": 1.0, "16MB": 0.93},
)


def synthetic(cv: float, seed: int = 1, runs: int = 15) -> dict[tuple[str, ...], list[float]]:
    rng = random.Random(seed)
    out = {}
    for config in product(*GRID.values()):
        mean = 2000.0 * math.prod(f[level] for f, level in zip(FACTORS, config, strict=True))
        out[config] = [mean * math.exp(rng.gauss(0, cv)) for _ in range(runs)]
    return out


def replay(
    truth: dict[tuple[str, ...], list[float]],
    sampler: str,
    seed: int,
    trials: int,
    repeats: int,
    most: int | None = None,
) -> tuple[tuple[str, ...], tuple[str, ...], bool, int]:
    """One tuning: (the search's best configuration, the confirmed pick, whether a winner
    was confirmed, the confirmation's runs)."""
    spec = TuneSpec(
        sampler=sampler, seed=seed, trials=trials, confirm_repeats=repeats, confirm_max=most
    )
    rng = random.Random(seed)
    names = list(GRID)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = optuna.create_study(direction="maximize", sampler=studies.make_sampler(spec))
        for source, config in (("default", DEFAULTS), ("pgtune", PGTUNE)):
            study.enqueue_trial(dict(zip(names, config, strict=True)), user_attrs={"s": source})
        dists: dict[str, BaseDistribution] = {
            k: CategoricalDistribution(levels) for k, levels in GRID.items()
        }
        records = []
        for n in range(trials):
            trial = study.ask(dists)
            drawn: tuple[str, ...] = tuple(str(trial.params[k]) for k in names)
            value = rng.choice(truth[drawn])
            study.tell(trial, value)
            source = trial.user_attrs.get("s", "sampler")
            records.append(
                TrialRecord(n, source, "ok", dict(zip(names, drawn, strict=True)), value, value)
            )
    searched = tuple(max(records, key=lambda r: r.value or 0.0).settings[k] for k in names)
    pgtune = dict(zip(names, PGTUNE, strict=True))
    cands = confirm.candidates(records, spec, pgtune)
    config_of = {c.label: tuple(str(dict(c.settings).get(k)) for k in names) for c in cands}
    config_of["default"] = DEFAULTS
    # each candidate's runs: its configuration's recorded ones in a shuffled order (no run drawn
    # twice until all have been), as many rounds as the confirmation asks for
    pools = {label: rng.sample(truth[cfg], len(truth[cfg])) for label, cfg in config_of.items()}

    def draw(label: str) -> float:
        if not pools[label]:
            pools[label] = rng.sample(truth[config_of[label]], len(truth[config_of[label]]))
        return pools[label].pop()

    values = {label: [draw(label) for _ in range(repeats)] for label in config_of}
    while spec.adaptive and len(values["default"]) < spec.confirm_rounds:
        want = confirm.undecided(values, spec)
        if not want:
            break
        for label in want:
            values[label].append(draw(label))
    decision = confirm.decide("tps", values, adaptive=spec.adaptive)
    pick = config_of[decision.winner] if decision.winner else DEFAULTS
    runs = sum(len(v) for v in values.values())
    return searched, pick, decision.winner is not None, runs


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--confirm-max",
        type=int,
        default=None,
        metavar="N",
        help="adaptive confirmation: rounds go on to N while undecided",
    )
    ap.add_argument("--store", default=str(DEFAULT_STORE))
    ap.add_argument("--synthetic", type=float, metavar="CV", help="a made-up grid at this CV")
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    truth = synthetic(args.synthetic) if args.synthetic else grid(args.store)
    missing = [c for c, v in truth.items() if not v]
    if missing:
        raise SystemExit(
            f"the grid in {args.store} lacks {len(missing)} configuration(s): run "
            "bench/tune_truth.py first"
        )
    medians = {c: statistics.median(v) for c, v in truth.items()}
    best = max(medians.values())
    good = {c for c, m in medians.items() if m >= SHARE * best}
    print(
        f"grid: {len(truth)} configurations, best median {best:.1f} tps; {len(good)} within "
        f"{SHARE:.0%} of it; the defaults at {medians[DEFAULTS] / best:.3f} of it, PGTune's at "
        f"{medians[PGTUNE] / best:.3f}",
        flush=True,
    )
    rates = {}
    for sampler in ("tpe", "random"):
        hits = searched_hits = winners = 0
        ratios = []
        spent = []
        for seed in range(args.seeds):
            searched, pick, won, runs = replay(
                truth, sampler, seed, args.trials, args.repeats, args.confirm_max
            )
            ratios.append(medians[pick] / best)
            spent.append(runs)
            hits += pick in good
            searched_hits += searched in good
            winners += won
        low, high = wilson(hits, args.seeds)
        slow, shigh = wilson(searched_hits, args.seeds)
        print(
            f"{sampler}: confirmed pick ≥ {SHARE:.0%} of the best in {hits}/{args.seeds} seeds "
            f"(95% CI {low:.2f}–{high:.2f}); the search's own best in {searched_hits}/"
            f"{args.seeds} ({slow:.2f}–{shigh:.2f}); a winner confirmed in {winners}/"
            f"{args.seeds}; the pick's median / the best's: mean {statistics.fmean(ratios):.3f}, "
            f"min {min(ratios):.3f}; confirmation runs: mean {statistics.fmean(spent):.1f}",
            flush=True,
        )
        rates[sampler] = hits / args.seeds
    print(f"tune_hit_rate: {rates['tpe']:.4f}")
    print(f"tune_hit_rate_random: {rates['random']:.4f}")


if __name__ == "__main__":
    main()
