"""The report from a synthetic campaign (no server): content, escaping, PNG files, verdicts."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from helpers.synthetic_runs import fill
from markupsafe import escape

from pglab import report
from pglab.cli import main
from pglab.records import ScriptReport
from pglab.store import open_store

HOSTILE_VARIANT = "<script>alert(1)</script>"
HOSTILE_CAMPAIGN = "x'; DROP TABLE runs; --"


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> report.Written:
    tmp = tmp_path_factory.mktemp("report")
    with open_store(str(tmp / "r.sqlite")) as store:
        fill(store, HOSTILE_CAMPAIGN, variants=("base", HOSTILE_VARIANT), clients=(1, 4),
             repeats=5, seconds=20, failed=1)  # fmt: skip
        return report.write(store, HOSTILE_CAMPAIGN, tmp / "out" / "report.html", tmp, png=True)


def test_every_user_string_is_escaped(written: report.Written) -> None:
    page = written.html.read_text()
    assert HOSTILE_VARIANT not in page
    assert escape(HOSTILE_VARIANT) in page
    assert escape(HOSTILE_CAMPAIGN) in page
    # the page's only scripts: plotly.js, its own (chart check, the points' charts) and data
    tags = re.findall(r"<script[^>]*>", page)
    assert (
        tags.count("<script>") == 1 and tags.count('<script type="text/plain" id="plotly-js">') == 1
    )
    data = [t for t in tags if t.startswith('<script type="application/json"')]
    assert len(data) == len(tags) - 2 == 8  # a point's numbers each
    assert data and all(re.fullmatch(r'<script type="application/json" id="pdata-\d+">', t)
                        for t in data)  # fmt: skip
    for block in re.findall(r'<script type="application/json" id="pdata-\d+">(.*?)</script>', page):
        found = json.loads(block)
        assert set(found) == {"run", "runs", "missing", "tps", "others", "scripts", "checkpoints",
                              "phases", "latency", "waits", "buffers", "wal_mb_s", "cpu",
                              "pgbench_cpu", "disk", "dirty_mb"}  # fmt: skip
        assert "<" not in block and HOSTILE_VARIANT not in block


def test_charts_drawn_in_one_process_are_those_the_workers_drew(
    written: report.Written, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # with png, each point's chart is drawn by a worker process while the store is read, and
    # the campaign's by workers forked once it is read
    monkeypatch.setattr(report.os, "cpu_count", lambda: 1)
    with open_store(str(written.html.parent.parent / "r.sqlite")) as store:
        alone = report.write(store, HOSTILE_CAMPAIGN, tmp_path / "report.html", tmp_path, png=True)
    assert [p.name for p in alone.pngs] == [p.name for p in written.pngs]
    for mine, theirs in zip(alone.pngs, written.pngs, strict=True):
        assert mine.read_bytes() == theirs.read_bytes(), mine.name


def _without_plotly(page: str) -> str:
    """The page with the bundled plotly.js left out (its text holds URLs and images of its
    own that it never loads for these charts)."""
    scripts = re.findall(r'<script type="text/plain" id="plotly-js">(.*?)</script>', page, re.S)
    bundle = max(scripts, key=len)
    assert len(bundle) > 1_000_000 and "plotly" in bundle[:2000].lower()
    return page.replace(bundle, "")


def test_page_is_self_contained(written: report.Written) -> None:
    page = _without_plotly(written.html.read_text())
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "nothing from the network"
    assert not re.search(r"<link\b", page)


def test_charts_are_written_as_png_and_embedded(written: report.Written) -> None:
    names = sorted(p.name for p in written.pngs)
    # 2 variants × 2 scripts × 2 client counts = 8 points, each with a chart; plus the campaign's
    assert names[:3] == ["latency-percentiles.png", "point-001.png", "point-002.png"]
    assert {"tps-vs-clients.png", "runs-in-order.png"} <= set(names)
    assert len([n for n in names if n.startswith("point-")]) == 8
    page = _without_plotly(written.html.read_text())
    for path in written.pngs:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the campaign's charts are in the page; the points' are drawn there from their numbers
    assert page.count('src="data:image/png;base64,') == 3
    assert 'data-charts-total="3" data-points-total="8"' in page
    assert page.count("point-001.png") == 1  # named under its chart in the page


def test_without_png_the_points_charts_are_the_page_s_only(written: report.Written,
                                                           tmp_path: Path) -> None:  # fmt: skip
    with open_store(str(written.html.parent.parent / "r.sqlite")) as store:
        plain = report.write(store, HOSTILE_CAMPAIGN, tmp_path / "report.html", tmp_path)
    assert sorted(p.name for p in plain.pngs) == [
        "latency-percentiles.png", "runs-in-order.png", "tps-vs-clients.png"]  # fmt: skip
    page = plain.html.read_text()
    assert page.count('<div class="pchart"') == 8 and "point-001.png" not in page


def test_the_page_s_numbers_have_every_panel_and_say_what_is_missing(
    written: report.Written,
) -> None:
    from pglab.report import browser

    pt = written.report.points[0]
    full = browser.point_data(pt)
    assert full is not None and full["missing"] == []
    assert len(full["others"]) == 4 and full["run"] == pt.representative.id
    assert set(full["latency"]) == {"p50", "p95", "p99", "max"}
    assert full["waits"]["names"][-1] == "other" and len(full["waits"]["layers"]) == 8
    assert all(full["buffers"].values()) and full["wal_mb_s"] and full["dirty_mb"]
    assert set(full["cpu"]) == {"user", "system", "iowait", "steal"}
    # the numbers are the series' own: TPS second by second as pgbench's progress gave it
    progress = pt.representative.series[next(iter(pt.representative.series))]["progress"]
    tps = [row[progress["columns"].index("tps")] for row in progress["rows"]]
    assert full["tps"][1] == [round(v, 3) for v in tps]
    bare = replace(
        pt.representative,
        series={k: {"progress": v["progress"]} for k, v in pt.representative.series.items()},
    )
    found = browser.point_data(report.Point(pt.label, pt.runs, pt.row, bare))
    assert found is not None and found["tps"] == full["tps"]
    assert [m.split(":")[0] for m in found["missing"]] == [
        "Latency percentiles", "Wait events", "Buffers and WAL", "CPU", "Disk and memory",
    ]  # fmt: skip


def test_summary_has_every_point_and_the_known_effect(written: report.Written) -> None:
    rep = written.report
    assert len(rep.points) == 8
    assert rep.baseline == "base"
    others = [pt for pt in rep.points if pt.row.variant == HOSTILE_VARIANT]
    verdicts = {pt.row.comparison.verdict for pt in others if pt.row.comparison is not None}
    # the second variant is 10% faster with 2% noise over 5 repeats: found at every point
    assert verdicts == {"+"}
    page = written.html.read_text()
    assert page.count('<tr class="base">') == 4
    assert "too many clients already" in page  # the failed run's error
    assert "Failed runs" in page


def test_point_charts_have_every_panel_on_full_telemetry(written: report.Written) -> None:
    from pglab.report import charts

    pt = written.report.points[0]
    chart = charts.point_chart(pt, 1)
    assert chart is not None and chart.missing == ()


def test_a_run_without_telemetry_says_which_panels_are_missing(written: report.Written) -> None:
    from pglab.report import charts

    pt = written.report.points[0]
    bare = replace(
        pt.representative,
        series={k: {"progress": v["progress"]} for k, v in pt.representative.series.items()},
    )
    chart = charts.point_chart(report.Point(pt.label, pt.runs, pt.row, bare), 1)
    assert chart is not None
    assert any(m.startswith("Wait events") for m in chart.missing)
    assert not any(m.startswith("TPS") for m in chart.missing)


def test_a_data_directory_on_tmpfs_draws_its_disk_panel_without_a_legend_warning(
    written: report.Written,
) -> None:
    """No block device under the data directory (tmpfs): no disk series, memory still there.
    The panel says so instead of asking matplotlib for an empty legend (a warning, an error
    under the test suite's filterwarnings)."""
    from pglab.report import charts

    pt = written.report.points[0]
    no_disk = replace(
        pt.representative,
        series={
            k: {n: t for n, t in v.items() if n != "os.disk"}
            for k, v in pt.representative.series.items()
        },  # fmt: skip
    )
    assert any("os.mem" in v for v in no_disk.series.values())
    chart = charts.point_chart(report.Point(pt.label, pt.runs, pt.row, no_disk), 1)
    assert chart is not None and not any(m.startswith("Disk") for m in chart.missing)


def test_cli_report_of_a_run_and_unknown_ids(tmp_path: Path, capsys) -> None:
    db = tmp_path / "r.sqlite"
    with open_store(str(db)) as store:
        ids = fill(store, "c", variants=("base",), scripts=("select-only",), clients=(2,),
                   repeats=1, seconds=5)  # fmt: skip
    out = tmp_path / "run.html"
    args = ["--store", str(db), "--lab-dir", str(tmp_path)]
    assert main(["report", str(ids[0]), "-o", str(out), *args]) == 0
    assert "run 1 of the campaign" in out.read_text()
    assert not (tmp_path / "run-charts" / "point-001.png").exists()
    capsys.readouterr()
    assert main(["report", str(ids[0]), "-o", str(out), "--png", *args]) == 0
    assert (tmp_path / "run-charts" / "point-001.png").read_bytes()[:4] == b"\x89PNG"
    assert "1 chart(s) as PNG" not in capsys.readouterr().out  # the run's own chart too
    assert main(["report", "nope", *args]) == 2
    assert "no campaign named 'nope'" in capsys.readouterr().err
    assert main(["report", "999", *args]) == 2


def test_scaling_over_the_clients_axis(written: report.Written) -> None:
    page = written.html.read_text()
    assert "scaling efficiency" in page
    by_clients = {pt.scaling.clients: pt.scaling for pt in written.report.points if pt.scaling}
    assert by_clients[1].efficiency == 1.0
    # synthetic TPS grows as clients^0.7: at 4 clients, 4^0.7 / 4 ≈ 0.66 of linear (± noise)
    assert 0.6 < by_clients[4].efficiency < 0.72


def test_single_client_commits_beside_the_storage_sync_rate(tmp_path: Path) -> None:
    """A pg_test_fsync result on the runs' device, file system and mount options is shown
    beside the single-client write points, and only those."""
    from pglab.records import StorageResult

    mount = {"fstype": "ext4", "device": "/dev/vda", "mount_options": "rw,noatime"}
    section = {
        "key": "1x8kB",
        "title": "t",
        "rows": [{"method": "fdatasync", "ops_per_s": 4000.0, "usecs_per_op": 250.0, "note": ""}],
    }
    with open_store(str(tmp_path / "r.sqlite")) as store:
        fill(store, "c", variants=("base",), clients=(1, 4), repeats=1, seconds=5)
        store.save_storage_result(StorageResult(
            target_path="/var/lib/pglab", tool="pg_test_fsync", tool_version="18.6",
            measured_at=1.0, elapsed_s=1.0, mount=mount,
            results={"sections": [section], "seconds_per_test": 1, "direct_io": True},
            output="", host={}))  # fmt: skip
        tmpfs = {"fstype": "tmpfs", "device": "tmpfs", "mount_options": "rw"}
        elsewhere = {**section, "rows": [{**section["rows"][0], "ops_per_s": 123456.0}]}
        store.save_storage_result(StorageResult(
            target_path="/mnt/t", tool="pg_test_fsync", tool_version="18.6",
            measured_at=2.0, elapsed_s=1.0, mount=tmpfs,
            results={"sections": [elsewhere], "seconds_per_test": 1, "direct_io": True},
            output="", host={}))  # fmt: skip
        written = report.write(store, "c", tmp_path / "r.html", tmp_path)
    shown = {pt.label: pt.vs_fsync for pt in written.report.points}
    one = shown["base script=tpcb-like clients=1"]
    assert one is not None and one["fsync_per_s"] == 4000.0
    assert one["ratio"] == pytest.approx(one["commits_per_s"] / 4000.0)
    assert shown["base script=tpcb-like clients=4"] is None
    assert shown["base script=select-only clients=1"] is None
    page = written.html.read_text()
    assert "syncs/s" in page
    # the storage the runs used, with its measurement; not the tmpfs nobody ran on
    (used,) = written.report.storage
    assert used["id"] == 1 and used["roles"] == {"data"} and len(used["points"]) == 4
    storage = page[page.index("<h2>Storage</h2>") : page.index("<h2>Charts</h2>")]
    assert "/var/lib/pglab on ext4 /dev/vda (rw,noatime)" in storage
    assert "holds the data of 4 point(s)" in storage
    assert "one 8kB write" in storage and "4,000" in storage and "123,456" not in storage


def test_a_reused_canvas_draws_exactly_what_a_fresh_one_does(written: report.Written) -> None:
    """Point charts share one figure per process: nothing of a point (a log scale, a twin
    axis, a panel drawn as missing) may leak into the next one."""
    from pglab.report import charts

    pt, other = written.report.points[0], written.report.points[5]
    bare = replace(
        other.representative,
        series={k: {"progress": v["progress"]} for k, v in other.representative.series.items()},
    )
    charts._Canvas._current = None
    fresh = charts.point_chart(pt, 1)
    charts.point_chart(report.Point(other.label, other.runs, other.row, bare), 2)
    charts.point_chart(other, 3)
    again = charts.point_chart(pt, 1)
    assert fresh is not None and again is not None
    assert again.png == fresh.png


def test_the_tps_panel_draws_the_other_repeats_beside_the_representative(
    written: report.Written,
) -> None:
    from pglab.report import charts

    pt = written.report.points[0]
    ok = [r for r in pt.runs if r.status == "ok"]
    assert len(ok) == 5 and len(pt.others) == 4
    assert pt.representative.id not in {o.id for o in pt.others}
    assert all(set(kinds) == {"progress"} for o in pt.others for kinds in o.series.values())
    charts.point_chart(pt, 1)
    tps_panel = charts._Canvas._current.axes[0][0]
    grey = [line for line in tps_panel.get_lines() if line.get_color() == "#aaa"]
    assert len(grey) == 4
    labels = [t.get_text() for t in tps_panel.get_legend().get_texts()]
    assert "the other 4 repeat(s)" in labels and f"run {pt.representative.id}" in labels


def test_storage_results_as_the_page_shows_them() -> None:
    import json

    from pglab.targets.output import parse_fio, parse_pg_test_fsync

    data = Path(__file__).resolve().parents[1] / "data" / "storage"
    row = {"id": 7, "measured_at": 1.7e9, "target_path": "/var/tmp", "fstype": "ext4",
           "device": "/dev/vda", "mount_options": "rw", "facts": {}, "roles": {"WAL", "data"},
           "points": {"a", "b"}, "matched_by": "device"}  # fmt: skip
    fio_results = parse_fio(json.loads((data / "fio_disk.json").read_text()))
    fio = report._storage_view(
        {**row, "tool": "fio", "tool_version": "fio-3.33", "results": fio_results}
    )
    assert fio["columns"][:3] == ["job", "IOPS", "MB/s"] and fio["numeric"][:2] == [False, True]
    assert fio["rows"] and all(len(r) == 5 for r in fio["rows"])
    assert fio["roles"] == "data and WAL" and fio["points"] == 2
    fsync_results = parse_pg_test_fsync((data / "pg18_test_fsync_disk.txt").read_text())
    fsync = report._storage_view(
        {**row, "tool": "pg_test_fsync", "tool_version": "18.6", "results": fsync_results}
    )
    assert fsync["rows"][0][:2] == ["one 8kB write", "open_datasync"]
    assert any(r[1] == "fdatasync" and r[2] == "6,159" for r in fsync["rows"])


def test_a_comparison_that_could_not_tell_says_why(tmp_path: Path) -> None:
    """Two repeats a side and no effect: the verdict is "?" and the cell says why on hover; the
    legend says what ~ would have promised (the campaign's effect of interest)."""
    with open_store(str(tmp_path / "r.sqlite")) as store:
        fill(store, "unclear", scripts=("select-only",), clients=(1, 4), repeats=2, seconds=5,
             effect=1.0)  # fmt: skip
        page = report.write(store, "unclear", tmp_path / "r.html", tmp_path).html.read_text()
    cells = re.findall(r'<td class="v-none" title="([^"]*)">\?</td>', page)
    assert len(cells) == 2, cells
    assert all(c.startswith("2 runs a side at ") and "runs per point for ±10%" in c for c in cells)
    words = " ".join(page.split())
    assert "the runs could have found ±10%" in words and "the runs could not tell" in words


def test_warnings_are_grouped_by_kind_as_in_show(written: report.Written) -> None:
    """One line per kind for the points it concerns ("short: 4 of 8 points (…)"), not one per
    point; a failed run keeps its own line."""
    page = written.html.read_text()
    kinds = re.findall(r'<li><b class="warn">(.*?)</b>', page)
    assert kinds.count("short") == 1 and kinds.count("failed") == 1, kinds
    (short,) = re.findall(r'<li><b class="warn">short</b>(.*?)</li>', page)
    assert ": 4 of 8 points (" in short and "tpcb-like" in short and "select-only" not in short


def test_the_tps_panel_draws_each_script_of_a_mix(written: report.Written) -> None:
    from pglab.report import charts

    pt = written.report.points[0]
    run = pt.representative
    ph = next(p for p in run.phases if p.measured)
    t0 = int(ph.started_at)
    cols = ["epoch", "script", "count", "failed", "mean_ms", "p50_ms", "p95_ms", "p99_ms",
            "max_ms"]  # fmt: skip
    rows = [[t0 + t, n, count * (t + 1), 0, 1.0, 1.0, 2.0, 3.0, 4.0]
            for t in range(5) for n, count in (("1", 30), ("2", 90))]  # fmt: skip
    names = ((1, "/tmp/x/serial.sql"), (2, "<builtin: select only>"))
    mix = tuple(ScriptReport(number=n, name=name, weight=1, target_pct=None, transactions=0,
                             counted=0, share_pct=None, tps=None) for n, name in names)  # fmt: skip
    series = {
        **run.series,
        str(ph.idx): {**run.series[str(ph.idx)], "script_latency": {"columns": cols, "rows": rows}},
    }
    phases = tuple(replace(p, report=replace(p.report, scripts=mix)) if p is ph else p
                   for p in run.phases)  # fmt: skip
    mixed = replace(run, series=series, phases=phases)
    assert charts.point_chart(report.Point(pt.label, pt.runs, pt.row, mixed), 1) is not None
    panel = charts._Canvas._current.axes[0][0]
    lines = {ln.get_label(): ln for ln in panel.get_lines()}
    serial, select = lines["1 serial.sql"], lines["2 <builtin: select only>"]
    assert list(select.get_ydata()) == [90, 180, 270, 360, 450]
    assert list(serial.get_xdata()) == [t0 + t + 1 - ph.started_at for t in range(5)]
    assert "per script" in panel.get_ylabel()


def test_the_plan_s_run_overhead_is_measured_on_stored_runs(written: report.Written) -> None:
    """Synthetic runs end 3 s after their phase's time: the estimate counts 3 s a run; a
    campaign with no runs of its own takes the store's, and an empty store none."""
    from pglab.analysis import points

    with open_store(str(written.html.parent.parent / "r.sqlite")) as store:
        assert points.run_overhead(store, HOSTILE_CAMPAIGN) == (
            3.0, "median of 39 of this campaign's runs")  # fmt: skip
        assert points.run_overhead(store, "another") == (3.0, "median of 39 of the store's runs")
    with open_store(str(written.html.parent.parent / "empty.sqlite")) as empty:
        assert points.run_overhead(empty, "x") is None


def test_a_second_report_reads_each_run_s_histogram_from_the_cache(
    written: report.Written, tmp_path: Path
) -> None:
    """The percentiles over every transaction of a point are the same whether each run's
    histogram is decoded from the store (the first report) or read back from the lab's cache
    (the next), and the same as merging every per-second histogram at once; a cache file that
    is damaged is decoded again."""
    from pglab.analysis.tidy import measured_phases, percentiles
    from pglab.report import model

    db = str(written.html.parent.parent / "r.sqlite")
    with open_store(db) as store:
        cold = model.gather(store, HOSTILE_CAMPAIGN, home=tmp_path)
        kept = sorted((tmp_path / "cache" / "report").glob("*.json"))
        assert len(kept) == 39  # every ok run (the drawn one may be another next time)
        kept[0].write_text("{not json")
        warm = model.gather(store, HOSTILE_CAMPAIGN, home=tmp_path)
        for a, b in zip(cold.points, warm.points, strict=True):
            assert a.latency_ms == b.latency_ms and a.latency_ms
            runs = [store.get_run(r.id) for r in a.runs if r.ok]
            assert a.latency_ms == percentiles(runs, {r.id: measured_phases(r) for r in runs})
