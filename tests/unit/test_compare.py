"""``pglab compare`` on synthetic stores: runs built as the executor would store them, without a
server, with known effects (an A/A pair, and a 5% slowdown as pgbench --rate 0.95·R gives)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.register_assert_rewrite("store_checks")
from helpers.store_checks import sample_phase, sample_run  # noqa: E402

from pglab import cli  # noqa: E402
from pglab.analysis import compare as comparing  # noqa: E402
from pglab.errors import LabError  # noqa: E402
from pglab.store import open_store  # noqa: E402


def noisy(mean: float, sd: float, n: int, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, sd, n))


def save(store: Any, campaign: str, label: str, repeat: int, tps: float, **fp: Any) -> int:
    variant = label.split()[0] if "=" not in label.split()[0] else "default"
    fingerprint = {"server_version": "18.0", "cpus": 2,
                   "settings": {"shared_buffers": {"setting": "16384", "unit": "8kB",
                                                   "shown": "128MB"}}}  # fmt: skip
    fingerprint["settings"].update(fp)
    axes = [[k, int(v)] for k, _, v in (t.partition("=") for t in label.split() if "=" in t)]
    run = sample_run(
        campaign=campaign, point=label, repeat=repeat, variant=variant, label=label,
        spec={"variant": variant, "axes": axes, "phases": [{"name": "main"}], "repeat": repeat},
        phases=(sample_phase("main", tps=tps),), fingerprint=fingerprint,
        metrics={"tps": tps, "phase.main.tps": tps, "latency_avg_ms": 8000 / tps},
    )  # fmt: skip
    return store.save_run(run)


@pytest.fixture
def store(tmp_path: Path):
    with open_store(str(tmp_path / "r.sqlite")) as s:
        # A/A: the same point as two variants, interleaved, 6 repeats each, 2% noise
        for i, (x, y) in enumerate(zip(noisy(1000, 20, 6, 1), noisy(1000, 20, 6, 2), strict=True)):
            save(s, "aa", "base clients=8", i + 1, x)
            save(s, "aa", "same clients=8", i + 1, y)
        # A/B: two campaigns at R and 0.95·R, two client counts each, 1% noise
        for c, seed in ((1, 10), (4, 20)):
            for i, v in enumerate(noisy(1000 * c, 10 * c, 6, seed)):
                save(s, "rate-r", f"clients={c}", i + 1, v)
            for i, v in enumerate(noisy(950 * c, 10 * c, 6, seed + 1)):
                save(s, "rate-095r", f"clients={c}", i + 1, v, rate={"setting": "x"})
        yield s


def run_compare(store, a: str, b: str) -> dict[str, Any]:
    ta, tb = comparing.resolve(store, a), comparing.resolve(store, b)
    return comparing.compare_targets(store, ta, tb)


def test_a_a_points_are_not_significant(store) -> None:
    out = run_compare(store, "aa:base clients=8", "aa:same")  # "same" picks one point out
    (pair,) = out["pairs"]
    c = pair["comparison"]
    assert out["kind"] == "points" and pair["a"]["n"] == pair["b"]["n"] == 6
    assert c.verdict == "=" and c.ci_low < 0 < c.ci_high and c.p_value > 0.05


def test_a_known_5_percent_effect_is_significant_over_campaigns(store) -> None:
    out = run_compare(store, "rate-r", "rate-095r")
    assert out["kind"] == "campaigns" and out["matched_by"] == "label" and out["corrected"]
    assert [p["a"]["point"] for p in out["pairs"]] == ["clients=1", "clients=4"]
    for p in out["pairs"]:
        c = p["comparison"]
        assert c.verdict == "-" and c.ci_low <= -5.0 <= c.ci_high
    assert out["settings_diff"] == [{"name": "rate", "a": "default", "b": "x"}]


def test_campaigns_match_by_matrix_coordinates_or_say_they_cannot(store) -> None:
    for c in (1, 4):
        for i, v in enumerate(noisy(1000 * c, 10, 4, c)):
            save(store, "pg16", f"pg16 clients={c}", i + 1, v)
            save(store, "pg18", f"pg18 clients={c}", i + 1, v * 1.2)
    out = run_compare(store, "pg16", "pg18")
    assert out["matched_by"] == "matrix coordinates" and len(out["pairs"]) == 2
    assert all(p["comparison"].delta_pct == pytest.approx(20) for p in out["pairs"])
    with pytest.raises(LabError, match="no point of campaign 'pg16' matches"):
        run_compare(store, "pg16", "aa")  # aa has two points at clients=8, none at 1 or 4


def test_runs_side_by_side_say_there_is_no_significance(store) -> None:
    out = run_compare(store, "1", "2")
    assert out["kind"] == "runs" and "no significance" in out["note"]
    tps = next(m for m in out["metrics"] if m["metric"] == "tps")
    assert tps["delta_pct"] == pytest.approx((tps["b"] / tps["a"] - 1) * 100)
    assert out["waits"][0]["a"][0][0] == "LWLock:WALWrite"


def test_user_errors(store) -> None:
    with pytest.raises(LabError, match="names no run, campaign or point"):
        comparing.resolve(store, "nope")
    with pytest.raises(LabError, match="matches several") as err:
        comparing.resolve(store, "aa:clients=8")
    assert "aa:base clients=8" in err.value.hint
    with pytest.raises(LabError, match="cannot compare a run"):
        run_compare(store, "1", "aa")


def test_a_point_is_found_by_the_label_pglab_show_prints() -> None:
    # `pglab show` shortens axes (settings by their own name, clients as c): a label copied
    # from it finds the stored point
    labels = [
        "tpcb settings.plan_cache_mode=auto",
        "tpcb settings.plan_cache_mode=force",
        "tpcc settings.plan_cache_mode=auto",
        "tpcc clients=8 settings.work_mem=4MB",
    ]
    assert comparing._pick_point("x", "tpcc plan_cache_mode=auto", labels) == labels[2]
    assert comparing._pick_point("x", "c=8 work_mem=4MB", labels) == labels[3]
    assert comparing._pick_point("x", "tpcb settings.plan_cache_mode=force", labels) == labels[1]
    with pytest.raises(LabError, match="matches no"):
        comparing._pick_point("x", "tpcc plan_cache_mode=force", labels)


def test_cli_compare_prints_the_table_and_json(store, capsys) -> None:
    url = store.where
    assert cli.main(["compare", "rate-r", "rate-095r", "--store", url]) == 0
    text = capsys.readouterr().out
    assert "clients=4" in text and "Holm" in text and " - " in text.replace("│", " ")
    assert cli.main(["compare", "aa:base", "aa:same", "--json", "--store", url]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["pairs"][0]["comparison"]["verdict"] == "="
    assert cli.main(["compare", "aa:base", "aa:same", "--store", url]) == 0
    title = capsys.readouterr().out.splitlines()[0].strip()
    assert title == "same clients=8 compared with base clients=8 (campaign aa)"  # both named
    assert cli.main(["compare", "1", "nope", "--store", url]) == 2
    assert "error:" in capsys.readouterr().err


def test_each_side_shows_the_storage_measured_under_its_runs(tmp_path: Path, capsys) -> None:
    from pglab.records import StorageResult

    row = {"method": "fdatasync", "ops_per_s": 4000.0, "usecs_per_op": 250.0, "note": ""}
    disk = {"fstype": "ext4", "device": "/dev/vda", "mount_options": "rw,noatime"}
    tmpfs = {"fstype": "tmpfs", "device": "tmpfs", "mount_options": "rw"}
    url = str(tmp_path / "r.sqlite")
    with open_store(url) as s:
        for n, mount in enumerate((disk, tmpfs)):
            fast = {"key": "1x8kB", "title": "t", "rows": [{**row, "ops_per_s": 4000.0 * 10**n}]}
            results = {"sections": [fast], "seconds_per_test": 1, "direct_io": True}
            s.save_storage_result(StorageResult(
                target_path=f"/m{n}", tool="pg_test_fsync", tool_version="18.6",
                measured_at=1.0, elapsed_s=1.0, mount=mount, results=results))  # fmt: skip
        fp = {"server_version": "18.0", "settings": {}}
        a = s.save_run(sample_run("c", "p1", fingerprint={**fp, "pgdata_mount": disk}))
        b = s.save_run(sample_run("c", "p2", fingerprint={**fp, "pgdata_mount": tmpfs}))
        out = run_compare(s, str(a), str(b))
    assert [st["headline"] for st in out["storage"]["a"]] == ["fdatasync 4,000/s"]
    assert [st["headline"] for st in out["storage"]["b"]] == ["fdatasync 40,000/s"]
    assert out["storage"]["b"][0]["roles"] == ["data"]
    assert cli.main(["compare", str(a), str(b), "--store", url]) == 0
    text = capsys.readouterr().out
    assert "A's data storage: /m0 on ext4 /dev/vda" in text and "fdatasync 4,000/s" in text
    assert "B's data storage: /m1 on tmpfs" in text and "fdatasync 40,000/s" in text


def save_mix(store: Any, campaign: str, repeat: int, serial_tps: float, select_tps: float) -> int:
    """A run of a phase mixing a script file (its path differs between campaigns) and the
    builtin select-only, as pgbench reports them (``SQL script N`` sections)."""
    from dataclasses import replace

    from pglab.records import ScriptReport

    def script(n: int, name: str, tps: float) -> ScriptReport:
        return ScriptReport(number=n, name=name, weight=1, target_pct=50.0, transactions=
                            int(tps * 3), counted=int(tps * 3), share_pct=50.0, tps=tps,
                            latency_avg_ms=8000 / tps)  # fmt: skip

    base = sample_phase("main", tps=serial_tps + select_tps)
    mix = (script(1, f"/tmp/{campaign}/serial.sql", serial_tps),
           script(2, "<builtin: select only>", select_tps))  # fmt: skip
    run = sample_run(campaign=campaign, point="clients=8", repeat=repeat, label="clients=8",
                     spec={"axes": [["clients", 8]], "phases": [{"name": "main"}]},
                     phases=(replace(base, report=replace(base.report, scripts=mix)),))  # fmt: skip
    return store.save_run(run)


def test_each_script_of_a_mix_is_compared(tmp_path: Path, capsys) -> None:
    url = str(tmp_path / "r.sqlite")
    with open_store(url) as s:
        serial, select = noisy(1000, 10, 4, 5), noisy(4000, 40, 4, 6)
        for i in range(4):  # B: the script file 20% slower, select-only as fast
            save_mix(s, "mix-a", i + 1, serial[i], select[i])
            save_mix(s, "mix-b", i + 1, serial[(i + 1) % 4] * 0.8, select[(i + 2) % 4])
        out = run_compare(s, "mix-a", "mix-b")
        runs = run_compare(s, "1", "2")  # A and B interleaved
    rows = {r["script"]: r for r in out["pairs"][0]["scripts"]}
    assert list(rows) == ["serial.sql", "<builtin: select only>"]  # matched by file name
    slow, same = rows["serial.sql"], rows["<builtin: select only>"]
    assert slow["comparison"].verdict == "-" and slow["tps_delta_pct"] == pytest.approx(-20)
    assert same["comparison"].verdict in "=~?" and abs(same["tps_delta_pct"]) < 0.1
    assert slow["comparison"].comparisons == 2  # Holm over the scripts
    assert slow["latency_delta_pct"] == pytest.approx(25, abs=1) and slow["a"]["n"] == 4
    # two runs: side by side, no verdict
    (r1, _) = runs["scripts"]
    assert r1["comparison"] is None
    assert r1["tps_delta_pct"] == pytest.approx((serial[1] * 0.8 / serial[0] - 1) * 100)
    assert cli.main(["compare", "mix-a", "mix-b", "--store", url]) == 0
    text = capsys.readouterr().out
    assert "scripts, as pgbench reported each" in text and "Holm-corrected over 2" in text
    line = next(ln for ln in text.splitlines() if "serial.sql" in ln)
    assert "-20.0%" in line and " - " in line.replace("│", " ")
    assert cli.main(["compare", "mix-a", "mix-b", "--store", url, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["pairs"][0]["scripts"][0]["comparison"]["verdict"] == "-"
    assert cli.main(["compare", "1", "2", "--store", url]) == 0
    assert "serial.sql" in capsys.readouterr().out
