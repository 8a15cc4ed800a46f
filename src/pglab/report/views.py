"""What the report's templates are rendered with: ``PageContext`` (every name ``page.html.j2``
and the parts it includes read), and the view of each thing the page shows that is not one of
the report's own objects (``model.Report``, ``model.Point``): a chart (``EmbeddedChart``), a
point's numbers with its caption (``PointView``), a storage result (``StorageView``).

They are ``TypedDict``s: jinja2 reads them by key, and mypy checks each key ``report`` writes.
The functions that fill them are in ``report/__init__.py`` (``_context``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict

from markupsafe import Markup

from pglab.analysis.pacing import PacedPoint
from pglab.analysis.scripts import ScriptRow
from pglab.records import StatementReport
from pglab.report.flames import Flame, FlameDiff
from pglab.report.model import Point, Report

if TYPE_CHECKING:
    from pglab.report import Served
    from pglab.tune.summary import TuneSummary


class EmbeddedChart(TypedDict):
    """A campaign chart: drawn (its PNG in ``b64``) or served (at ``url``)."""

    name: str  # its file name without ".png"
    title: str
    missing: tuple[str, ...]  # the panels drawn empty, each with why
    url: str | None  # served: where the browser fetches it
    b64: str  # drawn: the PNG, base64


class PointView(TypedDict):
    """A point's numbers as the page puts them (``browser.PointData``) and its caption."""

    json: Markup  # the numbers as JSON, safe inside a <script>
    run: int
    png: str | None  # its PNG's file name, drawn with ``--png``
    runs: int
    others: bool  # the other repeats' TPS drawn beside
    missing: list[str]
    scripts: list[str]  # the TPS panel's scripts, in its order
    flame: Flame | None
    flame_diff: FlameDiff | None


class StorageView(TypedDict):
    """A stored storage result (pg_test_fsync's or fio's) as the page's table shows it."""

    title: str
    where: str
    when: str
    roles: str  # "data and WAL"
    points: int  # the points whose runs used it
    matched_by: str
    columns: list[str]
    numeric: list[bool]  # per column: right-aligned
    rows: list[list[str]]


class PageContext(TypedDict):
    """Every name the page's templates read (``page.html.j2``, ``sections.html.j2``,
    ``point_body.html.j2``)."""

    r: Report
    tune: TuneSummary | None
    tune_settings: dict[str, tuple[tuple[str, str], ...]]  # a candidate's label -> settings
    tune_chart: EmbeddedChart | None
    version: str
    made: str  # when the page was made
    description: str | None  # the campaign's
    derived: list[str]  # the derived figures any point has
    scaling: bool
    cores: list[Point]  # the points of TPS-against-cores curves, by series then cores
    queries_kit: bool
    campaign_charts: list[EmbeddedChart]
    point_data: dict[int, PointView]
    points_total: int
    plotly_js: Markup | str
    page_js: Markup
    charts_total: int
    served: Served | None
    open_points: int
    effect: float
    equivalence: float
    methods: str
    plan_facts: list[tuple[str, str]]
    storage: list[StorageView]
    paced: list[PacedPoint]  # kit = "tpcc" with pacing: NOPM against its bound, p90 by type
    env_facts: list[tuple[str, str]]
    campaign_json: str
    verdict_text: dict[str, str]
    verdict_class: dict[str, str]
    num: Callable[..., str]  # a number as the page writes it ("–" for None)
    spread: Callable[[Point], str]
    summary_cells: Callable[[Point], dict[str, str]]
    telemetry_lines: Callable[[Point], list[str]]
    when: Callable[[float | None], str]
    script_rows: Callable[[Point], list[ScriptRow]]
    statement_rows: Callable[[Point], list[tuple[ScriptRow, list[StatementReport]]]]
    failure_lines: Callable[[Point], list[str]]
    version_of: Callable[[Point], str]
