"""Points of a campaign from its stored runs: each point's TPS summary over its repeats and, when
the campaign has several variants, its comparison with the baseline variant's point at the same
matrix coordinates. Pure functions over `Store.list_runs` rows; the CLI, `compare` and the
report all read points from here."""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

from pglab.analysis import stats as analysis
from pglab.analysis import verdicts


def baseline_of(campaign: dict[str, Any] | None) -> str | None:
    """The first variant of a campaign with several variants (the baseline), else None."""
    variants = list(((campaign or {}).get("spec") or {}).get("variants") or {})
    return variants[0] if len(variants) > 1 else None


def effect_of(campaign: dict[str, Any] | None) -> float:
    """The campaign's effect of interest in % (``[analysis] effect``), else the default: what a
    "~" verdict must have been able to find."""
    analysis_table = ((campaign or {}).get("spec") or {}).get("analysis") or {}
    return float(analysis_table.get("effect", verdicts.DEFAULT_EFFECT_PCT))


MIN_CI_REPEATS = 3  # fewer: the table shows min–max only

# run metrics that are not derived ones (shown as their own columns)
_BASE_METRICS = ("tps", "tps_steady", "failed", "latency_avg_ms")


def derived_names(runs: list[dict[str, Any]]) -> list[str]:
    names = {
        k
        for r in runs
        for k in (r.get("metrics") or {})
        if k not in _BASE_METRICS and not k.startswith("phase.")
    }
    return sorted(names)


def point_rows(
    runs: list[dict[str, Any]],
    baseline: str | None = None,
    effect_pct: float = verdicts.DEFAULT_EFFECT_PCT,
) -> list[dict[str, Any]]:
    points: dict[str, dict[str, Any]] = {}
    derived = derived_names(runs)
    for r in runs:
        label, variant = r["label"], r["variant"]
        coords = " ".join(f"{k}={v}" for k, v in (r.get("axes") or {}).items())
        pt = points.setdefault(
            label,
            {"point": label, "variant": variant, "coords": coords, "axes": r.get("axes") or {},
             "runs": 0, "failed": 0, "tps": [], "derived": {}},
        )  # fmt: skip
        pt["runs"] += 1
        if r["status"] == "ok" and r.get("tps") is not None:
            pt["tps"].append(r["tps"])
            for name in derived:
                if (r.get("metrics") or {}).get(name) is not None:
                    pt["derived"].setdefault(name, []).append(r["metrics"][name])
        elif r["status"] != "ok":
            pt["failed"] += 1
    rows = []
    for pt in points.values():
        tps = pt["tps"]
        pt["derived"] = {k: statistics.median(v) for k, v in pt["derived"].items()}
        summary = analysis.summarize_point(tps) if tps else None
        pt.update(
            tps_median=summary.median if summary else None,
            tps_min=min(tps) if tps else None,
            tps_max=max(tps) if tps else None,
            cv_pct=summary.cv_pct if summary else None,
            # a t interval from 2 values is ±6.4 standard deviations: min–max says more
            ci=(summary.ci_low, summary.ci_high)
            if summary and summary.n >= MIN_CI_REPEATS and summary.ci_low is not None
            else None,
            unstable=bool(summary and summary.unstable),
        )
        rows.append(pt)
    _compare_to_baseline(rows, baseline, effect_pct)
    for pt in rows:
        del pt["tps"]
    return rows


def _compare_to_baseline(rows: list[dict[str, Any]], baseline: str | None, effect: float) -> None:
    """Each point of another variant against the baseline variant's point at the same matrix
    coordinates: Δ% with a 95% CI and a verdict, Holm-corrected over the campaign."""
    if baseline is None:
        return
    base = {pt["coords"]: pt["tps"] for pt in rows if pt["variant"] == baseline}
    pairs = [
        pt for pt in rows if pt["variant"] != baseline and base.get(pt["coords"]) and pt["tps"]
    ]
    found = verdicts.compare_family([(base[pt["coords"]], pt["tps"]) for pt in pairs], effect)
    for pt, c in zip(pairs, found, strict=True):
        pt["comparison"] = c


# -- design: can the planned repeats reach a verdict? ----------------------------------------


def noise_before(
    runs: list[dict[str, Any]], campaign: str, point_keys: set[str]
) -> tuple[float, str]:
    """The run-to-run noise to expect (SD of log TPS over a point's repeats, in %, ≈ CV) and
    where it comes from: the points of this campaign already stored, else the same points
    stored by other campaigns, else every point in the store, else ``verdicts.DEFAULT_CV_PCT``.
    Only points with 3 or more ok runs count; the median over them is taken."""
    by_point: dict[tuple[str, str], list[float]] = {}
    for r in runs:
        if r["status"] == "ok" and r.get("tps"):
            by_point.setdefault((r["campaign"], r["point_key"]), []).append(float(r["tps"]))
    noise = {k: float(np.std(np.log(v), ddof=1) * 100) for k, v in by_point.items() if len(v) >= 3}
    for where, keep in (
        ("this campaign's", lambda k: k[0] == campaign),
        ("the same points' in other campaigns", lambda k: k[1] in point_keys),
        ("the stored campaigns'", lambda k: True),
    ):
        found = [v for k, v in noise.items() if keep(k)]
        if found:
            return statistics.median(found), f"median of {len(found)} point(s) of {where} runs"
    return verdicts.DEFAULT_CV_PCT, "assumed: no runs stored to measure it on"


def design_check(plan: Any, stored_runs: list[dict[str, Any]]) -> verdicts.Design | None:
    """Whether the plan's repeats can resolve its comparisons (every point of a variant against
    the first variant's at the same matrix coordinates) on the campaign's effect of interest;
    None for a campaign with one variant (nothing is compared)."""
    camp = plan.campaign
    if len(camp.variants) < 2:
        return None
    baseline = camp.variants[0].name
    comparisons = sum(1 for pt in plan.points if pt.variant != baseline)
    noise, source = noise_before(stored_runs, camp.name, {pt.point_key for pt in plan.points})
    return verdicts.design(camp.repeats, comparisons, noise, source, camp.effect_pct)
