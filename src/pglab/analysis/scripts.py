"""What pgbench said per script and per statement, and about failures and retries, read from
the stored phases: a row per (phase, script) and per statement, for ``pglab show``, ``pglab
export --by script`` / ``--by statement`` and the report.

A phase with several scripts has pgbench's own ``SQL script N`` sections; a phase with one has a
single row made from the phase's figures (its statements from the top-level ``-r`` report), so
that every phase has its rows (``ScriptRow``); a phase's failures and retries are a ``Failures``.
Figures are pgbench's as printed. With several threads pgbench
adds the per-script counts up without a lock, so they can miss a few transactions of the total.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pglab.analysis import tidy
from pglab.analysis.tidy import PERCENTILES, Cell, TidyTable
from pglab.pgbench import latency, sampling
from pglab.records import PgbenchReport, StatementReport
from pglab.rows import PhaseRow, StoredRun

# a run's failed transactions above this share (of the processed and failed ones) is warned of
FAILURES_WARN_PCT = 5.0


@dataclass(frozen=True)
class ScriptRow:
    """One script of one phase iteration, as pgbench reported it."""

    phase: str
    iteration: int
    measured: bool
    number: int
    script: str
    weight: int | None
    target_pct: float | None
    transactions: int | None
    share_pct: float | None
    tps: float | None
    failed: int | None
    serialization_failures: int | None
    deadlock_failures: int | None
    retried: int | None
    retries: int | None
    skipped: int | None
    latency_avg_ms: float | None
    latency_stddev_ms: float | None
    statements: tuple[StatementReport, ...] = ()


SCRIPT_FIGURES = (
    "weight",
    "target_pct",
    "transactions",
    "share_pct",
    "tps",
    "failed",
    "serialization_failures",
    "deadlock_failures",
    "retried",
    "retries",
    "skipped",
    "latency_avg_ms",
    "latency_stddev_ms",
)


def report_of(phase: PhaseRow) -> PgbenchReport:
    """The phase's stored report (its row's TPS and count where the stored report has none:
    ``store/encoding.decode_phase``)."""
    return phase.report


def phase_scripts(phase: PhaseRow, label: str | None = None) -> list[ScriptRow]:
    """The scripts of a stored phase; ``label``: the name of a single script (pgbench's
    ``transaction type`` when not given)."""
    rep = report_of(phase)
    name, iteration, measured = phase.name, phase.iteration, phase.measured
    if rep.scripts:
        return [
            ScriptRow(
                name,
                iteration,
                measured,
                number=s.number,
                script=s.name,
                weight=s.weight,
                target_pct=s.target_pct,
                transactions=s.transactions,
                share_pct=s.share_pct,
                tps=s.tps,
                failed=s.failed,
                serialization_failures=s.serialization_failures,
                deadlock_failures=s.deadlock_failures,
                retried=s.retried,
                retries=s.retries,
                skipped=s.skipped,
                latency_avg_ms=s.latency_avg_ms,
                latency_stddev_ms=s.latency_stddev_ms,
                statements=s.statements,
            )
            for s in rep.scripts
        ]
    return [
        ScriptRow(
            name,
            iteration,
            measured,
            number=1,
            script=label or rep.transaction_type or "?",
            weight=1,
            target_pct=100.0,
            transactions=rep.transactions,
            share_pct=100.0,
            tps=rep.tps,
            failed=rep.failed,
            serialization_failures=rep.serialization_failures,
            deadlock_failures=rep.deadlock_failures,
            retried=rep.retried,
            retries=rep.retries,
            skipped=rep.skipped,
            latency_avg_ms=rep.latency_avg_ms,
            latency_stddev_ms=rep.latency_stddev_ms,
            statements=rep.statements,
        )
    ]


def run_scripts(run: StoredRun, measured_only: bool = True) -> list[ScriptRow]:
    """The scripts of every (measured) phase iteration of a run, in order."""
    return [
        row for ph in run.phases if ph.measured or not measured_only for row in phase_scripts(ph)
    ]


def script_name(name: str) -> str:
    """A script as pgbench names it, a file by its name only (the path is in the spec)."""
    return name if name.startswith("<") else name.rsplit("/", 1)[-1]


def script_figures(
    phases: Iterable[PhaseRow],
) -> dict[tuple[str, str], tuple[float | None, float | None]]:
    """(phase, script) -> (TPS, latency average in ms) of each script of the measured phases
    that ran several, as pgbench reported them, the mean over the phase's iterations (None
    where pgbench printed none). A script is named as ``script_name`` says (its number before
    it when two scripts of a phase share a name): what matches the scripts of two runs."""
    found: dict[tuple[str, str], list[ScriptRow]] = {}
    for ph in phases:
        rows = phase_scripts(ph) if ph.measured else []
        if len(rows) < 2:
            continue
        names = [script_name(r.script) for r in rows]
        for r, name in zip(rows, names, strict=True):
            key = name if names.count(name) == 1 else f"{r.number} {name}"
            found.setdefault((ph.name, key), []).append(r)
    return {
        key: (_mean([r.tps for r in rows]), _mean([r.latency_avg_ms for r in rows]))
        for key, rows in found.items()
    }


def _mean(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def sampled_percentiles(run: StoredRun, phase: PhaseRow) -> list[tuple[float, float, float, float]]:
    """(q, the percentile, the low and high ends of its 95% interval) in ms for a phase whose
    log kept a sample of the transactions: what the sample costs each percentile."""
    hist = tidy.logged_histogram(run, phase.idx)
    if not hist:
        return []
    return [(q, latency.percentile(hist, q), *sampling.interval(hist, q)) for q in PERCENTILES]


SCRIPT_PERCENTILES = (50.0, 95.0, 99.0)


def script_percentiles(run: StoredRun, phase: PhaseRow) -> dict[int, dict[float, float]]:
    """Script number -> {q: latency percentile in ms} over the whole phase, for a phase with
    several scripts whose per-transaction log was kept (``latency_log = "full"``): each
    script's per-second histograms merged, so these are the percentiles of its transactions
    (a TPC-C New-Order's p95 apart from a Payment's). Empty where the log was not kept, and
    for runs stored before pglab kept a histogram per script and second."""
    tab = tidy.phase_table(run, phase.idx, "script_latency")
    cols = tab.columns
    if "histogram" not in cols:
        return {}
    by_script: dict[int, list[latency.Histogram]] = {}
    for row in tab.rows:
        by_script.setdefault(int(row[cols.index("script")]), []).append(
            row[cols.index("histogram")] or ()
        )
    merged = {number: latency.merge(hists) for number, hists in by_script.items()}
    return {
        number: {q: latency.percentile(hist, q) for q in SCRIPT_PERCENTILES}
        for number, hist in merged.items()
        if hist
    }


def slowest_first(statements: tuple[StatementReport, ...]) -> list[StatementReport]:
    """Statements by their average latency, the slowest first (ties: in script order)."""
    return sorted(statements, key=lambda s: (-s.latency_ms, s.number))


@dataclass(frozen=True, slots=True)
class Failures:
    """A phase's failures and retries as pgbench reported them (None where it printed none)."""

    failed: int | None
    failed_pct: float | None  # failed of processed + failed
    serialization: int | None
    deadlock: int | None
    retried: int | None
    retries: int | None
    max_tries: int | None
    latency_limit_ms: float | None
    over_latency_limit: int | None


def failures(phase: PhaseRow) -> Failures | None:
    """A phase's failures and retries, or None when pgbench reported neither failures nor
    retries nor a latency limit."""
    rep = report_of(phase)
    if not (rep.failed or rep.retried or rep.latency_limit_ms is not None):
        return None
    tried = rep.transactions + (rep.failed or 0)
    return Failures(
        failed=rep.failed,
        failed_pct=100.0 * (rep.failed or 0) / tried if tried else None,
        serialization=rep.serialization_failures,
        deadlock=rep.deadlock_failures,
        retried=rep.retried,
        retries=rep.retries,
        max_tries=rep.max_tries,
        latency_limit_ms=rep.latency_limit_ms,
        over_latency_limit=rep.over_latency_limit,
    )


def describe_failures(found: Failures) -> str:
    """``failures`` in one line: "12 failed (1.2%: 10 serialization, 2 deadlock); 40 retried
    (55 retries, max_tries 5); 3 over the 2 ms latency limit"."""
    parts = []
    if found.failed:
        kinds = [
            f"{n:,} {k}"
            for k, n in (("serialization", found.serialization), ("deadlock", found.deadlock))
            if n
        ]
        pct = f"{found.failed_pct:.1f}%" if found.failed_pct is not None else ""
        inside = ": ".join(x for x in (pct, ", ".join(kinds)) if x)
        parts.append(f"{found.failed:,} failed" + (f" ({inside})" if inside else ""))
    if found.retried:
        tries = f", max_tries {found.max_tries}" if found.max_tries else ""
        retries = f"{found.retries:,} retries" if found.retries is not None else ""
        inside = ", ".join(x for x in (retries, tries.lstrip(", ")) if x)
        parts.append(f"{found.retried:,} retried" + (f" ({inside})" if inside else ""))
    if found.latency_limit_ms is not None:
        parts.append(
            f"{found.over_latency_limit or 0:,} over the "
            f"{found.latency_limit_ms:g} ms latency limit"
        )
    return "; ".join(parts) or "no failures"


# -- as tidy tables (pglab export --by script / --by statement) -------------------------------

_RUN = ("run_id", "campaign", "variant", "point", "point_key", "repeat", "status")
_SCRIPT_PCTS = tuple(f"latency_p{q:g}_ms" for q in SCRIPT_PERCENTILES)
SCRIPT_COLUMNS = (
    *_RUN,
    "phase",
    "iteration",
    "script_no",
    "script",
    *SCRIPT_FIGURES,
    *_SCRIPT_PCTS,
)
STATEMENT_COLUMNS = (
    *_RUN,
    "phase",
    "iteration",
    "script_no",
    "script",
    "statement_no",
    "command",
    "latency_ms",
    "failures",
    "retries",
)


def _run_values(run: StoredRun) -> list[Any]:
    return [run.id, run.campaign, run.variant, run.label, run.point_key, run.repeat, run.status]


def _factor_columns(runs: Sequence[StoredRun]) -> tuple[list[str], list[dict[str, Cell]]]:
    """The export's factor columns of the runs (the script mix as ``mix``) and each run's."""
    found = []
    for run in runs:
        f = tidy.factors(run)
        f["mix"] = f.pop("script", None)
        found.append(f)
    names = list(dict.fromkeys(k for f in found for k in f))
    return names, found


def scripts_table(runs: Sequence[StoredRun]) -> TidyTable:
    """A row per (run, measured phase iteration, script): pgbench's figures of the script,
    then the run's factor columns (as ``pglab export`` has them; ``mix``: all its scripts)."""
    names, found = _factor_columns(runs)
    rows = []
    for run, factors in zip(runs, found, strict=True):
        for ph in run.phases:
            pcts = script_percentiles(run, ph) if ph.measured else {}
            for s in phase_scripts(ph) if ph.measured else []:
                mine = pcts.get(s.number, {})
                rows.append(
                    [
                        *_run_values(run),
                        s.phase,
                        s.iteration,
                        s.number,
                        s.script,
                        *(getattr(s, f) for f in SCRIPT_FIGURES),
                        *(mine.get(q) for q in SCRIPT_PERCENTILES),
                        *(factors.get(n) for n in names),
                    ]
                )
    return TidyTable([*SCRIPT_COLUMNS, *names], rows)


def statements_table(runs: Sequence[StoredRun]) -> TidyTable:
    """A row per statement of each script of each measured phase iteration (``-r``), in script
    order, then the run's factor columns."""
    names, found = _factor_columns(runs)
    rows = []
    for run, factors in zip(runs, found, strict=True):
        for s in run_scripts(run):
            for st in s.statements:
                rows.append(
                    [
                        *_run_values(run),
                        s.phase,
                        s.iteration,
                        s.number,
                        s.script,
                        st.number,
                        st.command,
                        st.latency_ms,
                        st.failures,
                        st.retries,
                        *(factors.get(n) for n in names),
                    ]
                )
    return TidyTable([*STATEMENT_COLUMNS, *names], rows)
