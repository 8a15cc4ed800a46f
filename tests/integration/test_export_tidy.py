"""The tidy export of a real campaign read back as an analyst would (pandas, from CSV and
Parquet): every point's median TPS is `pglab show`'s, the factor columns are the campaign's
matrix, each run's latency percentiles are the report's; the per-second series in long form;
bad input is a clear error and writes nothing."""

from __future__ import annotations

import builtins
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from pglab.analysis import tidy
from pglab.cli import main
from pglab.lab import Lab
from pglab.report.model import gather
from pglab.store import open_store

pytestmark = pytest.mark.integration

CAMPAIGN = """
name = "tidy"
repeats = 2
[dataset]
scale = 1
[workload]
script = "tpcb-like"
duration = 2
[variants.sync]
[variants.async.settings]
synchronous_commit = "off"
[matrix]
clients = [1, 2]
"""


@pytest.fixture(scope="module")
def stored(lab: Lab, tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("tidy")
    (tmp / "c.toml").write_text(CAMPAIGN)
    store = tmp / "r.sqlite"
    assert main(["run", str(tmp / "c.toml"), "--lab-dir", str(lab.home), "--store",
                 str(store)]) == 0  # fmt: skip
    return store


def export(store: Path, lab: Lab, *args: str) -> int:
    return main(["export", "tidy", *args, "--lab-dir", str(lab.home), "--store", str(store)])


def test_csv_and_parquet_read_back_give_show_s_medians_and_the_matrix(
    stored: Path, lab: Lab, tmp_path: Path, capsys
):
    assert export(stored, lab, "-o", str(tmp_path / "runs.csv")) == 0
    assert export(stored, lab, "--format", "parquet", "-o", str(tmp_path / "runs.parquet")) == 0
    csv_runs = pd.read_csv(tmp_path / "runs.csv")
    pq_runs = pd.read_parquet(tmp_path / "runs.parquet")
    assert len(csv_runs) == len(pq_runs) == 8
    assert list(pq_runs.columns) == list(csv_runs.columns)
    assert list(csv_runs.columns[: len(tidy.NAMES)]) == list(tidy.NAMES)
    assert (pq_runs["tps"] == csv_runs["tps"]).all()
    assert str(pq_runs["started_at"][0]).endswith("+00:00")  # ISO 8601 with the zone

    # the factors reproduce the matrix exactly: variant x clients, and the setting that varies
    # (empty where the campaign leaves the setting to the server's default)
    sync = pq_runs["setting.synchronous_commit"].where(pq_runs["setting.synchronous_commit"]
                                                       .notna(), "default")  # fmt: skip
    got = set(zip(pq_runs.variant, pq_runs.clients, sync, strict=True))
    assert got == {("sync", 1, "default"), ("sync", 2, "default"), ("async", 1, "off"),
                   ("async", 2, "off")}  # fmt: skip
    assert set(pq_runs["script"]) == {"tpcb-like"} and set(pq_runs["scale"]) == {1}
    assert pq_runs["wal_mb_s"].gt(0).all() and pq_runs["read_hit_ratio"].between(0, 1).all()

    capsys.readouterr()
    assert main(["show", "tidy", "--json", "--lab-dir", str(lab.home), "--store",
                 str(stored)]) == 0  # fmt: skip
    points = json.loads(capsys.readouterr().out)["points"]
    medians = pq_runs.groupby("point")["tps"].median()
    for pt in points:
        assert math.isclose(medians[pt["point"]], pt["tps_median"], rel_tol=1e-12)
        assert pt["factors"]["clients"] == pt["axes"]["clients"]


def test_each_run_s_percentiles_are_the_report_s(stored: Path, lab: Lab, tmp_path: Path):
    assert export(stored, lab, "--format", "json", "-o", str(tmp_path / "runs.json")) == 0
    rows = json.loads((tmp_path / "runs.json").read_text())
    with open_store(str(stored)) as store:
        for row in rows:
            report = gather(store, str(row["run_id"]))
            (point,) = report.points
            for q, ms in point.latency_ms.items():
                assert row[f"latency_p{q:g}_ms".replace(".", "_")] == pytest.approx(ms, rel=1e-12)


def test_by_phase_and_the_series_in_long_form(stored: Path, lab: Lab, tmp_path: Path):
    assert export(stored, lab, "--by", "phase", "-o", str(tmp_path / "p.csv")) == 0
    phases = pd.read_csv(tmp_path / "p.csv")
    assert set(phases["phase"]) == {"main"} and len(phases) == 8
    assert export(stored, lab, "--series", "progress", "-o", str(tmp_path / "s.csv")) == 0
    series = pd.read_csv(tmp_path / "s.csv")
    assert list(series.columns) == tidy.SERIES_COLUMNS
    with open_store(str(stored)) as store:
        run = store.get_run(int(series["run_id"].iloc[0]))
    assert run is not None
    progress = run.series["0"]["progress"]
    tps_rows = series[(series.run_id == run.id) & (series.metric == "tps")]
    assert list(tps_rows["value"]) == [r[progress["columns"].index("tps")]
                                        for r in progress["rows"]]  # fmt: skip
    assert export(stored, lab, "--all-settings", "-o", str(tmp_path / "all-settings.csv")) == 0
    every = pd.read_csv(tmp_path / "all-settings.csv")
    assert {"setting.synchronous_commit", "setting.max_connections"} <= set(every.columns)
    assert export(stored, lab, "--series", "-o", str(tmp_path / "all.csv")) == 0
    kinds = set(pd.read_csv(tmp_path / "all.csv")["kind"])
    assert {"progress", "latency", "pg.database", "waits", "os.cpu"} <= kinds


def test_bad_input_is_named_and_writes_nothing(
    stored: Path, lab: Lab, tmp_path: Path, capsys, monkeypatch
):
    out = tmp_path / "x.csv"
    assert export(stored, lab, "--series", "nope", "-o", str(out)) == 2
    assert "no per-second series 'nope'" in capsys.readouterr().err and not out.exists()
    assert main(["export", "missing", "--lab-dir", str(lab.home), "--store", str(stored)]) == 2
    assert "no campaign or run 'missing'" in capsys.readouterr().err

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    target = tmp_path / "x.parquet"
    assert export(stored, lab, "--format", "parquet", "-o", str(target)) == 2
    assert "pip install 'pglab[parquet]'" in capsys.readouterr().err and not target.exists()
    monkeypatch.undo()

    out.write_text("old\n")  # a failed write leaves what was there
    assert export(stored, lab, "-o", str(tmp_path / "no-such-dir" / "x.csv")) == 2
    assert "cannot write" in capsys.readouterr().err
    assert out.read_text() == "old\n" and not list(tmp_path.glob(".*.partial"))


def _same(a: object, b: object) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _views(store_url: str) -> tuple[list[dict], list[tuple]]:
    """The store's pglab_runs (as dicts) and pglab_series rows, read in place with SQL."""
    with open_store(store_url) as store:
        runs = store._rows("SELECT * FROM pglab_runs ORDER BY run_id", shape=dict)
        series = store._rows("SELECT * FROM pglab_series", shape=dict)
    cols = tidy.SERIES_COLUMNS
    return runs, sorted((tuple(r[c] for c in cols) for r in series), key=repr)


def _check_views_equal_the_export(store_url: str, lab: Lab, tmp_path: Path) -> None:
    args = ["--lab-dir", str(lab.home), "--store", store_url]
    assert main(["export", "tidy", "--format", "json", "-o", str(tmp_path / "r.json"), *args]) == 0
    assert main(["export", "tidy", "--series", "--format", "json", "-o",
                 str(tmp_path / "s.json"), *args]) == 0  # fmt: skip
    exported = json.loads((tmp_path / "r.json").read_text())
    exported_series = json.loads((tmp_path / "s.json").read_text())
    runs, series = _views(store_url)
    assert [r["run_id"] for r in runs] == [r["run_id"] for r in exported]
    for view_row, row in zip(runs, exported, strict=True):
        for name in tidy.NAMES:
            assert _same(view_row[name], row[name]), (name, view_row[name], row[name])
    want = sorted((tuple(r[c] for c in tidy.SERIES_COLUMNS) for r in exported_series), key=repr)
    assert len(series) == len(want) > 100
    for got_row, want_row in zip(series, want, strict=True):
        assert all(_same(g, w) for g, w in zip(got_row, want_row, strict=True)), (got_row, want_row)


def test_the_sqlite_store_s_views_are_the_export(stored: Path, lab: Lab, tmp_path: Path):
    _check_views_equal_the_export(str(stored), lab, tmp_path)


def test_the_postgresql_store_s_views_are_the_export(
    stored: Path, lab: Lab, tmp_path: Path, outside_server
):
    """The same runs copied into a PostgreSQL store (a database on a real server)."""
    with outside_server.admin() as conn:
        conn.execute("DROP DATABASE IF EXISTS tidy_store")
        conn.execute("CREATE DATABASE tidy_store")
    url = f"postgresql://admin@/tidy_store?host={outside_server.sock}&port={outside_server.port}"
    try:
        with open_store(str(stored)) as source, open_store(url) as target:
            camp = source.get_campaign("tidy")
            assert camp is not None
            target.ensure_campaign("tidy", camp["spec"], None)
            for r in source.list_runs("tidy"):
                result = source.load_run(r.id)
                assert result is not None
                target.save_run(result)
            assert tidy.refresh(target, "tidy") == 8  # what `pglab run` does at its end
        _check_views_equal_the_export(url, lab, tmp_path)
    finally:
        outside_server.drop_database("tidy_store")
