"""``pglab show``'s tables of paced terminals (kit = "tpcc" with ``pacing``): a campaign's
points, each one's median NOPM beside the most its terminals could commit and each transaction
type's 90th percentile response time against clause 5.2.5.3's limit (``analysis/pacing.py``);
a run's phases, each one's response times by type (``pgbench/responses.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import JustifyMethod

from pglab.analysis import pacing
from pglab.cli import fmt
from pglab.cli.common import console
from pglab.pgbench import responses
from pglab.rows import RunRow, StoredRun
from pglab.workloads.kits.work.kits import TRANSACTION_TYPES
from pglab.workloads.kits.work.pacing import RESPONSE_LIMIT_S


def print_paced(runs: Sequence[RunRow], labels: dict[str, str]) -> None:
    found = pacing.paced_points(runs)
    if not found:
        return
    kinds = [k for k in RESPONSE_LIMIT_S if any(k in p.p90_ms for p in found)]
    cols: list[tuple[str, JustifyMethod, list[str]]] = [
        ("point", "left", [labels.get(p.point, p.point) for p in found]),
        ("NOPM", "right", [fmt.short(p.nopm) for p in found]),
        ("bound", "right", [fmt.short(p.bound) if p.bound else "none" for p in found]),
        ("% of bound", "right", [fmt.short(p.of_bound_pct) for p in found]),
        *(
            (
                f"{TRANSACTION_TYPES[k]} p90 ms",
                "right",
                [_p90(p.p90_ms.get(k), RESPONSE_LIMIT_S[k]) for p in found],
            )
            for k in kinds
        ),
    ]
    title = "terminals that think (median; response times without keying and think times)"
    console.print(fmt.table(title, cols, console.width))
    console.print(
        "bound: the most committed New-Orders per minute 10 terminals per warehouse "
        "can make at their keying and think times (12.73 per warehouse at the "
        "specification's, 12.86 with the 1% rolled back); p90 over its limit "
        "(TPC-C clause 5.2.5.3: 5 s) is marked !",
        markup=False,
        soft_wrap=True,
    )


def _p90(ms: float | None, limit_s: float) -> str:
    if ms is None:
        return "–"
    return fmt.num(ms) + (" !" if ms > limit_s * 1000 else "")


def print_run_responses(run: StoredRun) -> None:
    """``pglab show RUN_ID``: each paced phase's response times by type, as stored."""
    for ph in run.phases:
        table = run.series.get(str(ph.idx), {}).get(responses.TABLE)
        if not table or not table["rows"]:
            continue
        rows = [dict(zip(table["columns"], r, strict=True)) for r in table["rows"]]
        cols: list[tuple[str, JustifyMethod, list[str]]] = [
            ("type", "left", [TRANSACTION_TYPES.get(r["type"], r["type"]) for r in rows]),
            ("transactions", "right", [f"{r['transactions']:,}" for r in rows]),
            *(
                (f"{k} ms", "right", [fmt.num(r[f"{k}_ms"]) for r in rows])
                for k in ("p50", "p90", "max")
            ),
            ("p90 limit ms", "right", [f"{r['limit_ms']:,.0f}" for r in rows]),
        ]
        title = (
            f"response times of {ph.name} {ph.iteration} (the server's clock around each "
            "transaction; keying and think times apart)"
        )
        console.print(fmt.table(title, cols, console.width))
