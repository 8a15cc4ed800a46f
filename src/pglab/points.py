"""Points of a campaign from its stored runs: each point's TPS summary over its repeats and, when
the campaign has several variants, its comparison with the baseline variant's point at the same
matrix coordinates. Pure functions over `Store.list_runs` rows; the CLI, `compare` and the
report all read points from here."""

from __future__ import annotations

import statistics
from typing import Any

from . import analysis


def baseline_of(campaign: dict[str, Any] | None) -> str | None:
    """The first variant of a campaign with several variants (the baseline), else None."""
    variants = list(((campaign or {}).get("spec") or {}).get("variants") or {})
    return variants[0] if len(variants) > 1 else None


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


def point_rows(runs: list[dict[str, Any]], baseline: str | None = None) -> list[dict[str, Any]]:
    points: dict[str, dict[str, Any]] = {}
    derived = derived_names(runs)
    for r in runs:
        label, variant = r["label"], r["variant"]
        coords = label[len(variant) :].strip() if label.startswith(variant) else label
        pt = points.setdefault(
            label,
            {"point": label, "variant": variant, "coords": coords, "runs": 0, "failed": 0,
             "tps": [], "derived": {}},
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
    _compare_to_baseline(rows, baseline)
    for pt in rows:
        del pt["tps"]
    return rows


def _compare_to_baseline(rows: list[dict[str, Any]], baseline: str | None) -> None:
    """Each point of another variant against the baseline variant's point at the same matrix
    coordinates: Δ% with a 95% CI and a verdict, Holm-corrected over the campaign."""
    if baseline is None:
        return
    base = {pt["coords"]: pt["tps"] for pt in rows if pt["variant"] == baseline}
    pairs = [pt for pt in rows if pt["variant"] != baseline and base.get(pt["coords"])]
    raw = [analysis.compare(base[pt["coords"]], pt["tps"]) if pt["tps"] else None for pt in pairs]
    tested = [c.p_value for c in raw if c is not None and c.p_value is not None]
    adjusted = iter(analysis.holm(tested)) if tested else iter(())
    for pt, c in zip(pairs, raw, strict=True):
        if c is None:
            continue
        pt["comparison"] = c.judged(next(adjusted)) if c.p_value is not None else c
