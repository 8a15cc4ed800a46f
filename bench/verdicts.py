"""Does pglab call a real difference real, and a non-difference not? A/A and A/B on real servers.

Three variants of one point, interleaved: ``A`` (pgbench ``--rate R``), ``A-again`` (the same) and
``B`` (``--rate 0.95·R``), R well below capacity so that the rate limit, not the machine, sets
the TPS: the true effect is −5% for B and 0 for A-again. Prints each comparison with its Δ%, 95%
CI and verdict (Holm-corrected over the two), then ``verdicts: A-again=~ B=-`` as the last line:
the expected outcome is ``~`` for A-again and ``-`` for B, with B's CI containing −5%.

    .venv/bin/python bench/verdicts.py [--repeats 6] [--duration 10] [--rate 2000]
"""

from __future__ import annotations

from dataclasses import replace

from _common import open_lab, parser

from pglab import analysis, campaign
from pglab.executor import Executor
from pglab.plan import make_plan
from pglab.sources import resolve


def main() -> None:
    ap = parser(__doc__, point=False)
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--rate", type=float, default=2000.0)
    args = ap.parse_args()
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
    raw = {v: analysis.compare(tps["A"], tps[v]) for v in ("A-again", "B")}
    adjusted = analysis.holm([raw[v].p_value for v in raw])
    verdicts = {}
    for (v, _), p in zip(raw.items(), adjusted, strict=True):
        c = raw[v].judged(p)
        verdicts[v] = c.verdict
        print(f"{v} vs A: {c.delta_pct:+.2f}% (95% CI {c.ci_low:+.2f} to {c.ci_high:+.2f}), "
              f"p = {c.p_value:.4f}, Holm p = {p:.4f}, verdict {c.verdict}")  # fmt: skip
    print(f"verdicts: A-again={verdicts['A-again']} B={verdicts['B']}")


if __name__ == "__main__":
    main()
