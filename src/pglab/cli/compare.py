"""``pglab compare A B``: two runs, two points or two campaigns side by side, B against A."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from rich.markup import escape
from rich.table import Table

from pglab.analysis import compare as comparing
from pglab.analysis import verdicts
from pglab.cli import fmt
from pglab.cli.common import Where, console

COMPARE_HELP = """\
Compare B with A (the baseline). A and B are both runs, both points or both campaigns:

  12                       run 12 (pglab ls lists runs)
  wal-sweep                the whole campaign wal-sweep (pglab ls --campaigns)
  'wal-sweep:lz4 clients=8'
                           one point of a campaign: its label as `pglab show CAMPAIGN` prints
                           it, after a colon; its words in any order, or fewer of them if they
                           pick out one point ('wal-sweep:lz4')

Two runs: TPS, latency and every phase's figures side by side with Δ%, and their top waits;
one run each says nothing about significance. Two points: their repeats' TPS, Δ% (ratio of
geometric means) with its 95% CI, the p-value of Welch's t-test on log TPS and a verdict: + or -
significant; ~ not, and the runs could have found an effect of A's campaign's [analysis] effect
(10% by default); ? the runs could not tell (the reason says how many would). Two campaigns:
their points matched by label, by matrix coordinates (the label without the variant) or by
variant, whichever matches most; each pair as two points, Holm-corrected over all pairs.
Every comparison ends with the storage results (pglab storage) measured under each side's data
and WAL, and what differs in the settings and environment the runs reported.

examples:
  pglab compare 12 13
  pglab compare 'sweep:base clients=8' 'sweep:lz4 clients=8'
  pglab compare pg16-run pg18-run --json
"""


def add_parser(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "compare",
        parents=[common],
        help="compare two runs, two points or two campaigns (Δ%%, CI, significance)",
        description=COMPARE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("a", metavar="A", help="the baseline: RUN_ID, CAMPAIGN or CAMPAIGN:POINT")
    p.add_argument("b", metavar="B", help="compared with A: the same kind as A")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=lambda a: run(Where.from_args(a), a.a, a.b, as_json=a.json))


def run(where: Where, a_text: str, b_text: str, as_json: bool = False) -> int:
    with where.open(read_only=True) as store:
        a, b = comparing.resolve(store, a_text), comparing.resolve(store, b_text)
        result = comparing.compare_targets(store, a, b)
    if as_json:
        print(json.dumps(result, indent=2, default=_jsonable))
        return 0
    if result["kind"] == "runs":
        _print_run_comparison(result)
    else:
        _print_pairs(result)
    for side, label in (("a", "A"), ("b", "B")):
        for st in (result.get("storage") or {}).get(side, []):
            console.print(
                f"{label}'s {' and '.join(st['roles'])} storage: {escape(st['where'])}: "
                f"{st['tool']} #{st['id']} {escape(st['headline'])}",
                soft_wrap=True,
            )
    diff = result["settings_diff"]
    if diff:
        table = Table(title="settings and environment that differ")
        for col in ("name", "A", "B"):
            table.add_column(col)
        for d in diff:
            table.add_row(escape(d["name"]), escape(d["a"]), escape(d["b"]))
        console.print(table)
    else:
        console.print("settings and environment: no difference reported")
    return 0


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, verdicts.Comparison):
        return asdict(obj)
    return str(obj)


def _print_run_comparison(result: dict[str, Any]) -> None:
    a, b = result["a"], result["b"]
    table = Table(title=f"run {b['run']} compared with run {a['run']}")
    table.add_column("figure", no_wrap=True)
    table.add_column(escape(f"A: run {a['run']} {a['campaign']}:{a['point']}"), justify="right")
    table.add_column(escape(f"B: run {b['run']} {b['campaign']}:{b['point']}"), justify="right")
    table.add_column("Δ%", justify="right")
    for m in result["metrics"]:
        d = m["delta_pct"]
        table.add_row(
            escape(m["metric"]),
            fmt.short(m["a"]),
            fmt.short(m["b"]),
            "–" if d is None else f"{d:+.1f}%",
        )
    console.print(table)
    for w in result["waits"]:
        console.print(f"[bold]top waits of {escape(w['phase'])}[/]")
        for side in ("a", "b"):
            text = ", ".join(f"{name} {pct:.0f}%" for name, pct in w[side]) or "–"
            console.print(f"  {side.upper()}: {escape(text)}", soft_wrap=True)
    console.print(f"[yellow]note:[/] {result['note']}", soft_wrap=True)


def _print_pairs(result: dict[str, Any]) -> None:
    if result["kind"] == "campaigns":
        title = f"campaign {result['b']} compared with {result['a']}"
    else:  # the title names both sides, the campaign once when they share it
        sa, sb = result["pairs"][0]["a"], result["pairs"][0]["b"]
        if sa["campaign"] == sb["campaign"]:
            title = f"{sb['point']} compared with {sa['point']} (campaign {sa['campaign']})"
        else:
            title = f"{sb['campaign']}:{sb['point']} compared with {sa['campaign']}:{sa['point']}"
    same = result.get("matched_by") == "label"  # one column for the point
    table = Table(title=escape(title))
    for col, just in (
        *((("point", "left"),) if same else (("A", "left"), ("B", "left"))),
        ("n A", "right"),
        ("n B", "right"),
        ("median tps A", "right"),
        ("median tps B", "right"),
        ("Δ%", "right"),
        ("95% CI of Δ%", "right"),
        ("p (Holm)" if result.get("corrected") else "p", "right"),
        ("", "center"),
    ):
        table.add_column(col, justify=just)
    for p in result["pairs"]:
        c, sa, sb = p["comparison"], p["a"], p["b"]
        whole = result["kind"] == "campaigns"  # the campaigns are in the title
        labels = [sa["point"] if whole else f"{sa['campaign']}:{sa['point']}"]
        labels += [] if same else [sb["point"] if whole else f"{sb['campaign']}:{sb['point']}"]
        table.add_row(
            *(escape(lb) for lb in labels),
            str(sa["n"]),
            str(sb["n"]),
            fmt.short(sa["median"]),
            fmt.short(sb["median"]),
            "–" if c is None else f"{c.delta_pct:+.1f}%",
            f"{c.ci_low:+.1f} … {c.ci_high:+.1f}" if c and c.ci_low is not None else "–",
            f"{c.p_holm:.3g}" if c and c.p_holm is not None else "–",
            "–" if c is None else c.verdict,
        )
    console.print(table)
    if result["kind"] == "campaigns":
        un = result["unmatched"]
        console.print(
            f"points matched by {result['matched_by']}; unmatched: {un['a']} of A, {un['b']} of "
            f"B{'; p-values Holm-corrected over the pairs' if result['corrected'] else ''}"
        )
    reasons = [(p, p["comparison"]) for p in result["pairs"] if p["comparison"]]
    for p, c in reasons:
        if c.verdict in "~?" and c.reason:
            name = p["b"]["point"]  # B is the one compared (A is the baseline)
            console.print(f"  {c.verdict} {escape(name)}: {escape(c.reason)}", soft_wrap=True)
    effect = reasons[0][1].effect_pct if reasons else verdicts.DEFAULT_EFFECT_PCT
    console.print(
        "verdict: + / - significant (Welch's t on log TPS, p < 0.05 after Holm); ~ not, and "
        f"the runs could have found ±{effect:g}%; ? they could not tell (see the reason)",
        soft_wrap=True,
    )
