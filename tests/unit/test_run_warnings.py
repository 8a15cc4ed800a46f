"""Derived metrics and warnings on synthetic stored rows with known answers."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pglab.analysis import run_facts, run_warnings
from pglab.analysis.run_warnings import Notice
from pglab.records import PgbenchReport
from pglab.rows import PhaseRow, StoredRun


def make_run(
    rid: int,
    label: str,
    tps: float | None = 1000.0,
    status: str = "ok",
    *,
    script: str | None = "select-only",
    seconds: float = 60.0,
    scale: int = 100,
    settings: dict[str, Any] | None = None,
    progress: list[float] | None = None,
    pgbench_cpu: float | None = None,
    ram: int = 8 * 2**30,
    error: str | None = None,
) -> dict[str, Any]:
    """A StoredRun as the store returns it, with what derived reads."""
    variant = label.split()[0]
    series: dict[str, Any] = {}
    if progress is not None:
        series["progress"] = {
            "columns": ["t", "tps", "latency_avg_ms", "latency_stddev_ms", "failed"],
            "rows": [[i + 1.0, v, 1.0, 0.1, 0] for i, v in enumerate(progress)],
        }
    if pgbench_cpu is not None:
        series["os.procs"] = {
            "columns": ["t", "pgbench_cpu_pct", "postgres_cpu_pct"],
            "rows": [[float(i), pgbench_cpu, 150.0] for i in range(5)],
        }
    # the matrix coordinates a label shows (what the store keeps as the run's axes)
    axes = {k: int(v) if v.isdigit() else v for k, _, v in
            (tok.partition("=") for tok in label.split() if "=" in tok)}  # fmt: skip
    ok = status == "ok"
    phase = PhaseRow(idx=0, name="main", iteration=1, measured=True, started_at=0.0,
                     elapsed_s=seconds, argv=[], tps=tps, transactions=None, failed=None,
                     latency_avg_ms=None, latency_stddev_ms=None, initial_connection_ms=None,
                     report=PgbenchReport(tps=0.0, transactions=0), output="")  # fmt: skip
    return StoredRun(
        id=rid, campaign="c", run_key=f"{label}/{rid}", point_key=label, variant=variant,
        label=label, repeat=1, status=status, tps=tps if ok else None, started_at=float(rid),
        finished_at=float(rid) + seconds, error=error, metrics={"tps": tps} if ok and tps else {},
        axes=axes,
        spec={
            "axes": [[k, v] for k, v in axes.items()],
            "dataset": {"scale": scale},
            "server": {"settings": sorted((settings or {}).items())},
            "phases": [{"name": "main", "scripts": [{"builtin": script, "path": None}]}],
        },
        fingerprint={"ram_bytes": ram, "settings": {}},
        phases=(phase,) if ok else (),
        series={"0": series} if series else {},
    )  # fmt: skip


def kinds(notices: list[Notice]) -> list[str]:
    return [n.kind for n in notices]


# -- scaling ---------------------------------------------------------------------------------


def test_scaling_efficiency_per_series() -> None:
    rows = []
    rid = 0
    for variant, per_client in (("a", {1: 1000, 2: 2000, 4: 3000}), ("b", {2: 1000, 8: 2000})):
        for c, tps in per_client.items():
            for k in (-10, 0, 10):  # median = tps
                rid += 1
                rows.append(make_run(rid, f"{variant} clients={c} script=x", tps + k))
    rows.append(make_run(99, "a clients=16 script=x", status="failed"))
    rows.append(make_run(98, "a script=y"))  # no clients axis: left out
    out = run_facts.scaling(rows)
    assert list(out) == ["a script=x", "b script=x"]
    a = out["a script=x"]
    assert [p.clients for p in a] == [1, 2, 4]
    assert [p.tps for p in a] == [1000, 2000, 3000]
    assert [p.efficiency for p in a] == pytest.approx([1.0, 1.0, 0.75])
    assert [p.tps_per_client for p in a] == pytest.approx([1000, 1000, 750])
    assert a[0].n == 3 and a[0].ci_low < 1000 < a[0].ci_high
    b = out["b script=x"]  # c_min = 2: 500 tps per client; 8 clients ideal 4,000
    assert [p.efficiency for p in b] == pytest.approx([1.0, 0.5])


def test_scaling_of_a_single_variant_label() -> None:
    rows = [make_run(1, "clients=1", 100.0), make_run(2, "clients=4", 200.0)]
    rows = [replace(r, variant="default") for r in rows]
    out = run_facts.scaling(rows)
    assert list(out) == ["default"] and out["default"][1].efficiency == pytest.approx(0.5)


# -- cache regime ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scale", "settings", "regime"),
    [
        (1, {}, "in shared_buffers"),  # 15 MiB in the default 128 MiB
        (100, {}, "in OS cache"),  # 1.5 GiB in 8 GiB of RAM
        (100, {"shared_buffers": "2GB"}, "in shared_buffers"),
        (1000, {"shared_buffers": "2GB"}, "larger than RAM"),  # 14.6 GiB
    ],
)
def test_cache_regime(scale: int, settings: dict[str, str], regime: str) -> None:
    r = run_facts.cache_regime(make_run(1, "a", scale=scale, settings=settings))
    assert r is not None and r.regime == regime and not r.data_measured
    assert r.data_bytes == scale * 15 * 2**20


def test_cache_regime_prefers_what_the_server_and_the_store_say() -> None:
    run = make_run(1, "a", scale=1, settings={"shared_buffers": "2GB"})
    run.fingerprint["settings"]["shared_buffers"] = {"setting": "1024", "unit": "8kB"}
    run.fingerprint["database_bytes"] = 20 * 2**20
    r = run_facts.cache_regime(run)
    assert r.shared_buffers_bytes == 8 * 2**20 and r.data_bytes == 20 * 2**20
    assert r.data_measured and r.regime == "in OS cache"
    assert "data set 20 MiB, shared_buffers 8 MiB" in r.describe()


def test_cache_regime_reads_the_servers_memory_limit() -> None:
    """[os] memory: the limit counts the page cache and shared_buffers alike, so a data set
    larger than it is neither in shared_buffers (the in-memory warning is off) nor in the OS
    cache, however much RAM the machine has."""
    run = make_run(1, "a", scale=3)  # ~45 MiB, in the default 128 MiB of shared_buffers
    assert kinds(run_warnings.run_notices(run)) == ["in-memory"]
    run.fingerprint["memory_limit"] = {"bytes": 32 * 2**20, "cgroup": "/sys/fs/cgroup/x"}
    r = run_facts.cache_regime(run)
    assert r is not None and r.regime == "larger than its memory limit"
    assert r.describe().endswith(", memory limit 32 MiB: larger than its memory limit")
    assert run_warnings.run_notices(run) == []
    run.fingerprint["memory_limit"]["bytes"] = 4 * 2**30  # above the data set and buffers
    assert run_facts.cache_regime(run).regime == "in shared_buffers"
    big = make_run(1, "a", scale=100)  # 1.5 GiB: in the OS cache of 8 GiB, not of 1 GiB
    big.fingerprint["memory_limit"] = {"bytes": 2**30}
    assert run_facts.cache_regime(big).regime == "larger than its memory limit"
    big.fingerprint["memory_limit"] = {"bytes": 2 * 2**30}
    assert run_facts.cache_regime(big).regime == "in OS cache"


def test_checkpoint_timeout_units() -> None:
    assert run_facts.checkpoint_timeout_s(make_run(1, "a")) == 300
    assert run_facts.checkpoint_timeout_s(make_run(1, "a", settings={"checkpoint_timeout": "30s"}))
    assert run_facts.checkpoint_timeout_s(
        make_run(1, "a", settings={"checkpoint_timeout": "1min"})
    ) == 60  # fmt: skip
    run = make_run(1, "a")
    run.fingerprint["settings"]["checkpoint_timeout"] = {"setting": "900", "unit": "s"}
    assert run_facts.checkpoint_timeout_s(run) == 900


# -- run notices -------------------------------------------------------------------------------


def test_a_clean_run_has_no_notice() -> None:
    assert run_warnings.run_notices(make_run(1, "a", progress=[1000.0] * 30, pgbench_cpu=40)) == []


def test_failed_run_says_its_first_error_line() -> None:
    n = run_warnings.run_notices(make_run(7, "a", status="failed", error="boom\nmore"))
    assert n == [Notice("failed", "a", 7, "run 7 failed: boom")]


def test_drift_within_a_run() -> None:
    rng = np.random.default_rng(1)
    rising = [1000 * (1 + 0.005 * i) + e for i, e in enumerate(rng.normal(0, 10, 60))]
    n = run_warnings.run_notices(make_run(1, "a", progress=rising))
    # +0.5%/s; MSER trims up to half of a trend, the rest still rises ~12%
    assert kinds(n) == ["drifting"] and "drifted +11.5%" in n[0].message
    flat = list(rng.normal(1000, 10, 60))
    assert run_warnings.run_notices(make_run(1, "a", progress=flat)) == []


def test_client_bound_short_and_in_memory() -> None:
    n = run_warnings.run_notices(make_run(1, "a", pgbench_cpu=97.0))
    assert kinds(n) == ["client-bound"] and "97%" in n[0].message
    # a write script measured 60 s with checkpoint_timeout 300 s: short; a read one is not
    n = run_warnings.run_notices(make_run(1, "a", script="tpcb-like"))
    assert kinds(n) == ["short"] and "checkpoint_timeout 300 s" in n[0].message
    long = make_run(1, "a", script="tpcb-like", seconds=700)
    assert run_warnings.run_notices(long) == []
    n = run_warnings.run_notices(make_run(1, "a", scale=1))
    assert kinds(n) == ["in-memory"] and "in shared_buffers" in n[0].message


def test_a_custom_script_writes_when_it_makes_wal() -> None:
    run = make_run(1, "a", script=None)
    assert run_warnings.run_notices(run) == []  # no telemetry: unknown, so no claim

    def snapshot(when: str, wal_bytes: int) -> list[Any]:
        return [0.0, when, "pg.wal", json.dumps([{"wal_bytes": wal_bytes}])]

    run.series["0"] = {
        "pg.snapshots": {
            "columns": ["t", "which", "view", "data_json"],
            "rows": [snapshot("before", 0), snapshot("after", 600 * 2**20)],
        }
    }
    assert kinds(run_warnings.run_notices(run)) == ["short"]  # 10 MB/s of WAL: it writes


# -- campaign notices --------------------------------------------------------------------------


def test_campaign_notices_unstable_unresolved_failed() -> None:
    runs = [make_run(i + 1, "a clients=1", v) for i, v in enumerate([1000, 1300, 700, 1000])]
    runs += [make_run(5, "b clients=1", 1000), make_run(6, "b clients=1", 1010)]
    runs += [make_run(7, "b clients=1", status="failed", error="pgbench: out of memory")]
    assert "unresolved" not in kinds(run_warnings.notices_of(runs))  # no baseline: nothing compared
    n = run_warnings.notices_of(runs, baseline="a")
    assert kinds(n) == ["failed", "unstable", "unresolved"]
    assert n[0].run_id == 7 and "out of memory" in n[0].message
    assert n[1].point == "a clients=1" and "24.5%" in n[1].message
    assert n[2].point == "b clients=1" and n[2].message.startswith("no verdict (?): 4 and 2 runs")
    assert "runs per point for ±10%" in n[2].message


def test_unresolved_comparisons_are_one_warning() -> None:
    runs = []
    for i, v in enumerate([1000, 1150, 880, 1010]):  # CV 11%: no variant can be told apart
        for variant in "abcd":
            runs.append(make_run(len(runs) + 1, f"{variant} clients=1", v * (1 + i * 0.001)))
    n = [x for x in run_warnings.notices_of(runs, baseline="a") if x.kind == "unresolved"]
    assert len(n) == 1 and n[0].point is None
    assert n[0].message.startswith("3 of 3 comparisons have no verdict (?)")
    assert "runs per point resolve all of them" in n[0].message


def test_campaign_notices_merge_per_point_and_over_the_campaign() -> None:
    runs = []
    for i in range(8):
        for label in ("a c=1", "b c=1"):
            runs.append(make_run(len(runs) + 1, label, 1000.0 + (i % 2), scale=1))
    n = run_warnings.notices_of(runs)
    assert kinds(n) == ["in-memory"]  # every point: one notice, not sixteen
    assert n[0].point is None and "every point" in n[0].message
    runs[0] = make_run(1, "a c=1", 1000.0, pgbench_cpu=99.0, scale=1)
    n = [x for x in run_warnings.notices_of(runs) if x.kind == "client-bound"]
    assert n == [Notice("client-bound", "a c=1", 1, n[0].message)]
    assert n[0].message.endswith("(1 of 8 runs)")


def test_drift_across_repeats_and_over_the_campaign() -> None:
    runs = []
    for _ in range(6):  # interleaved; every run 2% faster than the one before
        for label, base in (("a c=1", 1000.0), ("b c=1", 2000.0)):
            runs.append(make_run(len(runs) + 1, label, base * (1 + 0.02 * len(runs))))
    n = run_warnings.notices_of(runs, verbose=True)
    drifting = [x for x in n if x.kind == "drifting"]
    assert {x.point for x in drifting} == {"a c=1", "b c=1", None}
    # said once for both points (and once for the campaign) unless verbose
    grouped = [x for x in run_warnings.notices_of(runs) if x.kind == "drifting"]
    assert len(grouped) == 2 and all(x.point is None for x in grouped)
    (both,) = [x for x in grouped if x.points]
    assert both.points == ("a c=1", "b c=1") and both.message.startswith("2 of 2 points (a c=1")
    steady = [make_run(i + 1, "ab"[i % 2] + " c=1", 1000.0 + (i * 7) % 5) for i in range(12)]
    assert [x for x in run_warnings.notices_of(steady) if x.kind == "drifting"] == []


def test_campaign_notices_from_a_store(tmp_path) -> None:
    from helpers.store_checks import sample_run

    from pglab.errors import LabError
    from pglab.store import open_store

    with open_store(str(tmp_path / "r.sqlite")) as store:
        store.save_run(sample_run(repeat=1))
        failed = store.save_run(sample_run(repeat=2, status="failed", point="p2"))
        n = run_warnings.campaign_notices(store, "camp")
        assert kinds(n)[0] == "failed" and n[0].run_id == failed
        assert "unresolved" not in kinds(n)  # one variant: nothing is compared
        with pytest.raises(LabError, match="no campaign 'nope'"):
            run_warnings.campaign_notices(store, "nope")


def test_a_warning_that_concerns_several_points_is_said_once() -> None:
    runs = []
    for i, v in enumerate([1000, 1300, 700, 1000]):  # a and b unstable (CV 24.5%, 12.8%)
        runs.append(make_run(len(runs) + 1, "a c=1", v))
        runs.append(make_run(len(runs) + 1, "b c=1", 1000 + (i % 2) * 250))
        runs.append(make_run(len(runs) + 1, "c c=1", 1000 + (i % 2) * 5))
    (unstable,) = [x for x in run_warnings.notices_of(runs) if x.kind == "unstable"]
    assert unstable.point is None and unstable.points == ("a c=1", "b c=1")
    assert unstable.message.startswith("2 of 3 points, CV 12.8–24.5% (above 10%)")
    assert unstable.message.endswith("(a c=1, b c=1)")
    verbose = [x for x in run_warnings.notices_of(runs, verbose=True) if x.kind == "unstable"]
    assert [x.point for x in verbose] == ["a c=1", "b c=1"]


def test_the_unstable_warning_names_the_runs_figure() -> None:
    # a TPC-H-like campaign's headline is QphH, not TPS: the warning says what varies
    runs = [make_run(i + 1, "a c=1", v) for i, v in enumerate([1000, 1300, 700, 1000])]
    (tps,) = [x for x in run_warnings.notices_of(runs) if x.kind == "unstable"]
    assert tps.message.startswith("TPS varies by 24.5%")
    for r in runs:
        r.metrics.update(geomean_s=3.0, power=r.metrics["tps"])
    (qphh,) = [x for x in run_warnings.notices_of(runs) if x.kind == "unstable"]
    assert qphh.message.startswith("QphH varies by 24.5%")


def test_every_notice_kind_made_is_ranked() -> None:
    """A notice of a kind missing from KINDS made notices_of raise (the 'clock' warning did):
    every Notice("kind", ...) written in run_warnings.py names a ranked kind."""
    source = Path(run_warnings.__file__).read_text()
    made = {
        call.args[0].value
        for call in ast.walk(ast.parse(source))
        if isinstance(call, ast.Call)
        and getattr(call.func, "id", None) == "Notice"
        and call.args
        and isinstance(call.args[0], ast.Constant)
    }
    assert {"differs", "assertions", "failed", "short"} <= made
    assert made <= set(run_warnings.KINDS)
    # the generator hosts' warnings are (kind, message) pairs made in their own module
    from pglab.analysis import generator_hosts

    pairs = {
        node.elts[0].value
        for node in ast.walk(ast.parse(Path(generator_hosts.__file__).read_text()))
        if isinstance(node, ast.Tuple) and len(node.elts) == 2
        and isinstance(node.elts[0], ast.Constant) and isinstance(node.elts[0].value, str)
    }  # fmt: skip
    assert pairs == {"clock", "client-bound"} and pairs <= set(run_warnings.KINDS)
