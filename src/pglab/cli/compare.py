"""``pglab compare A B``: two runs, two points or two campaigns side by side, B against A
(``analysis.comparisons``' TypedDicts, printed as tables, or as they are with ``--json``)."""

from __future__ import annotations

import argparse
import json

from rich.markup import escape

from pglab.analysis import compare as comparing
from pglab.analysis import comparisons, evidence, profiles, verdicts
from pglab.analysis.comparisons import (
    CampaignsComparison,
    CompareResult,
    PointsComparison,
    PointSide,
    QueryComparison,
    RunsComparison,
    ScriptComparison,
)
from pglab.campaign.spec import DEFAULT_EFFECT_PCT
from pglab.cli import commands, fmt, items_view
from pglab.cli import profiles as profile_view
from pglab.cli.common import Where, console
from pglab.cli.evidence_view import print_evidence
from pglab.workloads import named_items, query_tables

COMPARE_HELP = """\
Compare B with A (the baseline). A and B are both runs, both points or both campaigns:

  12                       run 12 (pglab ls lists runs)
  wal-sweep                the whole campaign wal-sweep (pglab ls --campaigns)
  'wal-sweep:lz4 clients=8'
                           one point of a campaign: its label as `pglab show CAMPAIGN` prints
                           it, after a colon; its words in any order, or fewer of them if they
                           pick out one point ('wal-sweep:lz4')

Two runs: TPS, latency and every phase's figures side by side with Δ%, and their top waits;
one run each says nothing about significance. Two points: their repeats' TPS, Δ% of mean log
TPS with its 95% CI, a p-value and a verdict: + or - significant; = the difference is shown to
lie within A's campaign's [analysis] equivalence (its effect by default); ~ not significant, and
the runs could have found an effect of A's campaign's [analysis] effect (10% by default); ? the
runs could not tell (the reason says how many would). Every answer is the one `pglab show`,
the report and `pglab serve` give (one engine, analysis/engine.py), and says which test made it
and why: when B against A is one of their campaign's comparisons, it is the campaign's own answer
(Holm over its comparisons); other points of one interleaved campaign are paired by round (their
within-round log ratios: drift cancels); a campaign of repeats = "auto" is judged on its
anytime-valid sequence; points of two campaigns get Welch's t-test on log TPS. Two campaigns:
their points matched by label, by matrix coordinates (the label without the variant) or by
variant, whichever matches most; each pair as two points apart (Welch), Holm-corrected over all
pairs. When both sides ran a phase of several scripts (pgbench -f/-b, weights), each script
both ran (by phase and script name) has its TPS and latency average as pgbench reported them side
by side (medians of the repeats) with Δ%, and a verdict on its TPS where both sides have 2 runs
or more (paired by round as above, Holm-corrected over the scripts compared).
"""
# what each kind says of its comparisons: the queries it times (QueryTables), the items its runs
# name (NamedItems)
COMPARE_HELP += "".join(q.compare_help for q in query_tables())
COMPARE_HELP += "".join(n.compare_help for n in named_items())
COMPARE_HELP += """\
Where both sides have CPU profiles (pglab run --profile), the functions whose share of their
process kind's samples changed most, the backend's first (10), then each other kind's (3),
rising then falling, with a 95% interval of the change (2 runs a side); a kind with fewer than
100 samples on a side, or a function with fewer than 10, is left out (named, not compared).
Two points or two campaigns: why it changed, what else moved between the sides' runs (each
wait event in sessions, the busy machine: the CPU of processes that are neither the server,
the load generator nor pglab; CPU user/system/iowait/steal, disk MB/s, WAL, full-page images,
temporary files (spills) and the server's CPU per transaction, checkpoints, buffers read and
hit, client CPU; where profiled, each function's inclusive share of its kind's samples, above
the same floors; a TPC-H-like query's spills and plan nodes), each with its own Δ and 95% CI
(paired by round in one interleaved campaign, else Welch), those beyond their noise only: a
rise from outside the run first, then the most moved relative to its size; the top 5 per pair
(--json: all, under "evidence"). docs/guides/explaining-a-difference.md has five cases.
Every comparison ends with the storage results (pglab storage) measured under each side's data
and WAL, and what differs in the settings and environment the runs reported.

examples:
  pglab compare 12 13
  pglab compare 'sweep:base clients=8' 'sweep:lz4 clients=8'
  pglab compare pg16-run pg18-run --json
"""


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "compare",
        parents=[common],
        help=commands.help_of("compare"),
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
        pairs = [] if result["kind"] == "runs" else result["pairs"]
        diffs = profiles.compare_targets(store, a, b, pairs)
        why = evidence.compare_targets(store, a, b, pairs)
    if as_json:  # the comparison as it is, then the profiles' changes and the evidence
        print(json.dumps(comparisons.as_json(result, diffs, why), indent=2, default=str))
        return 0
    if result["kind"] == "runs":
        _print_run_comparison(result)
        _print_scripts(result, [("", row) for row in result["scripts"]])
    else:
        _print_pairs(result)
        labels = fmt.short_labels([p["b"]["point"] for p in result["pairs"]])
        several = len(result["pairs"]) > 1
        _print_scripts(
            result,
            [
                (labels[p["b"]["point"]] if several else "", row)
                for p in result["pairs"]
                for row in p.get("scripts", [])
            ],
        )
        if result["kind"] == "points":
            _print_queries(result.get("queries", []))
            if items := result.get("items"):  # a replay's statement classes
                items_view.print_moved(items["said"], items["lines"], items["legend"])
        print_evidence(why, several)
    _print_storage(result)
    diff = result.get("settings_diff", [])
    if diff:
        columns: list[fmt.Column] = [
            ("name", "left", [d["name"] for d in diff]),
            ("A", "left", [d["a"] for d in diff]),
            ("B", "left", [d["b"] for d in diff]),
        ]
        console.print(fmt.table("settings and environment that differ", columns, console.width))
    else:
        console.print("settings and environment: no difference reported")
    for title, changes in diffs:  # where both sides have CPU profiles
        profile_view.print_changes(title, changes)
    return 0


def _print_storage(result: CompareResult) -> None:
    """The storage results measured under each side's data and WAL."""
    storage = result.get("storage")
    for label, used in (("A", storage["a"]), ("B", storage["b"])) if storage else ():
        for st in used:
            console.print(
                f"{label}'s {' and '.join(st['roles'])} storage: {escape(st['where'])}: "
                f"{st['tool']} #{st['id']} {escape(st['headline'])}",
                soft_wrap=True,
            )


def _print_queries(rows: list[QueryComparison]) -> None:
    """kit = "tpch": each query's seconds on both sides, B's Δ% (of its rate: + faster) and
    then each query whose plan differs (shape, or nodes outgrowing work_mem), in words
    (``Q9: hash join → merge join; -38.0% [...] −``)."""
    if not rows:
        return
    columns: list[fmt.Column] = [
        ("query", "left", [f"Q{r['query']}" for r in rows]),
        ("A s", "right", [f"{r['a_s']:.3f}" for r in rows]),
        ("B s", "right", [f"{r['b_s']:.3f}" for r in rows]),
        ("Δ% (rate)", "right", [fmt.delta(r["comparison"], False) for r in rows]),
    ]
    m = max(r["comparison"].comparisons for r in rows)
    console.print(fmt.table(f"per query (Holm over {m} comparisons)", columns, console.width))
    tests = verdicts.methods_text([r["comparison"] for r in rows])
    console.print(f"query verdicts: {tests}", markup=False, soft_wrap=True)
    for r in rows:
        if r["plan"]:
            console.print(
                f"Q{r['query']}: {r['plan']}; {fmt.delta(r['comparison'], False)}",
                markup=False,
                soft_wrap=True,
            )


def _print_run_comparison(result: RunsComparison) -> None:
    a, b = result["a"], result["b"]
    for side, run in (("A", a), ("B", b)):  # the sides in full, above: never cut in a header
        console.print(
            f"{side}: run {run['run']}, campaign {run['campaign']}, point {run['point']}",
            markup=False,
            soft_wrap=True,
        )
    metrics = result["metrics"]
    columns: list[fmt.Column] = [
        ("figure", "left", [m["metric"] for m in metrics]),
        ("A", "right", [fmt.short(m["a"]) for m in metrics]),
        ("B", "right", [fmt.short(m["b"]) for m in metrics]),
        (
            "Δ%",
            "right",
            ["–" if m["delta_pct"] is None else f"{m['delta_pct']:+.1f}%" for m in metrics],
        ),
    ]
    title = f"run {b['run']} compared with run {a['run']}"
    console.print(fmt.table(title, columns, console.width))
    for w in result["waits"]:
        console.print(f"[bold]top waits of {escape(w['phase'])}[/]")
        for side, found in (("A", w["a"]), ("B", w["b"])):
            text = ", ".join(f"{name} {pct:.0f}%" for name, pct in found) or "–"
            console.print(f"  {side}: {escape(text)}", soft_wrap=True)
    console.print(f"[yellow]note:[/] {result['note']}", soft_wrap=True)


def _print_pairs(result: PointsComparison | CampaignsComparison) -> None:
    if result["kind"] == "campaigns":
        title = f"campaign {result['b']} compared with {result['a']}"
    else:  # the title names both sides, the campaign once when they share it
        sa, sb = result["pairs"][0]["a"], result["pairs"][0]["b"]
        if sa["campaign"] == sb["campaign"]:
            title = f"{sb['point']} compared with {sa['point']} (campaign {sa['campaign']})"
        else:
            title = f"{sb['campaign']}:{sb['point']} compared with {sa['campaign']}:{sa['point']}"
    same = result["kind"] == "campaigns" and result["matched_by"] == "label"  # one point column
    whole = result["kind"] == "campaigns"  # the campaigns are in the title
    pairs = result["pairs"]
    figure = result.get("figure", "tps")  # or MB/s of maintenance operations

    one_campaign = whole or all(p["a"]["campaign"] == p["b"]["campaign"] for p in pairs)
    short = fmt.short_labels([p[s]["point"] for p in pairs for s in ("a", "b")])

    def label(side: PointSide) -> str:  # the campaign is in the title when it is one
        point = short[side["point"]]
        return point if one_campaign else f"{side['campaign']}:{point}"

    def ci(c: verdicts.Comparison | None) -> str:
        return f"[{c.ci_low:+.1f}, {c.ci_high:+.1f}]" if c and c.ci_low is not None else "–"

    cs = [p["comparison"] for p in pairs]
    # the run counts once, below the table, when every pair has the same: room for the labels
    counts = {(p["a"]["n"], p["b"]["n"]) for p in pairs}
    same_n = len(counts) == 1
    named = not whole and len(pairs) == 1  # the title names both points: no label columns
    columns: list[fmt.Column] = [
        *(
            ()
            if named
            else (("point", "left", [label(p["a"]) for p in pairs]),)
            if same
            else (
                ("A", "left", [label(p["a"]) for p in pairs]),
                ("B", "left", [label(p["b"]) for p in pairs]),
            )
        ),
        *(
            ()
            if same_n
            else (
                ("n A", "right", [str(p["a"]["n"]) for p in pairs]),
                ("n B", "right", [str(p["b"]["n"]) for p in pairs]),
            )
        ),
        (f"median {figure} A", "right", [fmt.short(p["a"]["median"]) for p in pairs]),
        (f"median {figure} B", "right", [fmt.short(p["b"]["median"]) for p in pairs]),
        ("Δ%", "right", ["–" if c is None else f"{c.delta_pct:+.1f}%" for c in cs]),
        ("95% CI of Δ%", "right", [ci(c) for c in cs]),
        (
            "p (Holm)" if result["kind"] == "campaigns" and result["corrected"] else "p",
            "right",
            [f"{c.p_holm:.3g}" if c and c.p_holm is not None else "–" for c in cs],
        ),
        ("", "center", ["–" if c is None else c.verdict for c in cs]),
    ]
    table = fmt.table(title, columns, console.width)
    console.print(table)
    if same_n:
        n_a, n_b = counts.pop()
        console.print(f"runs: {n_a} in A and {n_b} in B, for every pair", markup=False)
    if result["kind"] == "campaigns":
        un = result["unmatched"]
        console.print(
            f"points matched by {result['matched_by']}; unmatched: {un['a']} of A, {un['b']} of "
            f"B{'; p-values Holm-corrected over the pairs' if result['corrected'] else ''}"
        )
    reasons = [(p, p["comparison"]) for p in result["pairs"] if p["comparison"]]
    for p, c in reasons:
        name = p["b"]["point"]  # B is the one compared (A is the baseline)
        if c.verdict in "=~?" and c.reason:
            console.print(f"  {c.verdict} {escape(name)}: {escape(c.reason)}", soft_wrap=True)
        for warning in c.warnings:
            console.print(f"  [yellow]![/] {escape(name)}: {escape(warning)}", soft_wrap=True)
    effect = reasons[0][1].effect_pct if reasons else DEFAULT_EFFECT_PCT
    margin = next((c.equivalence_pct for _, c in reasons if c.equivalence_pct), effect)
    log_of = {"tps": "TPS", "nopm": "NOPM", "tpse": "tpsE"}.get(figure, figure)
    tests = verdicts.methods_text([c for _, c in reasons])
    console.print(
        f"verdict: + / - significant (log {log_of}: {tests}"
        f"; p < 0.05 after Holm); = shown within ±{margin:g}%; ~ not significant, and "
        f"the runs could have found ±{effect:g}%; ? they could not tell (see the reason)",
        soft_wrap=True,
    )


def _print_scripts(result: CompareResult, rows: list[tuple[str, ScriptComparison]]) -> None:
    """The scripts both sides ran in a phase of several, each with its TPS and latency side by
    side (medians of the repeats), Δ% and, where both sides have repeats, a verdict; ``rows``:
    (the point B's label, or "" when there is one pair, and the script's row)."""
    if not rows:
        return

    def pct(v: float | None) -> str:
        return "–" if v is None else f"{v:+.1f}%"

    phases = len({r["phase"] for _, r in rows}) > 1
    judged = [r["comparison"] for _, r in rows if r["comparison"] is not None]
    runs = result["kind"] == "runs"
    columns: list[fmt.Column] = [
        *((("point", "left", [p for p, _ in rows]),) if any(p for p, _ in rows) else ()),
        *((("phase", "left", [r["phase"] for _, r in rows]),) if phases else ()),
        ("script", "left", [r["script"] for _, r in rows]),
        ("tps A", "right", [fmt.tps(r["a"]["median_tps"]) for _, r in rows]),
        ("tps B", "right", [fmt.tps(r["b"]["median_tps"]) for _, r in rows]),
        ("Δ%", "right", [pct(r["tps_delta_pct"]) for _, r in rows]),
        ("lat ms A", "right", [fmt.num(r["a"]["median_latency_ms"]) for _, r in rows]),
        ("lat ms B", "right", [fmt.num(r["b"]["median_latency_ms"]) for _, r in rows]),
        ("Δ% lat", "right", [pct(r["latency_delta_pct"]) for _, r in rows]),
        *(
            (
                (
                    "",
                    "center",
                    [r["comparison"].verdict if r["comparison"] else "–" for _, r in rows],
                ),
            )
            if judged
            else ()
        ),
    ]
    title = "scripts, as pgbench reported each" + ("" if runs else " (medians of the repeats)")
    console.print(fmt.table(title, columns, console.width))
    if judged:
        family = f", Holm-corrected over {len(judged)}" if len(judged) > 1 else ""
        tests = verdicts.methods_text(judged)
        console.print(
            f"script verdicts: log TPS, {tests}{family} (--json has each one's p-value and reason)",
            markup=False,
            soft_wrap=True,
        )
