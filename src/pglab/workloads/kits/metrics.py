"""A pgbench workload kit's figures of a run (``kit = "tpcc"``, ``"ycsb"``, ``"tpce"``):
computed as it is stored, from pgbench's per-script counts and the kit's own tables
(``load.COUNTERS_TABLE``, ``load.CONSISTENCY_TABLE``)."""

from __future__ import annotations

import statistics

from pglab.campaign.spec import RunSpec
from pglab.metric_units import MetricKey
from pglab.records import PhaseResult
from pglab.workloads.kits.load import CONSISTENCY_TABLE, COUNTERS_TABLE
from pglab.workloads.kits.work import KitWork
from pglab.workloads.kits.work.kits import KITS, script_stem
from pglab.workloads.tpch.work import TpchWork


def kit_metrics(run: RunSpec, phases: list[PhaseResult]) -> dict[MetricKey, float]:
    """A workload kit's figures per phase (mean over its iterations) and over the measured
    phases: the headline's committed transactions per minute (TPC-C's NOPM: the orders written
    during the pgbench run, from the kit's counters, over pgbench's measured time; from
    pgbench's per-script count where a phase has no counters, as before they existed), the same
    from pgbench's per-script count (``nopm_pgbench``: it may lose a few to pgbench's counter
    race between threads), all transactions per minute (TPM), the share of the headline's
    transactions that rolled back by design (%), the share of Delivery's districts skipped
    (``delivery_skipped_pct``), and the consistency conditions broken after the phase
    (``load.CONSISTENCY_TABLE``)."""
    kit_of = {ph.name: ph.work.kit for ph in run.phases if isinstance(ph.work, KitWork | TpchWork)}
    by_name: dict[str, list[dict[str, float]]] = {}
    measured: list[dict[str, float]] = []
    for ph in phases:
        kit = kit_of.get(ph.name)
        if kit is None:
            continue
        figs = _tpce_figures(ph) if kit == "tpce" else _kit_figures(KITS[kit].headline, ph)
        by_name.setdefault(ph.name, []).append(figs)
        if ph.measured:
            measured.append(figs)
    out: dict[MetricKey, float] = {}
    for name, items in by_name.items():
        for key in items[0]:
            out[MetricKey(key, name)] = statistics.fmean(f[key] for f in items)
    for key in measured[0] if measured else ():
        mean = statistics.fmean(f[key] for f in measured)
        out[MetricKey(key)] = max(f[key] for f in measured) if key == "inconsistent" else mean
    return out


def _kit_figures(headline: str | None, ph: PhaseResult) -> dict[str, float]:
    by_stem = {script_stem(s.name): s for s in ph.report.scripts}
    head = by_stem.get(headline) if headline else None
    rolled = by_stem.get(f"{headline}_rollback")
    figs = {"tpm": ph.report.tps * 60} if headline else {}
    if head is not None:
        figs["nopm"] = figs["nopm_pgbench"] = (head.tps or 0.0) * 60
        tried = head.transactions + (rolled.transactions if rolled else 0)
        if tried:
            figs["rollback_pct"] = 100 * (rolled.transactions if rolled else 0) / tried
    counted = _counted(ph)
    minutes = ph.report.transactions / ph.report.tps / 60 if ph.report.tps > 0 else 0.0
    if "orders" in counted and minutes > 0:  # NOPM from the orders written
        figs["nopm"] = counted["orders"] / minutes
    delivery = by_stem.get("delivery")
    if "delivery_skips" in counted and delivery is not None and delivery.transactions:
        districts = 10 * delivery.transactions  # each Delivery delivers or skips ten
        figs["delivery_skipped_pct"] = 100 * counted["delivery_skips"] / districts
    check = ph.tables.get(CONSISTENCY_TABLE)
    if check is not None:
        figs["inconsistent"] = float(sum(1 for row in check["rows"] if row[2]))
    return figs


def _tpce_figures(ph: PhaseResult) -> dict[str, float]:
    """The TPC-E-like kit's figures of a phase: ``tpse`` (tpsE-like: the trades completed during
    pgbench's run, from the brokers' B_NUM_TRADES read just before and after it, over pgbench's
    measured time; from pgbench's count of Trade-Results that found a trade where a phase has no
    counters), ``tpse_pgbench`` (pgbench's per-script TPS of Trade-Result, those that found the
    market's queue empty included), the share of Trade-Orders rolled back by design (%, about
    1), the share of Trade-Results that found the queue empty (``results_idle_pct``), and the
    consistency conditions broken after the phase."""
    by_stem = {script_stem(s.name): s for s in ph.report.scripts}
    figs: dict[str, float] = {}
    result = by_stem.get("trade_result")
    ordered, rolled = by_stem.get("trade_order"), by_stem.get("trade_order_rollback")
    seconds = ph.report.transactions / ph.report.tps if ph.report.tps > 0 else 0.0
    counted = _counted(ph)
    if result is not None:
        figs["tpse"] = figs["tpse_pgbench"] = result.tps or 0.0
        if "results_idle" in counted and result.transactions:
            figs["results_idle_pct"] = 100 * counted["results_idle"] / result.transactions
    if "trades" in counted and seconds > 0:
        figs["tpse"] = counted["trades"] / seconds
    tried = (ordered.transactions if ordered else 0) + (rolled.transactions if rolled else 0)
    if tried:
        figs["rollback_pct"] = 100 * (rolled.transactions if rolled else 0) / tried
    check = ph.tables.get(CONSISTENCY_TABLE)
    if check is not None:
        figs["inconsistent"] = float(sum(1 for row in check["rows"] if row[2]))
    return figs


def _counted(ph: PhaseResult) -> dict[str, int]:
    """What a kit counted during the phase's pgbench run (``load.COUNTERS_TABLE``): each
    counter's increase."""
    table = ph.tables.get(COUNTERS_TABLE)
    return {str(r[0]): int(r[2]) - int(r[1]) for r in table["rows"]} if table else {}
