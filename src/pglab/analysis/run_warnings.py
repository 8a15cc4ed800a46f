"""The warnings a person must read before trusting a number, made from the stored runs.

Pure functions over the store's plain rows (``Store.list_runs`` and ``Store.get_run`` dicts),
tested on synthetic rows with known answers; ``campaign_notices`` is the one that reads a store.
A run's scaling and cache regime, which some warnings read, are ``run_facts``'.

- ``run_notices`` / ``campaign_notices``: the warnings a person must read before trusting a
  number (``KINDS``, most serious first).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pglab import workloads
from pglab.analysis import comparable, evidence, generator_hosts, pacing, points, scripts
from pglab.analysis.notice_kinds import KINDS, NoticeKind
from pglab.analysis.run_facts import cache_regime, checkpoint_timeout_s
from pglab.campaign.spec import DEFAULT_EFFECT_PCT
from pglab.campaign.writes import phase_writes
from pglab.errors import LabError
from pglab.metric_units import by_phase, phase_metric
from pglab.records import reason_of
from pglab.rows import PhaseRow, RunRow, Series, StoredRun
from pglab.stats import steady
from pglab.stats.summary import UNSTABLE_CV_PCT
from pglab.telemetry import os_stats, pg_stats
from pglab.telemetry.base import Table
from pglab.telemetry.summary import tables_of
from pglab.workloads.kits import load as kit_load
from pglab.workloads.kits.load import CONSISTENCY_TABLE
from pglab.workloads.maintenance.figures import OPERATION_KIND

if TYPE_CHECKING:  # the store's type only: its module is not imported to run this
    from pglab.store.base import Store

# said once when on every point
GROUPED: tuple[NoticeKind, ...] = ("in-memory", "short", "client-bound", "busy-machine")

RUN_DRIFT_PCT = 5.0  # within a run: per-second samples are autocorrelated, ask for more
WAL_WRITES_MB_S = 0.5  # a custom script that makes more WAL than this writes
SKIPPED_PCT = 1.0  # TPC-C's Delivery: skipped districts are to be reported above 1%
# a load generator's program -> its option for threads, as its kind declares it
THREADS_OPTION = {client: f" ({option})" for client, option in workloads.threads_options().items()}


@dataclass(frozen=True)
class Notice:
    """A warning about a campaign, one of its points (``point``: its label) or one run."""

    kind: NoticeKind
    point: str | None
    run_id: int | None
    message: str
    points: tuple[str, ...] = ()  # a warning said once for several points: which ones


# -- scaling -------------------------------------------------------------------------------


# -- cache regime --------------------------------------------------------------------------


# -- notices -------------------------------------------------------------------------------


def run_notices(run: RunRow) -> list[Notice]:
    """The warnings about one run (a StoredRun; a listing's RunRow gives fewer: no telemetry,
    no series): failed, failures, drifting within a phase, client-bound, short, in-memory."""
    rid, label = run.id, run.label
    if not run.ok:
        return [Notice("failed", label, rid, f"run {rid} failed: {reason_of(run.error)}")]
    out: list[Notice] = []
    if comparable.assertions_on(run):
        out.append(
            Notice(
                "assertions",
                label,
                rid,
                (
                    "the server was built with assertions (--enable-cassert, debug_assertions = "
                    "on): "
                    "its checks cost a lot of CPU, so its figures say little of a production build"
                ),
            )
        )
    stored = isinstance(run, StoredRun)
    phases = [ph for ph in run.phases if ph.measured] if isinstance(run, StoredRun) else []
    series = run.series if isinstance(run, StoredRun) else {}
    for ph in phases:
        progress = series.get(str(ph.idx), {}).get("progress")
        trend = _phase_drift(Table.from_json(progress) if progress else None)
        if trend is not None:
            out.append(
                Notice(
                    "drifting",
                    label,
                    rid,
                    (
                        f"TPS drifted {trend.change_pct:+.1f}% over phase {_phase_name(ph)} "
                        f"(p={trend.p_value:.2g}): no steady state; run longer or find what changes"
                    ),
                )
            )
    if not stored:  # a listing's row: the stored drift figures, without their p-values
        drifts = by_phase(run.metrics, "drift_pct")
        for name, value in sorted(drifts.items(), key=lambda d: phase_metric(d[0], "drift_pct")):
            if abs(value) >= RUN_DRIFT_PCT * 2:
                out.append(
                    Notice("drifting", label, rid, f"TPS drifted {value:+.1f}% over phase {name}")
                )
    for ph in phases:
        found = scripts.failures(ph)
        if found and (found.failed_pct or 0) > scripts.FAILURES_WARN_PCT:
            out.append(
                Notice(
                    "failures",
                    label,
                    rid,
                    (
                        f"phase {_phase_name(ph)}: {scripts.describe_failures(found)}: its TPS "
                        "counts "
                        "only the transactions that succeeded; raise max_tries, or lower the "
                        "contention"
                    ),
                )
            )
    out += _inconsistent(run, phases, series)
    out += [Notice(k, label, rid, text) for k, text in pacing.warnings(run.metrics)]
    for ph in phases:
        os_figures = os_stats.summarize(tables_of(series.get(str(ph.idx), {})))
        if os_figures.get("client_bound"):
            out.append(
                Notice(
                    "client-bound",
                    label,
                    rid,
                    (
                        f"{ph.client} used {os_figures['pgbench_cpu_pct']:.0f}% of a core in phase "
                        f"{_phase_name(ph)}: the load generator, not the server, may be the limit; "
                        f"give {ph.client} more threads{THREADS_OPTION.get(ph.client, '')} or "
                        "fewer "
                        "clients per thread"
                    ),
                )
            )
            break
    out += [Notice("busy-machine", label, rid, text) for text in evidence.busy(phases, series)]
    if isinstance(run, StoredRun):
        out += _short(run, phases, series)
        out += [
            Notice(kind, label, rid, text)
            for kind, text in generator_hosts.warnings(phases, series)
        ]
    regime = cache_regime(run)
    if regime is not None and regime.regime == "in shared_buffers":
        out.append(
            Notice(
                "in-memory",
                label,
                rid,
                (
                    f"{regime.describe()}: reads never reach storage, so a storage or IO study "
                    "measures nothing here; raise the scale"
                ),
            )
        )
    return out


def _inconsistent(run: RunRow, phases: list[PhaseRow], series: Series) -> list[Notice]:
    """A kit whose consistency conditions do not hold after a phase: its data is wrong, and so
    may be its figures (a listing's row: the stored count of conditions broken); and a TPC-C
    Delivery that skipped more than 1% of its districts (clause 2.7.4.2)."""
    said = [
        f"phase {_phase_name(ph)}: condition {', '.join(broken)}"
        for ph in phases
        if (broken := kit_load.broken(series.get(str(ph.idx), {}).get(CONSISTENCY_TABLE) or {}))
    ]
    if not said and not isinstance(run, StoredRun) and run.metrics.get("inconsistent"):
        said = [f"{run.metrics['inconsistent']:.0f} condition(s) broken"]
    out = (
        [
            Notice(
                "inconsistent",
                run.label,
                run.id,
                (
                    "the kit's consistency conditions (TPC-C clause 3.3.2, and the stock "
                    "against the order "
                    f"lines) do not hold after the run: "
                    f"{'; '.join(said)}: the kit corrupted its own data, so its figures are "
                    "suspect; "
                    "`pglab show RUN_ID` prints the conditions"
                ),
            )
        ]
        if said
        else []
    )
    skipped = run.metrics.get("delivery_skipped_pct")
    if skipped is not None and skipped > SKIPPED_PCT:
        out.append(
            Notice(
                "skipped",
                run.label,
                run.id,
                (
                    f"Delivery skipped {skipped:.1f}% of the districts it visited (more than "
                    f"{SKIPPED_PCT:g}%: clause 2.7.4.2): they had no undelivered order left, so "
                    "its "
                    "Deliveries did less work than the specification's; run shorter or with more "
                    "warehouses"
                ),
            )
        )
    return out


def _phase_name(ph: PhaseRow) -> str:
    return f"{ph.name!r}" + (f" #{ph.iteration}" if ph.iteration > 1 else "")


def _phase_drift(progress: Table | None) -> steady.Drift | None:
    """A significant trend of at least RUN_DRIFT_PCT over the steady part of a phase."""
    if progress is None or "tps" not in progress.columns:
        return None
    i = progress.columns.index("tps")
    tps = [float(r[i]) for r in progress.rows if r[i] is not None]
    if len(tps) < 20:  # as the executor: MSER needs a few 5 s batches
        return None
    trend = steady.drift(tps[steady.steady_start(tps) :])
    if trend is None or not trend.significant or abs(trend.change_pct) < RUN_DRIFT_PCT:
        return None
    return trend


def _writes(run: StoredRun, ph: PhaseRow, series: Series, seconds: float) -> bool:
    """Whether a phase writes, judged from what it runs (``campaign.writes``); when its text
    cannot say, or says it reads but its WAL says otherwise (a SELECT of a function that
    writes), from the WAL it made."""
    spec = next((s for s in run.spec.get("phases") or [] if s.get("name") == ph.name), None)
    said = phase_writes(spec) if spec else None
    custom = (
        spec is not None
        and not spec.get("kit")
        and any(s.get("path") for s in spec.get("scripts") or [])
    )
    if said is not None and (said or not custom):
        return said
    stored = series.get(str(ph.idx))
    figures = pg_stats.summarize(tables_of(stored), max(seconds, 1e-3)) if stored else {}
    return figures.get("wal_mb_s", 0.0) > WAL_WRITES_MB_S


def _short(run: StoredRun, phases: list[PhaseRow], series: Series) -> list[Notice]:
    timeout = checkpoint_timeout_s(run)
    for ph in phases:
        seconds = float(ph.elapsed_s or 0)
        stored = series.get(str(ph.idx), {})
        if OPERATION_KIND in stored:  # a maintenance operation: no TPS a checkpoint sways
            continue
        if seconds < 2 * timeout and _writes(run, ph, series, seconds):
            return [
                Notice(
                    "short",
                    run.label,
                    run.id,
                    (
                        f"write phase {_phase_name(ph)} lasted {seconds:.0f} s, less than two "
                        f"checkpoint cycles (checkpoint_timeout {timeout:.0f} s): its TPS "
                        "depends on "
                        f"whether a checkpoint fell inside; measure ≥ {2 * timeout:.0f} s"
                    ),
                )
            ]
    return []


def notices_of(
    runs: Sequence[RunRow],
    baseline: str | None = None,
    effect_pct: float = DEFAULT_EFFECT_PCT,
    verbose: bool = False,
    rows: list[points.PointRow] | None = None,
) -> list[Notice]:
    """A campaign's warnings from its runs (StoredRuns, or listing rows for fewer checks) in
    stored order: per-run warnings merged per point, then point and campaign ones; with a
    ``baseline`` variant, the comparisons that could not tell (``unresolved``). A kind that
    concerns several points is said once for them all (``verbose``: once per point). ``rows``:
    the campaign's point rows when the caller has them (``points.point_rows`` of the same runs,
    baseline and effect), so that its comparisons are not judged twice."""
    labels = list(dict.fromkeys(r.label for r in runs))
    per_point: dict[tuple[NoticeKind, str], list[Notice]] = {}
    out: list[Notice] = []
    for r in runs:
        for n in run_notices(r):
            if n.kind == "failed":
                out.append(n)
            else:
                per_point.setdefault((n.kind, r.label), []).append(n)
    n_runs = {lb: sum(1 for r in runs if r.label == lb and r.ok) for lb in labels}
    merged: dict[NoticeKind, list[Notice]] = {}
    for (kind, label), found in per_point.items():
        note = found[0]
        if len(found) > 1 or n_runs[label] > 1:
            note = Notice(
                kind,
                label,
                found[0].run_id if len(found) == 1 else None,
                f"{found[0].message} ({len(found)} of {n_runs[label]} runs)",
            )
        merged.setdefault(kind, []).append(note)
    for kind, found in merged.items():
        if len(found) == len(labels) > 1 and kind in GROUPED:
            out.append(
                Notice(kind, None, None, f"every point — e.g. {found[0].point}: {found[0].message}")
            )
        else:
            out += found
    if rows is None:
        rows = points.point_rows(runs, baseline, effect_pct)
    figure = points.figure_of(runs).replace("tps", "TPS")  # MB/s, QphH: what the CV is of
    for pt in rows:
        if pt.unstable and pt.cv_pct is not None:
            out.append(
                Notice(
                    "unstable",
                    pt.point,
                    None,
                    (
                        f"{figure} varies by {pt.cv_pct:.1f}% (CV over {pt.ok_runs} "
                        f"repeats, above {UNSTABLE_CV_PCT:.0f}%): differences smaller than "
                        "that are noise; look for drift, a client-bound pgbench or a noisy machine"
                    ),
                )
            )
    out += _repeat_drift(runs)
    out += _hosts(runs)
    out += [Notice("differs", point, None, text) for point, text in comparable.unlike(runs, rows)]
    out += _unresolved(rows)
    if not verbose:
        out = _grouped(out, len(labels), {pt.point: pt.cv_pct for pt in rows})
    return sorted(out, key=lambda n: KINDS.index(n.kind))


def _grouped(notices: list[Notice], n_points: int, cv: dict[str, float | None]) -> list[Notice]:
    """One warning per kind for the points it concerns ("unstable: 4 of 6 points, CV
    10.5–18.4%: …"), where a kind concerns two or more; failed runs and warnings about the
    whole campaign stay as they are."""
    by_kind: dict[NoticeKind, list[Notice]] = {}
    for n in notices:
        if n.point is not None and n.kind != "failed":
            by_kind.setdefault(n.kind, []).append(n)
    out = [n for n in notices if n.point is None or n.kind == "failed"]
    for kind, found in by_kind.items():
        if len({n.point for n in found}) < 2:
            out += found
            continue
        names = tuple(dict.fromkeys(n.point for n in found if n.point is not None))
        listed = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        head = f"{len(names)} of {n_points} points"
        values = [v for name in names if (v := cv.get(name)) is not None]
        if kind == "unstable" and values:
            text = (
                f"{head}, CV {min(values):.1f}–{max(values):.1f}% (above "
                f"{UNSTABLE_CV_PCT:.0f}%): differences smaller than that are "
                f"noise; look for drift, a client-bound pgbench or a noisy machine "
                f"({listed})"
            )
        else:
            text = f"{head} ({listed}); e.g. {found[0].point}: {found[0].message}"
        out.append(Notice(kind, None, None, text, names))
    return out


def _unresolved(rows: list[points.PointRow]) -> list[Notice]:
    """One warning for the comparisons judged "?": the runs could not have found the effect of
    interest. Its words are the first one's reason, and the most runs per point any needs."""
    compared = [pt.comparison for pt in rows if pt.comparison is not None]
    unclear = [
        (pt.point, pt.comparison)
        for pt in rows
        if pt.comparison is not None and pt.comparison.verdict == "?"
    ]
    if not unclear:
        return []
    first_point, first = unclear[0]
    if len(unclear) == 1:
        return [Notice("unresolved", first_point, None, f"no verdict (?): {first.reason}")]
    needs = [c.runs_needed for _, c in unclear]
    most = (
        f"; {max(n for n in needs if n is not None)} runs per point resolve all of them"
        if all(n is not None for n in needs)
        else ""
    )
    return [
        Notice(
            "unresolved",
            None,
            None,
            (
                f"{len(unclear)} of {len(compared)} comparisons have no verdict (?): the runs "
                "could "
                f"not have found ±{first.effect_pct:g}%; e.g. {first_point}: {first.reason}"
                f"{most}"
            ),
        )
    ]


def host_of(run: RunRow) -> str | None:
    """The machine a run ran on: its fleet worker's name, else its host name (None: a listing
    row, without a fingerprint)."""
    fp = getattr(run, "fingerprint", None) or {}
    return fp.get("fleet_worker") or fp.get("hostname")


def _hosts(runs: Sequence[RunRow]) -> list[Notice]:
    """Runs of different machines pooled into a point's figures, or compared at one matrix
    coordinate (a fleet keeps each coordinate on one host: this says when that did not hold)."""
    out = []
    by_point: dict[str, set[str]] = {}
    by_coord: dict[str, set[str]] = {}
    by_round: dict[tuple[str, int], set[str]] = {}
    in_round: dict[tuple[str, int], int] = {}
    for r in runs:
        host = host_of(r)
        if r.ok and host is not None:
            by_point.setdefault(r.label, set()).add(host)
            coord = " ".join(f"{k.removeprefix('settings.')}={v}" for k, v in r.axes.items())
            by_coord.setdefault(coord or "every point", set()).add(host)
            by_round.setdefault((coord, r.repeat), set()).add(host)
            in_round[coord, r.repeat] = in_round.get((coord, r.repeat), 0) + 1
    machines = sorted(set().union(*by_point.values())) if by_point else []
    spread = any(len(h) > 1 for h in by_coord.values())  # a coordinate's rounds on several
    blocks = all(n > 1 for n in in_round.values())  # every round compares its points
    if spread and blocks and all(len(h) == 1 for h in by_round.values()):
        return [
            Notice(
                "hosts",
                None,
                None,
                (
                    f"rounds ran on {len(machines)} machines ({', '.join(machines)}), each "
                    "round on one: "
                    "comparisons are made within rounds, where the machines' difference cancels; a "
                    "point's median and CI pool the machines"
                ),
            )
        ]
    for label, hosts in by_point.items():
        if len(hosts) > 1:
            out.append(
                Notice(
                    "hosts",
                    label,
                    None,
                    (
                        f"its runs ran on {len(hosts)} machines ({', '.join(sorted(hosts))}): its "
                        "median and CI pool machines that may differ"
                    ),
                )
            )
    mixed = sorted(c for c, hosts in by_coord.items() if len(hosts) > 1)
    if mixed and not out:
        out.append(
            Notice(
                "hosts",
                None,
                None,
                (
                    f"the points compared at {', '.join(mixed)} ran on different machines: their "
                    "difference includes the machines'"
                ),
            )
        )
    return out


def _repeat_drift(runs: Sequence[RunRow]) -> list[Notice]:
    """A trend across a point's repeats (in run order), and over the whole campaign: each ok
    run's TPS relative to its point's median, in run order (a machine warming up, a disk
    filling, a dataset that grows because it is never reset)."""
    out = []
    by_point: dict[str, list[tuple[int, float]]] = {}
    for r in runs:  # each run's figure: its TPS, or the MB/s, QphH... its kind stores instead
        if r.ok and (v := r.tps or workloads.figure_value(r.metrics)):
            by_point.setdefault(r.label, []).append((r.id, float(v)))
    relative: list[tuple[int, float]] = []
    for label, values in by_point.items():
        values.sort()
        tps = [v for _, v in values]
        trend = steady.drift(tps)
        if trend is not None and trend.significant:
            out.append(
                Notice(
                    "drifting",
                    label,
                    None,
                    (
                        f"TPS drifted {trend.change_pct:+.1f}% over its {len(tps)} repeats "
                        f"(p={trend.p_value:.2g}): the repeats are not independent; reset the data "
                        "set per run, interleave the points, or look at what changes between runs"
                    ),
                )
            )
        med = statistics.median(tps)
        relative += [(rid, v / med) for rid, v in values]
    relative.sort()
    if len(by_point) > 1 and len(relative) >= 6:
        trend = steady.drift([v for _, v in relative])
        if trend is not None and trend.significant:
            out.append(
                Notice(
                    "drifting",
                    None,
                    None,
                    (
                        f"TPS relative to each point's median drifted {trend.change_pct:+.1f}% "
                        "over "
                        f"the campaign's {len(relative)} runs (p={trend.p_value:.2g}): later runs "
                        "are faster or slower whatever the point; interleaved order cancels it "
                        "between points, sequential order does not"
                    ),
                )
            )
    return out


def campaign_notices(
    store: Store,
    campaign_name: str,
    runs: Sequence[StoredRun | None] | None = None,
    verbose: bool = False,
    rows: list[points.PointRow] | None = None,
) -> list[Notice]:
    """The warnings about a stored campaign, most serious first (``verbose``: one per point
    rather than one per kind). ``runs``: its StoredRuns when the caller has them already (else
    they are read here)."""
    camp = store.get_campaign(campaign_name)
    if camp is None:
        raise LabError(
            f"no campaign {campaign_name!r} in the store",
            hint="`pglab ls --campaigns` lists campaigns",
        )
    if runs is None:
        runs = [store.get_run(r.id) for r in store.list_runs(camp["name"])]
    if rows is None:
        rows = points.campaign_rows([r for r in runs if r is not None], camp)
    return notices_of(
        [r for r in runs if r is not None],
        points.baseline_of(camp),
        points.effect_of(camp),
        verbose,
        rows,
    )
