"""``pglab show``: a campaign's points (median TPS, spread, CI, Δ% and verdict against the
baseline) with its warnings, or one run whole (phases, metrics, telemetry, environment)."""

from __future__ import annotations

import argparse
import io
import json
from dataclasses import asdict

from rich.console import Console, JustifyMethod
from rich.markup import escape
from rich.table import Table

from pglab.analysis import (
    cores,
    named_items,
    points,
    profiles,
    queries,
    run_facts,
    run_warnings,
    spreads,
    syncrate,
    tidy,
    verdicts,
)
from pglab.analysis.evidence import of_campaign
from pglab.analysis.points import PointRow
from pglab.cli import commands, common, fmt, items_view
from pglab.cli import profiles as profile_view
from pglab.cli.common import Where, console
from pglab.cli.evidence_view import print_evidence
from pglab.cli.pacing_view import print_paced
from pglab.cli.show_run import print_run
from pglab.errors import LabError
from pglab.jsonish import JsonObject
from pglab.rows import CampaignRow, RunRow, StoredRun, plain, spec_of
from pglab.store import Store
from pglab.tune.spec import is_tune


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    common_options: argparse.ArgumentParser,
) -> None:
    p = sub.add_parser("show", parents=[common_options], help=commands.help_of("show"))
    p.add_argument("id", help="campaign name or run id")
    p.add_argument(
        "--run",
        action="store_true",
        help="ID is a run's id, even when a campaign has that name (a campaign "
        "named with digits is the campaign's otherwise)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="a warning line per point (by default a warning that concerns several points is "
        "said once, naming them)",
    )
    p.add_argument(
        "--wide",
        action="store_true",
        help="one table on one line per point, however wide (by default the tables fit the "
        "terminal: the spread columns move to a table of their own when it is narrow)",
    )
    p.add_argument(
        "--profile",
        nargs="?",
        const=profile_view.DEFAULT_TOP,
        type=int,
        metavar="TOP",
        help="the CPU profile instead: the TOP (default 10) hot functions per process kind, "
        "the backend first, self and inclusive share of the samples (a campaign: per point, "
        "with 95%% intervals over its repeats); kinds with fewer than 100 samples and functions "
        "with fewer than 10 are left out, the kinds named (all shown, said rough, when every kind "
        "is below); run with --profile to record one",
    )
    p.set_defaults(
        func=lambda a: run(
            Where.from_args(a),
            a.id,
            as_json=a.json,
            verbose=a.verbose,
            wide=a.wide,
            profile=a.profile,
            as_run=a.run,
        )
    )


def run(
    where: Where,
    ident: str,
    as_json: bool = False,
    verbose: bool = False,
    wide: bool = False,
    profile: int | None = None,
    as_run: bool = False,
) -> int:
    if profile is not None:
        return show_profile(where, ident, profile, as_run)
    with where.open(read_only=True) as store:
        kind, obj = common.find(store, ident, as_run)
        if kind == "campaign":
            runs = store.list_runs(obj["name"])
            if as_json:
                doc = {
                    "campaign": obj,
                    **_points_json(store, obj, runs, verbose),
                    "runs": plain(runs),
                }
                if is_tune(obj):
                    from pglab.tune import summary as tune_summary  # optuna: only here

                    study = tune_summary.of(store, where.store_url, obj["name"])
                    doc["tune"] = tune_summary.to_json(study)
                print(json.dumps(doc, indent=2, default=str))
                return 0
            if is_tune(obj):  # a tune study: its trials, confirmation, winner
                from pglab.cli.tune import print_summary
                from pglab.tune import summary as tune_summary  # optuna: only here

                print_summary(console, tune_summary.of(store, where.store_url, obj["name"]))
                console.print(
                    f"(every run: {where.command('ls', '--campaign', obj['name'])})",
                    markup=False,
                    soft_wrap=True,
                )
                return 0
            console.print(
                f"[bold]campaign {escape(obj['name'])}[/]  {escape(obj.get('source_file') or '')}"
            )
            print_points(store, obj["name"], verbose, wide)
            return 0
        vs_fsync = syncrate.commit_vs_fsync(obj, store.list_storage_results("pg_test_fsync"))
    notices = run_warnings.run_notices(obj)
    if as_json:
        doc = {**plain(obj), "notices": [asdict(n) for n in notices], "commit_vs_fsync": vs_fsync}
        print(json.dumps(doc, indent=2, default=str))
        return 0
    print_run(obj)
    regime = run_facts.cache_regime(obj)
    if regime is not None:
        console.print(f"cache regime: {regime.describe()}", markup=False)
    if vs_fsync:
        v = vs_fsync
        console.print(
            f"single-client commits vs the WAL storage's {v['method']}: "
            f"{v['commits_per_s']:,.0f} commits/s vs {v['fsync_per_s']:,.0f} syncs/s = "
            f"{v['ratio']:.2f} (pg_test_fsync #{v['storage_id']} on {v['storage_path']}, "
            f"same {'device, fs and mount options' if v['matched_by'] == 'device' else 'path'})",
            markup=False,
            soft_wrap=True,
        )
    print_notices(notices)
    return 0


def show_profile(where: Where, ident: str, top: int, as_run: bool = False) -> int:
    """``--profile``: a run's hot functions, or each point's of a campaign."""
    with where.open(read_only=True) as store:
        kind, obj = common.find(store, ident, as_run)
        if kind == "run":
            groups = [(f"run {obj.id} ({obj.label})", [obj])]
        else:
            by_point: dict[str, list[StoredRun]] = {}
            for r in store.list_runs(obj["name"]):
                if r.ok and (full := store.get_run(r.id, skip_kinds=profiles.SKIP)) is not None:
                    by_point.setdefault(r.label, []).append(full)
            groups = list(by_point.items())
    shown = [profile_view.print_hot(title, runs, top) for title, runs in groups]
    if not any(shown):
        raise LabError(profile_view.NOT_PROFILED, hint=f"`pglab show {ident}` shows the rest")
    return 0


def _points_json(
    store: Store, camp: CampaignRow, runs: list[RunRow], verbose: bool = False
) -> JsonObject:
    """``--json``'s points (each with its factors) and notices, as written out."""
    rows = points.campaign_rows(spreads.fingerprinted(store, runs), camp)
    notices = run_warnings.campaign_notices(store, camp["name"], verbose=verbose, rows=rows)
    first: dict[str, int] = {}
    for r in runs:
        first.setdefault(r.label, r.id)
    listed = []
    for row in rows:  # each point with its factors, as `pglab export` has them as columns
        run = store.get_run(first[row.point], skip_kinds=("latency", "progress"))
        listed.append({**plain(row), "factors": tidy.factors(run) if run else {}})
    return {"points": listed, "notices": [asdict(n) for n in notices]}


def print_notices(notices: list[run_warnings.Notice], title: str = "warnings") -> None:
    if not notices:
        return
    console.print(f"[bold]{title}[/]")
    for n in notices:
        text = f"{n.kind}: " + (f"{n.point}: " if n.point else "") + n.message
        console.print(f"  [yellow]![/] {escape(text)}", soft_wrap=True)


def print_points(store: Store, name: str, verbose: bool = False, wide: bool = False) -> None:
    """The points table, fitted to the terminal: labels say only what differs between points
    (what they share is said once above), numbers are never cut (the spread columns move to a
    table of their own when the width is short); ``wide``: one table, whatever the width."""
    runs = spreads.fingerprinted(store, store.list_runs(name))  # which build each point ran
    camp = store.get_campaign(name)
    baseline = points.reference_variant(camp, runs)
    rows = points.campaign_rows(runs, camp)
    reference = (  # what the points are compared with: a variant, or axes' first values
        fmt.short_variants([r.variant for r in rows]).get(baseline, baseline)
        if baseline is not None
        else points.reference_of(camp, runs)
    )
    # median tps, MB/s of operations…: each point's own figure, "tps/NOPM" when they differ
    median = "median " + "/".join(dict.fromkeys(r.figure for r in rows if r.ok_runs) or ["tps"])
    compared = any(r.comparison is not None for r in rows)
    derived_cols = points.derived_names(runs)
    versions = _point_versions(store, camp, runs)
    labels, shared = fmt.point_labels([(r.point, r.variant, r.axes) for r in rows])
    pivot = _pivot(rows, points.figure_of(runs))
    if pivot is not None:
        _print_fitted(pivot, wide)
    if over := cores.over_cores(runs):
        _print_fitted(_cores_table(over, cores.top_waits(store, runs), rows), wide)
    if shared:
        console.print(f"every point: {shared}", markup=False, soft_wrap=True)
    main: list[tuple[str, JustifyMethod, list[str]]] = [
        ("point", "left", [labels[r.point] for r in rows]),
        *(("PostgreSQL", "left", [versions.get(r.point, "?") for r in rows]),) * bool(versions),
        ("runs", "right", [str(r.runs) for r in rows]),
        ("failed", "right", [str(r.failed) for r in rows]),
        (median, "right", [fmt.tps(r.tps_median) for r in rows]),
        (
            "CV %",
            "right",
            [
                (f"{r.cv_pct:.1f}" + (" unstable" if r.unstable else ""))
                if r.cv_pct is not None
                else "–"
                for r in rows
            ],
        ),
        *(
            (
                f"Δ% vs {reference}",
                "right",
                [fmt.delta(r.comparison, r.is_base, r.incomparable) for r in rows],
            ),
        )
        * compared,
        *(
            (f"median {d}", "right", [fmt.short(r.derived.get(d)) for r in rows])
            for d in derived_cols
        ),
    ]
    spread: list[tuple[str, JustifyMethod, list[str]]] = [
        (
            "min–max",
            "right",
            [
                f"{r.tps_min:,.0f}–{r.tps_max:,.0f}"
                if r.tps_min is not None and r.tps_max is not None
                else "–"
                for r in rows
            ],
        ),
        (
            "95% CI of mean",
            "right",
            [f"{r.ci[0]:,.0f}–{r.ci[1]:,.0f}" if r.ci and r.ok_runs >= 3 else "–" for r in rows],
        ),
    ]
    after = next(i for i, c in enumerate(main) if c[0] == median) + 1
    together = [*main[:after], *spread, *main[after:]]
    width = None if wide else console.width
    if wide or fmt.fits(together, console.width):
        _print_fitted(fmt.table(f"campaign {name}", together, width), wide)
    else:  # the numbers first, whole; the spread beside the labels below
        _print_fitted(fmt.table(f"campaign {name}", main, width), wide)
        _print_fitted(fmt.table("spread of the repeats", [main[0], *spread], width), wide)
    if compared:
        console.print(_legend(rows, camp), markup=False, soft_wrap=True)
    if apart := [r for r in rows if r.incomparable]:  # no Δ% between different workloads
        said = "; ".join(f"{labels[r.point]}: {r.incomparable}" for r in apart)
        console.print(f"not comparable with {reference}: {said}", markup=False, soft_wrap=True)
    if points.figure_of(runs) in ("QphH", "QthH"):
        print_queries(store, runs, camp, labels, wide)
    print_named(store, runs, camp, labels)  # a replay's statement classes
    print_paced(runs, labels)  # terminals that think: NOPM against its bound, p90 by type
    print_evidence(of_campaign(store, name, rows), titled=True)  # of + and − only
    print_notices(run_warnings.campaign_notices(store, name, verbose=verbose, rows=rows))


def print_queries(
    store: Store, runs: list[RunRow], camp: CampaignRow | None, labels: dict[str, str], wide: bool
) -> None:
    """kit = "tpch": a row per query, each point's median seconds and its Δ% against the
    reference point (of the query's rate: + faster), and how their plans differ (shape, or
    nodes outgrowing work_mem)."""
    found = queries.query_points(runs, camp)
    if not found:
        return
    changes: dict[tuple[int, str], str] = {
        (c.number, c.point): c.change for c in queries.plan_changes(store, runs, camp)
    }
    cols: list[tuple[str, JustifyMethod, list[str]]] = [
        ("query", "left", [f"Q{q.number}" for q in found])
    ]
    for i, row in enumerate(found[0].rows):
        label = labels.get(row.point, row.point)
        cols.append((f"{label} s", "right", [_seconds(q.seconds.get(row.point)) for q in found]))
        if any(q.rows[i].comparison is not None for q in found):
            cols.append(
                (
                    f"{label} Δ%",
                    "right",
                    [fmt.delta(q.rows[i].comparison, q.rows[i].is_base) for q in found],
                )
            )
    if changes:
        cols.append(
            (
                "plan",
                "left",
                [
                    "; ".join(
                        f"{labels.get(p, p)}: {c}" for (n, p), c in changes.items() if n == q.number
                    )
                    for q in found
                ],
            )
        )
    width = None if wide else console.width
    _print_fitted(fmt.table("per query (median seconds; Δ% of its rate)", cols, width), wide)
    compared = [r for q in found for r in q.rows if r.comparison is not None]
    if compared:
        console.print(_query_legend(compared, len(found), camp), markup=False, soft_wrap=True)


def print_named(
    store: Store, runs: list[RunRow], camp: CampaignRow | None, labels: dict[str, str]
) -> None:
    """The items runs name themselves (a replay's statement classes): each compared point's
    sentence and its significant items ranked (``analysis.named_items``), then the legend."""
    found = named_items.campaign_items(store, runs, camp)
    if found is None or not found.points:
        return
    for p in found.points:
        label, ref = labels.get(p.point, p.point), labels.get(p.reference, p.reference)
        said = named_items.said(p, found.named, label, ref)
        items_view.print_moved(said, named_items.lines(p, found.named.unit))
    every = [r.comparison for item in found.items for r in item.rows]
    console.print(
        named_items.legend(found.named, every, len(found.items)), markup=False, soft_wrap=True
    )


def _query_legend(rows: list[PointRow], queries: int, camp: CampaignRow | None) -> str:
    """What the per-query Δ% columns' verdicts mean: the legend of the points' table, and that
    Holm's correction is over every query's comparisons together, as ``compare``'s."""
    m = max(r.comparison.comparisons for r in rows if r.comparison is not None)
    return (
        f"{_legend(rows, camp)}; each interval its comparison's own 95%, the verdicts "
        f"Holm-corrected over all {m} comparisons of the {queries} queries together, as "
        "compare's are"
    )


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}" if value < 10 else f"{value:,.1f}"


def _legend(rows: list[PointRow], camp: CampaignRow | None) -> str:
    """What the Δ% column's verdicts mean and which tests made them."""
    effect = points.effect_of(camp)
    margin = points.equivalence_of(camp) or effect
    return (
        f"Δ%: {verdicts.methods_text([r.comparison for r in rows])}; + faster, − slower, "
        f"= within ±{margin:g}%, ~ none found (±{effect:g}% would have been), ? could not tell"
    )


def _print_fitted(table: Table, wide: bool) -> None:
    """Print a table; ``wide``: at its natural width, past the terminal's (rendered on a console
    without a width limit, then printed as lines the terminal may wrap)."""
    if not wide:
        console.print(table)
        return
    unlimited = Console(file=io.StringIO(), width=100_000, record=True, highlight=False)
    unlimited.print(table)
    console.print(unlimited.export_text(), end="", markup=False, highlight=False, soft_wrap=True)


def _pivot(rows: list[PointRow], figure: str = "tps") -> Table | None:
    """Seed-003 style: a row per (variant, other axes), a column per client count, the median
    of the points' figure (TPS, a kit's NOPM or tpsE);
    rows labelled by what differs besides the clients (the variant's name where nothing does:
    one variant over the clients alone is one row)."""
    cells: dict[str, dict[int, float | None]] = {}
    others = [
        (r.point, r.variant, {a: v for a, v in r.axes.items() if a != "clients"}) for r in rows
    ]
    short, _ = fmt.point_labels(others, unique=False)
    for r in rows:
        key = run_facts.scaling_key(r.axes, r.variant, r.point)
        if key is None:
            return None
        row = short[r.point] if short[r.point] != r.point else r.variant  # nothing else differs
        cells.setdefault(row, {})[key[1]] = r.tps_median
    clients = sorted({c for by_c in cells.values() for c in by_c})
    if len(clients) < 2:
        return None
    columns: list[fmt.Column] = [("point", "left", list(cells))]
    for c in clients:
        columns.append(
            (
                f"{c} client{'s' if c != 1 else ''}",
                "right",
                [f"{by_c[c]:,.0f}" if by_c.get(c) is not None else "–" for by_c in cells.values()],
            )
        )
    said = "TPS" if figure == "tps" else figure
    return fmt.table(f"median {said} by clients", columns, console.width)


def _cores_table(
    over: dict[str, list[cores.CoresPoint]],
    waits: dict[str, list[tuple[str, float, float]]],
    rows: list[PointRow],
) -> Table:
    """TPS against cores (the os.cpus axis), a row per series and core count, with the top
    waits of the point's median run."""
    label = {cores.cores_key(r.axes, r.variant, r.point): r.point for r in rows}
    at = [(k, waits.get(label.get((k.series, k.cpus), ""), [])) for c in over.values() for k in c]
    return fmt.table(
        "TPS against cores (the server's CPUs)",
        [
            ("series", "left", [k.series for k, _ in at]),
            ("cores", "right", [str(k.cpus) for k, _ in at]),
            ("median TPS", "right", [fmt.tps(k.tps) for k, _ in at]),
            ("TPS / core", "right", [fmt.tps(k.tps_per_core) for k, _ in at]),
            ("efficiency", "right", [f"{k.efficiency:.2f}" for k, _ in at]),
            (
                "top waits",
                "left",
                [", ".join(f"{n} {p:.0f}%" for n, p, _ in w[:3]) or "–" for _, w in at],
            ),
        ],
        console.width,
    )


def _point_versions(store: Store, camp: CampaignRow | None, runs: list[RunRow]) -> dict[str, str]:
    """point label -> the PostgreSQL version its runs used, when variants choose their server
    and the versions differ; else {} (no column)."""
    variants = spec_of(camp).get("variants") or {}
    if not any(isinstance(v, dict) and v.get("server") for v in variants.values()):
        return {}
    versions: dict[str, str] = {}
    for r in runs:
        if r.ok and r.label not in versions:
            fp = store.run_fingerprint(r.id) or {}
            versions[r.label] = str(fp.get("server_version", "?"))
    return versions if len(set(versions.values())) > 1 else {}
