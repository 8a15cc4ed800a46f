"""The kinds' run figures (``workloads/KIND/metrics.py``) as the tidy table's columns (name,
meaning), in the order ``pglab export`` has always written them and the documentation's table
lists them: ``analysis/tidy.KIT_COLUMNS`` is made from ``COLUMNS``. A new kind's figures are
added here, after the others."""

from __future__ import annotations

_TPCH = 'kit = "tpch"'  # the TPC-H-like kit's, as a campaign file chooses it

COLUMNS: tuple[tuple[str, str], ...] = (
    ("nopm", "a workload kit's headline: TPC-C's New-Orders committed per minute"),
    ("nopm_pgbench", "TPC-C: NOPM from pgbench's per-script count (nopm: orders written)"),
    ("tpse", "the TPC-E-like kit's headline: tpsE-like, trades completed per second"),
    ("tpse_pgbench", "TPC-E: pgbench's Trade-Results per second (empty-queue ones too)"),
    ("results_idle_pct", "TPC-E: Trade-Results that found the market's queue empty, %"),
    ("tpm", "a workload kit's transactions per minute, all types (TPS × 60)"),
    ("rollback_pct", "a kit's headline transactions rolled back by design, % (TPC-C: 1)"),
    ("delivery_skipped_pct", "TPC-C: Delivery's districts skipped (no order to deliver), %"),
    ("inconsistent", "a kit's consistency conditions broken after the run (0: all hold)"),
    ("qps", "sysbench: queries per second"),
    ("errors_s", "sysbench: errors it ignored (and retried) per second"),
    ("reconnects_s", "sysbench: reconnects per second"),
    ("mb_s", "a maintenance operation's headline: MB/s (10⁶ bytes per second)"),
    ("replay.statements_active_s", "a replay's headline: statements per active second"),
    ("geomean_s", f"{_TPCH}: the geometric mean of the power run's query times"),
    ("power", f"{_TPCH}: QphH-like power, 3600 × SF / geomean_s (the run's figure)"),
    (
        "throughput",
        f'{_TPCH}, mode "throughput": QthH-like, streams × queries × 3600 / seconds × SF (the '
        "run's figure)",
    ),
    ("timeouts", f"{_TPCH}: queries stopped by query_timeout (their time its limit)"),
    *((f"q{n:02d}_s", f"{_TPCH}: query {n}'s seconds") for n in range(1, 23)),
)

# the figures that are not a TPS (a run's ``tps`` column then empty), as the ``tps`` column's
# meaning names them: ``workloads.figures_not_tps``'s metrics
NOT_TPS = ("mb_s", "power", "throughput", "replay.statements_active_s")
