"""Warnings from stored results, on hand-made rows with known answers."""

from __future__ import annotations

import sys
from pathlib import Path

from pglab import notices
from pglab.store import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from synthetic_runs import fill  # noqa: E402


def run_row(i: int, tps: float | None, status: str = "ok", error: str | None = None) -> dict:
    return {"id": i, "tps": tps, "status": status, "error": error, "started_at": 1000.0 + i,
            "label": "p", "metrics": {}}  # fmt: skip


def point_row(cv: float | None = 1.0) -> dict:
    return {"point": "p", "cv_pct": cv, "unstable": cv is not None and cv > 10}


def stored_run(scale=10, shared_buffers="16384", script="tpcb-like", duration=60,
               checkpoint_timeout="300", tps=None, pgbench_cpu=20.0) -> dict:  # fmt: skip
    tps = tps or [1000.0] * 30
    return {
        "id": 7, "label": "p", "status": "ok",
        "spec": {"dataset": {"scale": scale},
                 "phases": [{"name": "main", "measured": True, "duration": duration,
                             "scripts": [{"builtin": script}]}]},
        "fingerprint": {"ram_bytes": 1024 * 2**20,
                        "settings": {"shared_buffers": {"setting": shared_buffers},
                                     "checkpoint_timeout": {"setting": checkpoint_timeout}}},
        "phases": [{"idx": 0, "name": "main", "measured": True}],
        "series": {"0": {
            "progress": {"columns": ["t", "tps"], "rows": [[i, v] for i, v in enumerate(tps)]},
            "os.procs": {"columns": ["t", "pgbench_cpu_pct", "postgres_cpu_pct"],
                         "rows": [[i, pgbench_cpu, 50.0] for i in range(len(tps))]},
        }},
    }  # fmt: skip


def kinds(found) -> list[str]:
    return [n.kind for n in found]


def test_a_failed_run_is_named_with_its_first_error_line() -> None:
    runs = [run_row(1, 100.0), run_row(2, None, "failed", "pgbench: killed\nmore")]
    (n,) = notices.point_notices(point_row(), runs)
    assert (n.kind, n.run_id) == ("failed", 2)
    assert n.message == "run 2 failed: pgbench: killed"


def test_unstable_only_above_ten_percent() -> None:
    runs = [run_row(1, 100.0), run_row(2, 100.0)]
    assert kinds(notices.point_notices(point_row(cv=12.0), runs)) == ["unstable"]
    assert notices.point_notices(point_row(cv=9.0), runs) == []


def test_drift_across_repeats() -> None:
    rising = [run_row(i, 100.0 + 10 * i) for i in range(6)]
    (n,) = notices.point_notices(point_row(), rising)
    assert n.kind == "drifting" and "rose by" in n.message
    flat = [run_row(i, 100.0 + (i % 2)) for i in range(6)]
    assert notices.point_notices(point_row(), flat) == []


def test_drift_within_a_run() -> None:
    ramp = [500.0 + 20 * i for i in range(30)]
    assert "drifting" in kinds(notices.run_notices(stored_run(tps=ramp)))
    assert "drifting" not in kinds(notices.run_notices(stored_run()))


def test_client_bound() -> None:
    assert "client-bound" in kinds(notices.run_notices(stored_run(pgbench_cpu=97.0)))
    assert "client-bound" not in kinds(notices.run_notices(stored_run(pgbench_cpu=40.0)))


def test_cache_regime() -> None:
    # scale 1 (~16 MB) in 128 MB of shared_buffers; scale 30 (~470 MB) in 1 GiB of RAM; 200 not
    assert notices.cache_regime(stored_run(scale=1))[0] == "shared_buffers"
    assert notices.cache_regime(stored_run(scale=30))[0] == "os-cache"
    assert notices.cache_regime(stored_run(scale=200))[0] == "disk"
    assert "in-memory" not in kinds(notices.run_notices(stored_run(scale=200)))
    assert "in-memory" in kinds(notices.run_notices(stored_run(scale=1)))


def test_short_write_phases_only() -> None:
    assert "short" in kinds(notices.run_notices(stored_run(duration=60)))
    assert "short" not in kinds(notices.run_notices(stored_run(duration=600)))
    assert "short" not in kinds(
        notices.run_notices(stored_run(duration=60, checkpoint_timeout="30"))
    )
    assert "short" not in kinds(notices.run_notices(stored_run(script="select-only")))


def test_campaign_notices_on_a_stored_campaign(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "r.sqlite")) as store:
        fill(store, "c", clients=(1, 4), repeats=2, seconds=30, failed=1)
        found = notices.campaign_notices(store, "c")
    assert kinds(found)[0] == "failed"  # most important first
    assert "few-repeats" in kinds(found)  # 2 repeats: no verdict
    assert kinds(found).count("short") == 1  # said once for the campaign
    assert all(n.point is None for n in found if n.kind in ("short", "few-repeats"))
