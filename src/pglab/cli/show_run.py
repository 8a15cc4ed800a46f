"""``pglab show RUN``: one run's summary, environment, phases and per-script table."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from pglab.analysis import (
    environment,
    scripts,
    tidy,
)
from pglab.analysis.kit_tables import lines as kit_lines
from pglab.cli import fmt
from pglab.cli import profiles as profile_view
from pglab.cli.common import console
from pglab.cli.pacing_view import print_run_responses
from pglab.fingerprints import Fingerprint
from pglab.postgres import build
from pglab.records import reason_of
from pglab.rows import PhaseRow, StoredRun
from pglab.telemetry import summary as telemetry_summary


def print_run(run: StoredRun) -> None:
    fp = run.fingerprint
    console.print(
        f"[bold]run {run.id}[/] of campaign {escape(run.campaign)}: {escape(run.label)} "
        f"repeat {run.repeat} — {run.status}"
        + (f": {escape(reason_of(run.error))}" if not run.ok else "")
    )
    if run.error:
        console.print(f"[red]{escape(run.error)}[/]")
    _print_environment(fp)
    console.print(_phases_table(run))
    for ph in run.phases:
        rate = tidy.sampling_rate(ph)
        if rate is None:
            continue
        pcts = ", ".join(
            f"p{q:g} {fmt.short(v)} ({fmt.short(lo)}–{fmt.short(hi)})"
            for q, v, lo, hi in scripts.sampled_percentiles(run, ph)
        )
        console.print(
            f"latency of {ph.name} {ph.iteration}: its log kept a sample of {rate:.4g} "
            "of the transactions (sampling_rate); percentiles in ms from the sample, "
            f"with their 95% intervals: {pcts or 'none logged'}. TPS, counts and "
            "pgbench's averages are of every transaction",
            markup=False,
            soft_wrap=True,
        )
    print_scripts(run)
    print_run_responses(run)  # paced terminals: each phase's response times by type
    metrics = run.metrics
    if metrics:
        console.print(
            "metrics: " + ", ".join(f"{k} = {fmt.short(v)}" for k, v in sorted(metrics.items()))
        )
    timings = run.timings
    if timings:
        console.print("timings: " + ", ".join(f"{k} = {v:.2f}" for k, v in sorted(timings.items())))
    for ph in run.phases:
        stored = run.series.get(str(ph.idx), {})
        summary = telemetry_summary.phase_summary(stored, ph.elapsed_s)
        text = telemetry_summary.lines(summary, ph.client)
        text += kit_lines(stored)
        if text:
            console.print(f"[bold]telemetry of {escape(ph.name)} {ph.iteration}[/]")
            for line in text:
                console.print(f"  {line}", markup=False, soft_wrap=True)
    profile_view.print_summary(run)
    settings = fp.get("settings") or {}
    changed = {k: v for k, v in settings.items() if v.get("source") == "configuration file"}
    if changed:
        console.print(
            "non-default settings from the configuration: "
            + ", ".join(f"{k}={v.get('shown', v['setting'])}" for k, v in sorted(changed.items())),
            markup=False,
        )
    chosen = run.spec.get("lab_settings") or {}
    if chosen:
        console.print(
            "of which pglab chose (the campaign leaves them to the default, too low for the "
            "run): " + ", ".join(f"{k}={v}" for k, v in sorted(chosen.items())),
            markup=False,
        )


def _print_environment(fp: Fingerprint) -> None:
    """The server, the load generator and the machine a run had, and where its data lay: the
    facts the report's environment table shows (``analysis.environment``), a line each."""
    made = build.facts(fp)
    console.print("[bold]environment[/]")
    for name, text in environment.facts(fp, builds=[made] if made else []):
        console.print(f"  {name}: {text}", markup=False, soft_wrap=True)


def _phases_table(run: StoredRun) -> Table:
    """A run's phases: iterations, each one's figure under its own name (TPS, MB/s of
    operations, QphH of a TPC-H-like power run...; phases of several: a "figure" column, each
    value with its name), counts and latencies."""
    table = Table(title="phases")
    figures = list(dict.fromkeys(ph.figure for ph in run.phases)) or ["tps"]
    for col in (
        "phase",
        "it",
        "measured",
        figures[0] if len(figures) == 1 else "figure",
        "tx",
        "failed",
        "lat avg ms",
        "lat sd ms",
        "conn ms",
    ):
        table.add_column(col, justify="right" if col not in ("phase",) else "left")
    for ph in run.phases:
        table.add_row(
            ph.name,
            str(ph.iteration),
            "yes" if ph.measured else "no",
            _phase_figure(ph, named=len(figures) > 1),
            str(ph.transactions),
            str(ph.failed or 0),
            fmt.num(ph.latency_avg_ms),
            fmt.num(ph.latency_stddev_ms),
            fmt.num(ph.initial_connection_ms),
        )
    return table


def _phase_figure(ph: PhaseRow, named: bool) -> str:
    """A phase's figure as its row shows it (``named``: followed by its name)."""
    value = ph.tps if ph.figure == "tps" else ph.value  # a stored NaN: "–"
    if value is None:
        return "–"
    return f"{value:,.1f} {ph.figure}" if named else f"{value:,.1f}"


def _count(v: int | None) -> str:
    return "–" if v is None else f"{v:,}"


def _script_name(name: str) -> str:
    """A script as pgbench names it, a file by its name only (the path is in the spec)."""
    return name if name.startswith("<") else name.rsplit("/", 1)[-1]


def _script_percentile_columns(
    rows: list[scripts.ScriptRow], pcts: dict[int, dict[float, float]]
) -> list[fmt.Column]:
    """p50, p95 and p99 of each script's transactions (from the per-transaction log), when it
    was kept."""
    if not pcts:
        return []
    return [
        (f"p{q:g} ms", "right", [fmt.num(pcts.get(r.number, {}).get(q)) for r in rows])
        for q in scripts.SCRIPT_PERCENTILES
    ]


def print_scripts(run: StoredRun) -> None:
    """Per phase: its failures and retries in a line, its scripts (when several) as pgbench
    reported them, and each script's statements (pgbench -r), the slowest first."""
    for ph in run.phases:
        found = scripts.failures(ph)
        if found is not None:
            said = scripts.describe_failures(found)
            console.print(f"failures of {ph.name} {ph.iteration}: {said}", markup=False)
        rows = scripts.phase_scripts(ph)
        if len(rows) > 1:
            retries = any(r.retried is not None for r in rows)
            columns: list[fmt.Column] = [
                ("script", "left", [f"{r.number} {_script_name(r.script)}" for r in rows]),
                (
                    "weight",
                    "right",
                    [f"{_count(r.weight)} ({fmt.short(r.target_pct)}%)" for r in rows],
                ),
                ("share %", "right", [fmt.short(r.share_pct) for r in rows]),
                ("tps", "right", [fmt.tps(r.tps) for r in rows]),
                ("failed", "right", [_count(r.failed) for r in rows]),
                *(("retried", "right", [_count(r.retried) for r in rows]),) * retries,
                ("lat avg ms", "right", [fmt.num(r.latency_avg_ms) for r in rows]),
                ("lat sd ms", "right", [fmt.num(r.latency_stddev_ms) for r in rows]),
                *_script_percentile_columns(rows, scripts.script_percentiles(run, ph)),
            ]
            title = f"scripts of {ph.name} {ph.iteration}"
            console.print(fmt.table(title, columns, console.width))
        for r in rows:
            if not r.statements:
                continue
            ordered = scripts.slowest_first(r.statements)
            cols: list[fmt.Column] = [
                ("ms", "right", [f"{st.latency_ms:.3f}" for st in ordered]),
                *(("failures", "right", [_count(st.failures) for st in ordered]),)
                * any(st.failures is not None for st in ordered),
                *(("retries", "right", [_count(st.retries) for st in ordered]),)
                * any(st.retries is not None for st in ordered),
                ("statement (slowest first)", "left", [st.command for st in ordered]),
            ]
            where = f" of script {r.number} {_script_name(r.script)}" if len(rows) > 1 else ""
            console.print(
                fmt.table(f"statements of {ph.name} {ph.iteration}{where}", cols, console.width)
            )
