"""The line `pglab run` prints as each run ends names the run's headline figure by what it is:
TPS for pgbench, MB/s for maintenance operations, QphH (QthH) for a TPC-H-like power
(throughput) run, its number the one its metrics hold under that name (issue 52: not ``tps``)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from pglab.analysis.points import figure_of_run
from pglab.campaign.spec import DatasetSpec, RunSpec, ServerSpec
from pglab.cli import progress
from pglab.records import RunResult
from pglab.store.numbers import metrics_of


@pytest.mark.parametrize(
    ("metrics", "unit", "value"),
    [
        ({"tps": 1234.5}, "tps", 1234.5),
        ({"mb_s": 80.0}, "MB/s", 80.0),
        ({"power": 5011.6, "geomean_s": 0.7}, "QphH", 5011.6),
        ({"geomean_s": 0.9, "throughput": 900.0}, "QthH", 900.0),
    ],
)
def test_a_finished_run_s_line_names_its_figure(
    metrics: dict, unit: str, value: float, monkeypatch
) -> None:
    assert figure_of_run(metrics) == unit
    out = io.StringIO()
    monkeypatch.setattr(progress, "console", Console(file=out, width=120, color_system=None))
    events = progress.ProgressEvents(10.0)
    result = RunResult(campaign="c", run_key="k/1", point_key="k", repeat=1, variant="base",
                       label="base", spec={}, status="ok", started_at=0.0, finished_at=1.0,
                       metrics=metrics_of(metrics))  # fmt: skip
    spec = RunSpec(campaign="c", variant="base", axes=(), server=ServerSpec(),
                   dataset=DatasetSpec(), phases=())  # fmt: skip
    events.run_finished(spec, result)
    assert f"✓ base #1: {value:,.1f} {unit}" in out.getvalue()


def test_watch_names_a_stored_run_s_figure_too() -> None:
    from pglab.cli.watch import _line
    from pglab.rows import RunRow

    row = RunRow(id=7, campaign="c", run_key="k/1", point_key="k", variant="base", label="q",
                 repeat=2, status="ok", tps=None, started_at=0.0, finished_at=1.0, error=None,
                 metrics={"power": 5011.6, "geomean_s": 0.7})  # fmt: skip
    assert _line(row) == "  ✓ q #2: 5,011.6 QphH"
