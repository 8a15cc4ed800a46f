"""Pages of ``pglab serve`` drawn from the templates the report shares (``report.environment``
over this package's ``templates/``): the same style, escaping and chart code."""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2

from pglab import __version__, report

TEMPLATES = Path(__file__).parent / "templates"


def environment() -> jinja2.Environment:
    return report.environment(TEMPLATES)


def served(
    root: str, campaign: str = "", outline: bool = False, run: int | None = None
) -> report.Served:
    """How the report's page is served under ``root``: the charts of ``campaign`` (or of
    ``run``'s page); an ``outline``'s page fetches the rest of ``campaign``'s report from
    ``/parts`` and ``/points``."""
    name = quote(campaign, safe="")
    return report.Served(
        root=root,
        plotly_url=f"{root}static/plotly.js",
        chart_url=f"{root}runs/{run}/charts/{{n}}" if run else f"{root}charts/{{n}}/{name}",
        parts_url=f"{root}parts/{name}" if outline else "",
        point_url=f"{root}points/{{n}}/{name}" if outline else "",
    )


def page(template: str, root: str, **context: Any) -> str:
    """The ``template`` with ``context``, the navigation and the helpers every page has."""
    return (
        environment()
        .get_template(template)
        .render(served=served(root), version=__version__, when=_when, num=_num, ago=_ago, **context)
    )


@functools.cache
def plotly_js() -> bytes:
    """plotly.js, as the report inlines it: served once, cached by the browser."""
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs()).encode()


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M") if ts else "–"


def _num(v: Any, digits: int = 0) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def _ago(ts: float | None, now: float) -> str:
    if not ts:
        return "–"
    s = max(now - ts, 0)
    return f"{s:.0f} s ago" if s < 120 else f"{s / 60:.0f} min ago" if s < 7200 else _when(ts)


@functools.cache
def nothing_png() -> bytes:
    """The image of a campaign chart its runs give nothing to draw (no successful run, no
    latency log)."""
    import io

    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 1))
    fig.text(0.5, 0.5, "nothing to draw: the runs recorded nothing this chart shows", ha="center")
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=80)
    return out.getvalue()
