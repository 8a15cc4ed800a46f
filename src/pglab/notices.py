"""Warnings about stored results: what makes a number less than it looks.

Kinds (each a :class:`Notice` naming its point and run where it has one):

- ``failed``: a run failed (its error's first line);
- ``unstable``: a point's repeats vary by more than 10% (CV);
- ``few-repeats``: points compared with fewer than ``analysis.MIN_REPEATS`` runs a side get no
  verdict;
- ``drifting``: TPS trends within a run's measured phase (≥ 5% over the phase, p < 0.01), or
  across a point's repeats in the order they ran;
- ``client-bound``: pgbench used most of a core, so the client, not the server, set the pace;
- ``in-memory``: the data set fits in shared_buffers (reads never reach the OS) or in the OS page
  cache (reads never reach the disk) — a storage study then measures no reads;
- ``short``: a write workload measured for less than two checkpoint_timeout cycles, so its TPS
  holds a part of a checkpoint cycle only.

Pure functions over what the store returns (``list_runs`` rows, ``get_run`` dicts);
``campaign_notices`` reads one run per point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import analysis, points

DRIFT_PCT = 5.0
DRIFT_P = 0.01
PGBENCH_MB_PER_SCALE = 15.6  # pgbench_accounts with its index, per scale unit (PostgreSQL 15-18)
WRITE_SCRIPTS = {"tpcb-like", "simple-update"}


ORDER = ("failed", "unstable", "drifting", "client-bound", "few-repeats", "short", "in-memory")


@dataclass(frozen=True)
class Notice:
    kind: str
    point: str | None
    run_id: int | None
    message: str


def campaign_notices(store, name: str) -> list[Notice]:
    """The notices of a stored campaign, points in table order."""
    camp = store.get_campaign(name)
    runs = store.list_runs(name)
    rows = points.point_rows(runs, points.baseline_of(camp))
    out: list[Notice] = []
    by_label: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by_label.setdefault(r["label"], []).append(r)
    for row in rows:
        pt_runs = by_label[row["point"]]
        ok = [r for r in pt_runs if r["status"] == "ok" and r.get("tps") is not None]
        out += point_notices(row, pt_runs)
        if ok:
            out += run_notices(store.get_run(ok[0]["id"]), point=row["point"])
    few = [row["point"] for row in rows if (row.get("comparison") or _NoVerdict).verdict == "?"]
    if few:
        out.append(Notice(
            "few-repeats", None, None,
            f"{len(few)} point(s) compared with fewer than {analysis.MIN_REPEATS} runs a side "
            "have no verdict (Δ% only); run at least 5 repeats to tell a difference from noise",
        ))  # fmt: skip
    return sorted(_dedupe(out), key=lambda n: ORDER.index(n.kind))


def point_notices(row: dict[str, Any], runs: list[dict[str, Any]]) -> list[Notice]:
    """Unstable repeats, drift across repeats, failed runs of one point (a ``point_rows`` row)."""
    out = []
    label = row["point"]
    for r in runs:
        if r["status"] != "ok":
            first = (r.get("error") or "no error recorded").strip().splitlines()[0]
            out.append(Notice("failed", label, r["id"], f"run {r['id']} failed: {first}"))
    if row.get("unstable"):
        out.append(Notice(
            "unstable", label, None,
            f"the repeats vary by {row['cv_pct']:.0f}% (CV above "
            f"{analysis.UNSTABLE_CV_PCT:.0f}%): a single run of this point is not to be trusted",
        ))  # fmt: skip
    ok = sorted((r for r in runs if r["status"] == "ok" and r.get("tps") is not None),
                key=lambda r: r["started_at"] or 0)  # fmt: skip
    trend = analysis.drift([r["tps"] for r in ok])
    if trend and abs(trend.change_pct) >= DRIFT_PCT and trend.p_value < 0.05:
        out.append(Notice(
            "drifting", label, None,
            f"TPS {'rose' if trend.change_pct > 0 else 'fell'} by {abs(trend.change_pct):.0f}% "
            f"from the first repeat to the last (p = {trend.p_value:.3f}): the machine or the "
            "data changed during the campaign",
        ))  # fmt: skip
    return out


def run_notices(run: dict[str, Any], point: str | None = None) -> list[Notice]:
    """Drift within the run, client-bound, in-memory and too-short warnings of a stored run."""
    if run is None or run["status"] != "ok":
        return []
    label = point or run["label"]
    out = []
    phases = {p["idx"]: p for p in run["phases"]}
    for idx, kinds in run["series"].items():
        ph = phases.get(int(idx))
        prog = kinds.get("progress")
        if not ph or not ph["measured"] or not prog or len(prog["rows"]) < 10:
            continue
        col = prog["columns"].index("tps")
        trend = analysis.drift([r[col] for r in prog["rows"]])
        if trend and abs(trend.change_pct) >= DRIFT_PCT and trend.p_value < DRIFT_P:
            out.append(Notice(
                "drifting", label, run["id"],
                f"TPS {'rose' if trend.change_pct > 0 else 'fell'} by "
                f"{abs(trend.change_pct):.0f}% over phase {ph['name']!r} of run {run['id']}: "
                "not yet steady (a longer warm-up or phase would tell)",
            ))  # fmt: skip
            break
    out += _client_bound(run, label)
    out += _regime(run, label)
    out += _short(run, label)
    return out


def cache_regime(run: dict[str, Any]) -> tuple[str, float, float | None, float | None] | None:
    """(regime, data set MB, shared_buffers MB, RAM MB) of a stored run: ``"shared_buffers"``,
    ``"os-cache"`` or ``"disk"``; None when the scale is unknown."""
    scale = ((run.get("spec") or {}).get("dataset") or {}).get("scale")
    if not scale:
        return None
    data_mb = scale * PGBENCH_MB_PER_SCALE
    fp = run.get("fingerprint") or {}
    sb = ((fp.get("settings") or {}).get("shared_buffers") or {}).get("setting")
    sb_mb = int(sb) * 8 / 1024 if sb and str(sb).isdigit() else None
    ram_mb = fp["ram_bytes"] / 2**20 if fp.get("ram_bytes") else None
    if sb_mb is not None and data_mb <= sb_mb * 0.9:
        return "shared_buffers", data_mb, sb_mb, ram_mb
    if ram_mb is not None and data_mb <= ram_mb * 0.5:
        return "os-cache", data_mb, sb_mb, ram_mb
    return "disk", data_mb, sb_mb, ram_mb


def _regime(run: dict[str, Any], label: str) -> list[Notice]:
    regime = cache_regime(run)
    if regime is None or regime[0] == "disk":
        return []
    kind, data_mb, sb_mb, ram_mb = regime
    if kind == "shared_buffers":
        where = f"shared_buffers ({sb_mb:,.0f} MB): reads never leave PostgreSQL"
    else:
        where = f"the OS page cache ({ram_mb:,.0f} MB of RAM): reads never reach the disk"
    return [Notice("in-memory", label, None,
                   f"the data set (~{data_mb:,.0f} MB) fits in {where}; a storage comparison "
                   "measures writes only")]  # fmt: skip


def _client_bound(run: dict[str, Any], label: str) -> list[Notice]:
    from .telemetry.os_stats import CLIENT_BOUND_PCT

    for kinds in run["series"].values():
        procs = kinds.get("os.procs")
        if not procs or not procs["rows"]:
            continue
        col = procs["columns"].index("pgbench_cpu_pct")
        values = [r[col] for r in procs["rows"] if r[col] is not None]
        if values and sum(values) / len(values) > CLIENT_BOUND_PCT:
            return [Notice(
                "client-bound", label, run["id"],
                f"pgbench used {sum(values) / len(values):.0f}% of a core in run {run['id']}: "
                "the client may have set the pace (more pgbench threads, or pgbench on "
                "another machine)",
            )]  # fmt: skip
    return []


def _short(run: dict[str, Any], label: str) -> list[Notice]:
    spec = run.get("spec") or {}
    writes = [
        p
        for p in spec.get("phases") or []
        if p.get("measured")
        and p.get("duration")
        and any(s.get("builtin") in WRITE_SCRIPTS for s in p.get("scripts") or [])
    ]
    if not writes:
        return []
    setting = ((run.get("fingerprint") or {}).get("settings") or {}).get("checkpoint_timeout")
    timeout = float(setting["setting"]) if setting and setting.get("setting") else 300.0
    longest = max(p["duration"] for p in writes)
    if longest >= 2 * timeout:
        return []
    return [Notice(
        "short", label, None,
        f"a write workload measured for {longest} s, less than two checkpoint cycles "
        f"(checkpoint_timeout {timeout:.0f} s): its TPS holds part of a cycle only "
        "(fine for a quick look, not for a storage or checkpoint study)",
    )]  # fmt: skip


class _NoVerdict:
    verdict = None


def _dedupe(notices: list[Notice]) -> list[Notice]:
    """One in-memory / short notice for the campaign when every point has the same one."""
    out, seen = [], set()
    for n in notices:
        key = (n.kind, n.message) if n.kind in ("in-memory", "short") else n
        if key in seen:
            continue
        seen.add(key)
        out.append(n if n.kind not in ("in-memory", "short") else Notice(n.kind, None, None,
                   n.message))  # fmt: skip
    return out
