"""Does pglab call a real difference real, and a non-difference not?

Live (the default): A/A and A/B on real servers. Three variants of one point, interleaved: ``A``
(pgbench ``--rate R``), ``A-again`` (the same) and ``B`` (``--rate 0.95·R``), R well below
capacity so that the rate limit, not the machine, sets the TPS: the true effect is −5% for B and
0 for A-again. Prints each comparison with its Δ%, 95% CI and verdict (Holm-corrected over the
two), then ``verdicts: A-again=~ B=-`` as the last line: the expected outcome is ``~`` for A-again
and ``-`` for B, with B's CI containing −5%.

    .venv/bin/python bench/verdicts.py [--repeats 6] [--duration 10] [--rate 2000]

Simulated (``--simulate``): thousands of synthetic campaigns judged by the very function ``pglab
show`` uses (``verdicts.compare_family``), each a baseline and 5 other variants × 4 repeats (the
settings-sweep design), log-normal TPS unless said otherwise. Prints, with 95% Wilson intervals:
the share of A/A campaigns (no true difference anywhere) with any "+" or "−" (the family-wise
false-positive rate, which must stay at or below 5%) under log-normal noise, heavy-tailed noise
(Student t with 3 df) and unequal spreads (CV 2%..10% across variants); the share of campaigns
in which one variant 10% faster at CV 4% is called "+" (the test's power at that design), and
the same for +40%; the same power for the test pglab used before (Mann-Whitney U with Holm),
whose smallest p-value at 4 runs a side made every verdict unreachable. The last two lines are
``aa_false_positive_rate: X`` and ``power_at_10pct_n4: Y``.

    .venv/bin/python bench/verdicts.py --simulate [--campaigns 1000] [--seed 1]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from _common import open_lab, parser, wilson

from pglab.analysis import verdicts
from pglab.campaign import parse as campaign
from pglab.postgres.sources import resolve
from pglab.run.executor import Executor
from pglab.run.plan import make_plan

VARIANTS, REPEATS = 6, 4  # settings-sweep: a baseline and 5 others, 4 repeats


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rate", type=float, default=2000.0)
    ap.add_argument("--simulate", action="store_true", help="synthetic campaigns, no server")
    ap.add_argument("--campaigns", type=int, default=1000, help="per simulated scenario")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.simulate:
        simulate(args.campaigns, args.seed)
    else:
        live(args)


# -- simulated --------------------------------------------------------------------------------


Draw = Callable[[np.random.Generator], np.ndarray]  # (VARIANTS, REPEATS) TPS samples


def lognormal(cv: float, effects: tuple[float, ...] = ()) -> Draw:
    """Variant 0 the baseline; variant i (1-based in ``effects``) shifted by effects[i-1]."""
    shift = np.log1p(np.array([0.0, *effects, *[0.0] * (VARIANTS - 1 - len(effects))]))

    def draw(rng: np.random.Generator) -> np.ndarray:
        return 1000 * np.exp(shift[:, None] + rng.normal(0, cv, (VARIANTS, REPEATS)))

    return draw


def heavy_tails(cv: float) -> Draw:
    scale = cv / math.sqrt(3)  # Student t with 3 df has variance 3

    def draw(rng: np.random.Generator) -> np.ndarray:
        return 1000 * np.exp(scale * rng.standard_t(3, (VARIANTS, REPEATS)))

    return draw


def unequal_spreads(low: float, high: float) -> Draw:
    cvs = np.linspace(low, high, VARIANTS)[:, None]

    def draw(rng: np.random.Generator) -> np.ndarray:
        return 1000 * np.exp(cvs * rng.standard_normal((VARIANTS, REPEATS)))

    return draw


def judged(tps: np.ndarray) -> list[str]:
    pairs = [(tps[0], tps[i]) for i in range(1, VARIANTS)]
    return [c.verdict for c in verdicts.compare_family(pairs)]


def rank_test_verdicts(tps: np.ndarray) -> list[str]:
    """What pglab did before: Mann-Whitney U, Holm over the campaign."""
    from scipy.stats import mannwhitneyu

    ps = [float(mannwhitneyu(tps[i], tps[0]).pvalue) for i in range(1, VARIANTS)]
    return ["+" if p < verdicts.ALPHA else "~" for p in verdicts.holm(ps)]


def rate(name: str, hits: int, n: int) -> float:
    low, high = wilson(hits, n)
    print(f"{name}: {hits / n:.4f} (95% CI {low:.4f}–{high:.4f}, {hits} of {n} campaigns)",
          flush=True)  # fmt: skip
    return hits / n


def simulate(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    print(f"{n} simulated campaigns per scenario: a baseline and {VARIANTS - 1} variants × "
          f"{REPEATS} repeats, Welch's t on log TPS, Holm over the {VARIANTS - 1} comparisons",
          flush=True)  # fmt: skip

    def any_claim(draw: Draw) -> int:
        return sum(any(v in "+-" for v in judged(draw(rng))) for _ in range(n))

    aa = rate("A/A, log-normal CV 5%: campaigns with any + or −", any_claim(lognormal(0.05)), n)
    rate("A/A, heavy tails (t, 3 df) CV 5%: any + or −", any_claim(heavy_tails(0.05)), n)
    rate("A/A, CV 2%..10% across variants: any + or −", any_claim(unequal_spreads(0.02, 0.10)), n)
    ten = lognormal(0.04, (0.10,))
    power = rate("+10% at CV 4%: that variant called +",
                 sum(judged(ten(rng))[0] == "+" for _ in range(n)), n)  # fmt: skip
    forty = lognormal(0.04, (0.40,))
    rate("+40% at CV 4%: that variant called +",
         sum(judged(forty(rng))[0] == "+" for _ in range(n)), n)  # fmt: skip
    rate("before (Mann-Whitney U + Holm), +40% at CV 4%: called +",
         sum(rank_test_verdicts(forty(rng))[0] == "+" for _ in range(n)), n)  # fmt: skip
    design = verdicts.design(REPEATS, VARIANTS - 1, 4.0, "simulated", 10.0)
    print(f"design check's power for the +10% case: {design.power:.4f}")
    print("runs per point for 80% power (noise % × effect %, for 1 and 5 comparisons):")
    for noise in (2.0, 5.0, 10.0):
        cells = [f"±{effect:g}%: {verdicts.runs_needed(m, noise, effect) or '>100'} / "
                 f"{verdicts.runs_needed(m2, noise, effect) or '>100'}"
                 for effect in (5.0, 10.0) for m, m2 in [(1, 5)]]  # fmt: skip
        print(f"  noise {noise:g}%: " + ", ".join(cells))
    print(f"aa_false_positive_rate: {aa:.4f}")
    print(f"power_at_10pct_n4: {power:.4f}")


# -- live -------------------------------------------------------------------------------------


def live(args) -> None:
    lab = open_lab(args)
    doc = {
        "name": "bench-verdicts",
        "repeats": args.repeats,
        "dataset": {"scale": 1, "reset": "never"},
        "workload": {
            "script": "select-only",
            "clients": 2,
            "duration": args.duration,
            "rate": args.rate,
            "latency_log": "off",
        },  # fmt: skip
        "telemetry": {"enabled": False},
        "variants": {"A": {}, "A-again": {}, "B": {"workload": {"rate": args.rate * 0.95}}},
    }
    plan = make_plan(campaign.parse(doc, default_name="bench-verdicts"))
    binaries = resolve(plan.runs[0].server, lab)
    executor = Executor(lab, store=None)
    tps: dict[str, list[float]] = {"A": [], "A-again": [], "B": []}
    try:
        for i, run in enumerate(plan.runs, 1):  # interleaved: every round visits each variant
            result = executor.run_one(replace(run), binaries)
            assert result.status == "ok", result.error
            tps[run.variant].append(result.metrics["tps"])
            print(f"run {i}/{len(plan.runs)} {run.variant:8s} {tps[run.variant][-1]:9.1f} tps",
                  flush=True)  # fmt: skip
    finally:
        executor.close()
    names = ("A-again", "B")
    found = dict(zip(names, verdicts.compare_family([(tps["A"], tps[v]) for v in names]),
                     strict=True))  # fmt: skip
    for v, c in found.items():
        print(f"{v} vs A: {c.delta_pct:+.2f}% (95% CI {c.ci_low:+.2f} to {c.ci_high:+.2f}), "
              f"p = {c.p_value:.4f}, Holm p = {c.p_holm:.4f}, verdict {c.verdict}"
              + (f" ({c.reason})" if c.reason else ""))  # fmt: skip
    print(f"verdicts: A-again={found['A-again'].verdict} B={found['B'].verdict}")


if __name__ == "__main__":
    main()
