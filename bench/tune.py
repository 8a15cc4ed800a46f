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
"no configuration is significantly better". The last two lines: ``tune_hit_rate: X`` (TPE) and
``tune_hit_rate_random: Y`` (random search).

    .venv/bin/python bench/tune.py [--seeds 20] [--trials 30] [--repeats 5] [--store FILE]
"""

from __future__ import annotations

import random
import statistics
import warnings

import optuna
from _common import parser, wilson
from optuna.distributions import CategoricalDistribution
from tune_truth import DEFAULT_STORE, GRID, grid

from pglab.tune import confirm
from pglab.tune import study as studies
from pglab.tune.spec import TuneSpec
from pglab.tune.trials import TrialRecord

DEFAULTS = ("128MB", "1GB", "-1")  # the server's own values
PGTUNE = ("1GB", "4GB", "16MB")  # the levels nearest PGTune's rules on this machine
SHARE = 0.95


def replay(truth: dict[tuple[str, ...], list[float]], sampler: str, seed: int, trials: int,
           repeats: int) -> tuple[tuple[str, ...], tuple[str, ...], bool]:  # fmt: skip
    """One tuning: (the search's best configuration, the confirmed pick, whether a winner
    was confirmed)."""
    spec = TuneSpec(sampler=sampler, seed=seed, trials=trials, confirm_repeats=repeats)
    rng = random.Random(seed)
    names = list(GRID)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = optuna.create_study(direction="maximize", sampler=studies.make_sampler(spec))
        for source, config in (("default", DEFAULTS), ("pgtune", PGTUNE)):
            study.enqueue_trial(dict(zip(names, config, strict=True)), user_attrs={"s": source})
        dists = {k: CategoricalDistribution(levels) for k, levels in GRID.items()}
        records = []
        for n in range(trials):
            trial = study.ask(dists)
            config = tuple(str(trial.params[k]) for k in names)
            value = rng.choice(truth[config])
            study.tell(trial, value)
            source = trial.user_attrs.get("s", "sampler")
            records.append(TrialRecord(n, source, "ok", dict(zip(names, config, strict=True)),
                                       value, value))  # fmt: skip
    searched = tuple(max(records, key=lambda r: r.value or 0.0).settings[k] for k in names)
    pgtune = dict(zip(names, PGTUNE, strict=True))
    cands = confirm.candidates(records, spec, pgtune)
    config_of = {c.label: tuple(dict(c.settings).get(k) for k in names) for c in cands}
    config_of["default"] = DEFAULTS
    values = {label: rng.choices(truth[cfg], k=repeats) for label, cfg in config_of.items()}
    decision = confirm.decide("tps", values)
    pick = config_of[decision.winner] if decision.winner else DEFAULTS
    return searched, pick, decision.winner is not None


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--store", default=str(DEFAULT_STORE))
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    truth = grid(args.store)
    missing = [c for c, v in truth.items() if not v]
    if missing:
        raise SystemExit(f"the grid in {args.store} lacks {len(missing)} configuration(s): run "
                         "bench/tune_truth.py first")  # fmt: skip
    medians = {c: statistics.median(v) for c, v in truth.items()}
    best = max(medians.values())
    good = {c for c, m in medians.items() if m >= SHARE * best}
    print(f"grid: {len(truth)} configurations, best median {best:.1f} tps; {len(good)} within "
          f"{SHARE:.0%} of it; the defaults at {medians[DEFAULTS] / best:.3f} of it, PGTune's at "
          f"{medians[PGTUNE] / best:.3f}", flush=True)  # fmt: skip
    rates = {}
    for sampler in ("tpe", "random"):
        hits = searched_hits = winners = 0
        for seed in range(args.seeds):
            searched, pick, won = replay(truth, sampler, seed, args.trials, args.repeats)
            hits += pick in good
            searched_hits += searched in good
            winners += won
        low, high = wilson(hits, args.seeds)
        slow, shigh = wilson(searched_hits, args.seeds)
        print(f"{sampler}: confirmed pick ≥ {SHARE:.0%} of the best in {hits}/{args.seeds} seeds "
              f"(95% CI {low:.2f}–{high:.2f}); the search's own best in {searched_hits}/"
              f"{args.seeds} ({slow:.2f}–{shigh:.2f}); a winner confirmed in {winners}/"
              f"{args.seeds}", flush=True)  # fmt: skip
        rates[sampler] = hits / args.seeds
    print(f"tune_hit_rate: {rates['tpe']:.4f}")
    print(f"tune_hit_rate_random: {rates['random']:.4f}")


if __name__ == "__main__":
    main()
