"""Does pglab call a real difference real, and a non-difference not?

Live (the default): A/A and A/B on real servers. Three variants of one point, interleaved: ``A``
(pgbench ``--rate R``), ``A-again`` (the same) and ``B`` (``--rate 0.95·R``), R well below
capacity so that the rate limit, not the machine, sets the TPS: the true effect is −5% for B and
0 for A-again. Judged as ``pglab show`` judges an interleaved campaign (``verdicts.
compare_rounds``: blocked, Holm over the two) with a ±2% equivalence margin; prints each
comparison with its Δ%, 95% CI, test and verdict, then ``verdicts: A-again== B=-`` as the last
line: the expected outcome is ``=`` (or ``~``) for A-again and ``-`` for B, with B's CI
containing −5%.

    .venv/bin/python bench/verdicts.py [--repeats 6] [--duration 10] [--rate 2000]

Simulated (``--simulate``): thousands of synthetic campaigns of a baseline and 5 other variants ×
4 rounds (the settings-sweep design), each round in a random order as the plan shuffles it, log
TPS = effect + drift + noise, in 12 scenarios: equal spreads (1, 4, 8%), unequal ones (1..8%
either way, one variant or the baseline at 8% among 2%), linear and step drift over the
campaign, heavy tails (Student t, 3 df), a failed run. Each judged by the blocked analysis (a
vectorized twin of ``verdicts.compare_rounds``, checked against it verdict for verdict on 200
campaigns first) and, on a sample, by Welch's test that judged them before. Prints, with 95%
Wilson intervals: per scenario the share of A/A campaigns with any "+" or "−" (the family-wise
false-alarm rate, promised ≤ 5%); the power for one variant 10% faster at 4% noise, without and
with drift; the rate of "=" at a ±2% margin on true 0% and true +5% effects (1% noise, 4 and 8
rounds). The last lines are ``aa_false_positive_rate: X`` (the worst scenario),
``power_at_10pct_n4: Y`` and the same power with linear and step drift.

    .venv/bin/python bench/verdicts.py --simulate [--campaigns 4000] [--welch-campaigns 400]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from _common import open_lab, parser, scratch_store, wilson

from pglab.analysis import verdicts
from pglab.campaign import parse as campaign
from pglab.planning.plan import make_plan
from pglab.postgres.sources import resolve
from pglab.run.executor import Executor
from pglab.stats import differences
from pglab.stats.significance import ALPHA, scipy_stats

VARIANTS, REPEATS = 6, 4  # settings-sweep: a baseline and 5 others, 4 repeats


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rate", type=float, default=2000.0)
    ap.add_argument("--simulate", action="store_true", help="synthetic campaigns, no server")
    ap.add_argument("--campaigns", type=int, default=4000, help="per simulated scenario")
    ap.add_argument(
        "--welch-campaigns",
        type=int,
        default=400,
        help="of those, judged by Welch's test too (slower)",
    )
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.simulate:
        simulate(args.campaigns, args.seed, min(args.welch_campaigns, args.campaigns))
    else:
        live(args)


# -- simulated --------------------------------------------------------------------------------
#
# Campaigns of VARIANTS points × REPEATS rounds, each round in a random order (as the plan
# shuffles it), log TPS = effect + drift(time) + noise. Judged two ways: the blocked analysis
# pglab uses for interleaved campaigns (``verdicts.compare_rounds``: within-round log ratios,
# variance pooled with a guard, Holm, two one-sided tests for "=") and, for comparison, Welch's
# test that judged them before. Thousands of campaigns per scenario need the blocked test
# vectorized over campaigns (``Blocked``); ``agreement`` checks it verdict for verdict against
# ``compare_rounds`` itself on a sample of campaigns.

Drift = Callable[[np.ndarray], np.ndarray]  # time in [0, 1) over the campaign -> log shift


def no_drift(t: np.ndarray) -> np.ndarray:
    return 0 * t


def linear(t: np.ndarray) -> np.ndarray:
    return 0.10 * t  # TPS rises 10% over the campaign


def step(t: np.ndarray) -> np.ndarray:
    return 0.08 * (t >= 0.5)  # 8% up halfway through


@dataclass(frozen=True)
class Scenario:
    name: str
    cvs: tuple[float, ...]  # each variant's noise (SD of log TPS), the baseline first
    drift: Drift = no_drift
    tails: bool = False  # Student t with 3 df instead of normal noise
    missing: bool = False  # one run of the campaign failed


def campaigns(
    sc: Scenario,
    n: int,
    rng: np.random.Generator,
    effects: tuple[float, ...] = (),
    runs: int = REPEATS,
) -> np.ndarray:
    """(n, VARIANTS, runs) log TPS; NaN where a run failed."""
    cvs = np.asarray(sc.cvs)[None, :, None]
    if sc.tails:
        y = cvs / math.sqrt(3) * rng.standard_t(3, (n, VARIANTS, runs))
    else:
        y = cvs * rng.standard_normal((n, VARIANTS, runs))
    y += np.log1p(np.array([0.0, *effects, *[0.0] * (VARIANTS - 1 - len(effects))]))[None, :, None]
    order = np.argsort(rng.random((n, runs, VARIANTS)), axis=2)  # each round shuffled
    position = np.argsort(order, axis=2).transpose(0, 2, 1)  # (n, VARIANTS, runs)
    y += sc.drift((np.arange(runs)[None, None, :] * VARIANTS + position) / (runs * VARIANTS))
    if sc.missing:
        y[np.arange(n), rng.integers(0, VARIANTS, n), rng.integers(0, runs, n)] = np.nan
    return y


class Blocked:
    """``verdicts.compare_rounds`` over many campaigns at once: p-values and "=" of each
    comparison (variant 1.. against 0), as ``differences.measure`` and ``verdicts`` make them."""

    def __init__(self, y: np.ndarray, margin_pct: float) -> None:
        st = scipy_stats()
        d = y[:, 1:, :] - y[:, :1, :]
        n = (~np.isnan(d)).sum(2)
        k = n - 1
        mean = np.nanmean(d, 2)
        s2 = np.nanvar(d, 2, ddof=1)
        m = VARIANTS - 1
        total_k, total_ss = k.sum(1, keepdims=True), (k * s2).sum(1, keepdims=True)
        rest_k = total_k - k
        rest = (total_ss - k * s2) / rest_k
        noisier = st.f.sf(s2 / rest, k, rest_k) < differences.GUARD
        df_pool = total_k / (1 + (m - 1) * np.where(_noisier_baseline(y), 1.0, differences.RHO2))
        se = np.where(noisier, np.sqrt(s2 / n), np.sqrt(total_ss / total_k / n))
        df = np.where(noisier, k, df_pool)
        self.p = 2 * st.t.sf(np.abs(mean) / se, df)
        self.delta = mean
        half = st.t.isf(ALPHA / m, df) * se  # the 1 - 2·ALPHA/m interval
        low, high = np.log1p(-margin_pct / 100), np.log1p(margin_pct / 100)
        self.equal = (mean - half > low) & (mean + half < high)

    def claims(self) -> np.ndarray:
        """Holm over the campaign: which comparisons are called + or −."""
        m = self.p.shape[1]
        order = np.argsort(self.p, axis=1)
        ranked = np.take_along_axis(self.p, order, 1)
        passed = np.cumprod(ranked < ALPHA / (m - np.arange(m)), axis=1).astype(bool)
        out = np.zeros_like(passed)
        np.put_along_axis(out, order, passed, 1)
        return out

    def verdicts(self) -> np.ndarray:
        claims = self.claims()
        sign = np.where(self.delta > 0, "+", "-")
        return np.where(claims, sign, np.where(self.equal, "=", "·"))


def _noisier_baseline(y: np.ndarray) -> np.ndarray:
    """(n, 1): the baseline noisier than the other points in the two-way table of the rounds
    all of them ran (``differences._noisier_baseline``)."""
    st = scipy_stats()
    out = np.zeros((len(y), 1), dtype=bool)
    for missing in (False, True):  # campaigns with a failed run: the rounds all points ran
        rows = np.isnan(y).any((1, 2)) == missing
        if not rows.any():
            continue
        sub = y[rows]
        if missing:
            keep = ~np.isnan(sub).any(1)  # (c, rounds)
            out[rows, 0] = [_base_f(c[:, k], st) for c, k in zip(sub, keep, strict=True)]
        else:
            out[rows, 0] = _base_f_all(sub, st)
    return out


def _base_f_all(y: np.ndarray, st: Any) -> np.ndarray:
    resid = y - y.mean(2, keepdims=True) - y.mean(1, keepdims=True) + y.mean((1, 2), keepdims=True)
    ss = (resid**2).sum(2)
    points, rounds = y.shape[1], y.shape[2]
    total = (points - 1) * (rounds - 1)
    own = total / points
    ratio = (ss[:, 0] / own) / ((ss.sum(1) - ss[:, 0]) / (total - own))
    guarded: np.ndarray = st.f.sf(ratio, own, total - own) < differences.GUARD
    return guarded


def _base_f(table: np.ndarray, st: Any) -> bool:
    return table.shape[1] >= 2 and bool(_base_f_all(table[None], st)[0])


def welch_claims(y: np.ndarray) -> np.ndarray:
    """What judged interleaved campaigns before: Welch's t on log TPS, Holm."""
    out = []
    for c in y:
        base = np.exp(c[0][~np.isnan(c[0])])
        found = verdicts.compare_family([(base, np.exp(v[~np.isnan(v)])) for v in c[1:]])
        out.append([x.verdict in "+-" for x in found])
    return np.array(out)


def rate(name: str, hits: int, n: int) -> float:
    low, high = wilson(hits, n)
    print(f"{name}: {hits / n:.4f} (95% CI {low:.4f}–{high:.4f}, {hits} of {n})", flush=True)
    return hits / n


SCENARIOS = (
    Scenario("equal spreads 1%", (0.01,) * VARIANTS),
    Scenario("equal spreads 4%", (0.04,) * VARIANTS),
    Scenario("equal spreads 8%", (0.08,) * VARIANTS),
    Scenario("unequal 1%..8%, the baseline steadiest", tuple(np.linspace(0.01, 0.08, VARIANTS))),
    Scenario("unequal 8%..1%, the baseline noisiest", tuple(np.linspace(0.08, 0.01, VARIANTS))),
    Scenario("one variant at 8%, the others at 2%", (0.02,) * (VARIANTS - 1) + (0.08,)),
    Scenario("the baseline at 8%, the others at 2%", (0.08,) + (0.02,) * (VARIANTS - 1)),
    Scenario("linear drift +10% over the campaign, 4%", (0.04,) * VARIANTS, linear),
    Scenario("step drift +8% halfway, 4%", (0.04,) * VARIANTS, step),
    Scenario("unequal 8%..1% and linear drift", tuple(np.linspace(0.08, 0.01, VARIANTS)), linear),
    Scenario("heavy tails (t, 3 df), 4%", (0.04,) * VARIANTS, tails=True),
    Scenario("a failed run in the campaign, 4%", (0.04,) * VARIANTS, missing=True),
)


def simulate(n: int, seed: int, welch_n: int) -> None:
    rng = np.random.default_rng(seed)
    print(
        f"simulated campaigns: a baseline and {VARIANTS - 1} variants × {REPEATS} rounds, "
        "each round in a random order; blocked analysis (pglab) and Welch (before)",
        flush=True,
    )
    agreement(rng, 200)
    print("\nA/A: campaigns with any + or − (family-wise false alarms; promised ≤ 0.05)")
    worst = 0.0
    for sc in SCENARIOS:
        y = campaigns(sc, n, rng)
        hits = int(Blocked(y, 2).claims().any(1).sum())
        before = int(welch_claims(y[:welch_n]).any(1).sum())
        low, high = wilson(before, welch_n)
        worst = max(worst, rate(f"  {sc.name}", hits, n))
        print(f"      before (Welch): {before / welch_n:.4f} (95% CI {low:.4f}–{high:.4f})")
    print("\n+10% at 4% noise, 4 rounds: that variant called + (power)")
    powers = {}
    for sc in SCENARIOS[1], SCENARIOS[7], SCENARIOS[8]:
        y = campaigns(sc, n, rng, (0.10,))
        powers[sc.drift.__name__] = rate(f"  {sc.name}", int(Blocked(y, 2).claims()[:, 0].sum()), n)
        before = int(welch_claims(y[:welch_n])[:, 0].sum())
        low, high = wilson(before, welch_n)
        print(f"      before (Welch): {before / welch_n:.4f} (95% CI {low:.4f}–{high:.4f})")
    print(
        "\n'=' at a ±2% margin, 1% noise (per comparison; at or beyond the margin, +2% and +5%, "
        "it is an error)"
    )
    quiet = Scenario("1%", (0.01,) * VARIANTS, linear)
    for runs in (4, 8):
        for effect in (0.0, 0.01, 0.02, 0.05):  # +2%: at the margin, "=" must stay ≤ 5%
            y = campaigns(quiet, n, rng, (effect,), runs)
            rate(
                f"  true {effect:+.0%}, {runs} rounds, linear drift: '=' ",
                int((Blocked(y, 2).verdicts()[:, 0] == "=").sum()),
                n,
            )
    design = verdicts.design(REPEATS, VARIANTS - 1, 4.0, "simulated", 10.0)
    print(f"\ndesign check's power for the +10% case: {design.power:.4f}")
    for runs in (6, 8):
        more = verdicts.design(runs, VARIANTS - 1, 4.0, "simulated", 10.0)
        print(f"design check's power at {runs} rounds: {more.power:.4f}")
    print(f"aa_false_positive_rate: {worst:.4f} (the worst scenario)")
    print(f"power_at_10pct_n4: {powers['no_drift']:.4f}")
    print(f"power_at_10pct_n4_linear_drift: {powers['linear']:.4f}")
    print(f"power_at_10pct_n4_step_drift: {powers['step']:.4f}")


def agreement(rng: np.random.Generator, n: int) -> None:
    """The vectorized test gives compare_rounds' verdicts (+, −, =; others as "·")."""
    same = total = 0
    for sc in SCENARIOS[1], SCENARIOS[4], SCENARIOS[7], SCENARIOS[11]:
        y = campaigns(sc, n // 4, rng, (0.06,))
        fast = Blocked(y, 2).verdicts()
        for c, row in zip(y, fast, strict=True):
            base = {r: math.exp(v) for r, v in enumerate(c[0]) if not np.isnan(v)}
            pairs = [
                (base, {r: math.exp(v) for r, v in enumerate(o) if not np.isnan(v)}) for o in c[1:]
            ]
            slow = [
                x.verdict if x.verdict in "+-=" else "·"
                for x in verdicts.compare_rounds(pairs, 10.0, 2.0)
            ]
            same += slow == list(row)
            total += 1
    print(f"vectorized test = compare_rounds on {same} of {total} campaigns", flush=True)
    assert same == total, "the bench's vectorized test differs from pglab's"


# -- live -------------------------------------------------------------------------------------


def live(args: argparse.Namespace) -> None:
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
        },
        "telemetry": {"enabled": False},
        "variants": {"A": {}, "A-again": {}, "B": {"workload": {"rate": args.rate * 0.95}}},
    }
    plan = make_plan(campaign.parse(doc, default_name="bench-verdicts"))
    binaries = resolve(plan.runs[0].server, lab)
    executor = Executor(lab, store=scratch_store())
    tps: dict[str, dict[int, float]] = {"A": {}, "A-again": {}, "B": {}}
    try:
        for i, run in enumerate(plan.runs, 1):  # interleaved: every round visits each variant
            result = executor.run_one(replace(run), binaries)
            assert result.status == "ok", result.error
            tps[run.variant][run.repeat] = result.metrics.value("tps")
            print(
                f"run {i}/{len(plan.runs)} {run.variant:8s} {result.metrics.value('tps'):9.1f} tps",
                flush=True,
            )
    finally:
        executor.close()
    names = ("A-again", "B")
    # as `pglab show` judges an interleaved campaign: blocked, with a ±2% equivalence margin
    found = dict(
        zip(
            names,
            verdicts.compare_rounds([(tps["A"], tps[v]) for v in names], equivalence_pct=2.0),
            strict=True,
        )
    )
    for v, c in found.items():
        print(
            f"{v} vs A: {c.delta_pct:+.2f}% (95% CI {c.ci_low:+.2f} to {c.ci_high:+.2f}), "
            f"p = {c.p_value:.4f}, Holm p = {c.p_holm:.4f}, {c.method}, verdict {c.verdict}"
            + (f" ({c.reason})" if c.reason else "")
        )
    print(f"verdicts: A-again={found['A-again'].verdict} B={found['B'].verdict}")


if __name__ == "__main__":
    main()
