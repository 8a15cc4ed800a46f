"""The Starlette application of ``pglab serve``: its routes, each a read of the store (opened
read-only per request), and the pages for what is not there (404) or not right (400)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from pglab import report
from pglab.errors import LabError
from pglab.jsonish import JsonObject
from pglab.report import charts
from pglab.report.model import Report
from pglab.serve import comparing, history, rendering, views
from pglab.serve.security import LOOPBACK_NAMES, Guard
from pglab.stats import significance
from pglab.store import Store, open_store

KEPT_REPORTS = 16  # reports kept for their charts, parts and next visit (outlines too)


@dataclass
class Lab:
    """What every request reads: the store's URL (opened per request), the lab home (live
    states), the reports gathered lately (by campaign and what its runs are now)."""

    store_url: str
    home: Path
    root: str = "/"
    reports: OrderedDict[tuple[Any, ...], Report] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)  # the reports kept
    drawing: threading.Lock = field(default_factory=threading.Lock)  # matplotlib's figures
    gathering: dict[tuple[Any, ...], threading.Lock] = field(default_factory=dict)  # by key

    @contextmanager
    def store(self) -> Iterator[Store]:
        with open_store(self.store_url, read_only=True) as store:
            yield store

    def report(self, store: Store, ident: str | int, outline: bool = False) -> Report:
        """The report of campaign ``ident`` (a name, even all digits) or of run ``ident`` (an
        int), 404 when there is none; ``outline``: without what the runs' series give
        (``report.gather``). Gathered again only when the campaign's runs have changed, and
        once for requests that ask for it at the same time."""
        key = self._key(store, ident, outline)
        with self.lock:
            gate = self.gathering.setdefault(key, threading.Lock())
        with gate:
            found = self._kept(key)
            if found is not None:
                return found
            try:
                rep = report.gather(store, ident, home=self.home, outline=outline)
            except LabError as exc:
                raise HTTPException(404, exc.message) from None
            finally:
                with self.lock:
                    self.gathering.pop(key, None)
            with self.lock:
                self.reports[key] = rep
                while len(self.reports) > KEPT_REPORTS:
                    self.reports.popitem(last=False)
        return rep

    def point(self, store: Store, name: str, n: int) -> Report:
        """A report with campaign ``name``'s point ``n`` whole: the whole report when it was
        gathered, else the outline with that point read (``report.point_of``)."""
        whole = self._kept(self._key(store, name, False))
        if whole is not None:
            return whole
        outline = self.report(store, name, outline=True)
        if not 1 <= n <= len(outline.points):
            raise HTTPException(404, f"campaign {name!r} has no point {n}")
        return report.point_of(store, outline, n, self.home)

    def _key(self, store: Store, ident: str | int, outline: bool) -> tuple[Any, ...]:
        if not isinstance(ident, str):
            return (ident, outline)
        camp = store.get_campaign(ident)
        if camp is None or camp["name"] != ident:  # a name, never a campaign's id
            raise HTTPException(404, f"no campaign named {ident!r} in the store")
        return (ident, outline, camp["runs_ok"], camp["runs_failed"], camp["last_run_at"])

    def _kept(self, key: tuple[Any, ...]) -> Report | None:
        with self.lock:
            found = self.reports.get(key)
            if found is not None:
                self.reports.move_to_end(key)
            return found


def _as_cli_json(found: JsonObject) -> Response:
    """JSON encoded as the command line encodes it (``json.dumps``: an unbounded interval's
    ``Infinity`` kept, which Starlette's ``JSONResponse`` refuses)."""
    return Response(
        json.dumps(found, indent=2, default=str),
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


@asynccontextmanager
async def _warming(app: Starlette) -> AsyncIterator[None]:
    """Import and compile what a campaign's first page needs (scipy.special for its verdicts'
    t tails; the page's template) beside the server starting, not in the first visit's."""

    def warm() -> None:
        significance.t.ppf(0.975, 2)
        rendering.environment().get_template("page.html.j2")

    threading.Thread(target=warm, name="pglab-serve-warm", daemon=True).start()
    yield


def make_app(
    store_url: str, home: Path, token: str | None = None, host: str = "127.0.0.1"
) -> Starlette:
    """The application over the store at ``store_url`` (opened read-only by each request) and
    the lab ``home`` (its live states); with ``token``, every request must carry it; without,
    only requests to a loopback name or the ``host`` it listens on are answered
    (``security.LOOPBACK_NAMES``: a web page elsewhere cannot reach it by pointing a name of
    its own at 127.0.0.1)."""
    names = [*LOOPBACK_NAMES, f"[{host}]" if ":" in host else host]
    lab = Lab(store_url, home)

    def html(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(rendering.page(template, lab.root, **context), status_code=status)

    def home_page(request: Request) -> Response:
        return RedirectResponse(f"{lab.root}campaigns", status_code=302)

    def campaign_list(request: Request) -> Response:
        try:
            filters = views.Filters.of(dict(request.query_params))
        except LabError as exc:
            return html(request, "error.html.j2", 400, title="bad filter", error=exc)
        with lab.store() as store:
            found = views.campaigns(store, filters)
        return html(request, "campaigns.html.j2", f=filters, **found)

    def campaign_page(request: Request) -> Response:
        """The outline first: what the runs' series give is fetched by the page."""
        name = request.path_params["name"]
        with lab.store() as store:
            rep = lab.report(store, name, outline=True)
        served = rendering.served(lab.root, rep.title, outline=True)
        return HTMLResponse(report.render(rep, [], {}, served=served, env=rendering.environment()))

    def parts(request: Request) -> Response:
        name = request.path_params["name"]
        with lab.store() as store:
            rep = lab.report(store, name)
        found = report.parts(rep, rendering.served(lab.root, name), rendering.environment())
        return JSONResponse(found, headers={"Cache-Control": "no-store"})

    def point(request: Request) -> Response:
        n, name = request.path_params["n"], request.path_params["name"]
        with lab.store() as store:
            rep = lab.point(store, name, n)
        body = report.point_body(rep, n, rendering.served(lab.root, name), rendering.environment())
        if body is None:
            raise HTTPException(404, f"campaign {name!r} has no point {n}")
        return HTMLResponse(body, headers={"Cache-Control": "no-store"})

    def run_page(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        with lab.store() as store:
            rep = lab.report(store, run_id)
        served = rendering.served(lab.root, run=run_id)
        return HTMLResponse(report.render(rep, [], {}, served=served, env=rendering.environment()))

    def chart(request: Request) -> Response:
        """A campaign's chart (``/charts/N/NAME``) or a run's page's (``/runs/ID/charts/N``)."""
        n = request.path_params["n"]
        if not 0 <= n < charts.CAMPAIGN_CHARTS:
            raise HTTPException(404, f"no chart {n}")
        ident = request.path_params.get("run_id") or request.path_params["name"]
        with lab.store() as store:  # only the latency chart needs the runs' series
            rep = lab.report(store, ident, outline=n != charts.LATENCY_CHART)
        with lab.drawing:  # matplotlib's figures are not for two threads at once
            drawn = charts.campaign_chart(rep, n)
        if drawn is None:
            return Response(rendering.nothing_png(), media_type="image/png")
        return Response(
            drawn.png, media_type="image/png", headers={"Cache-Control": "private, max-age=60"}
        )

    def compare_page(request: Request) -> Response:
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        with lab.store() as store:
            found = comparing.page(store, a.strip(), b.strip())
        status = 400 if found.get("error") else 200
        return html(request, "compare.html.j2", status, a=a, b=b, **found)

    def compare_json(request: Request) -> Response:
        """The comparison as ``pglab compare A B --json`` prints it."""
        a, b = request.query_params.get("a", "").strip(), request.query_params.get("b", "").strip()
        try:
            with lab.store() as store:
                found = comparing.compared_json(store, a, b)
        except LabError as exc:
            return JSONResponse({"error": exc.message, "hint": exc.hint}, status_code=400)
        return _as_cli_json(found)

    def points_json(request: Request) -> Response:
        """A campaign's points and their answers, as ``pglab show NAME --json`` has them."""
        with lab.store() as store:
            found = comparing.points_json(store, request.path_params["name"])
        if found is None:
            raise HTTPException(404, f"no campaign {request.path_params['name']!r}")
        return _as_cli_json(found)

    def history_page(request: Request) -> Response:
        name, q = request.path_params["name"], request.query_params
        try:
            with lab.store() as store:
                found = history.page(store, name, q.get("figure"), q.get("point") or None)
        except LabError as exc:
            return html(request, "error.html.j2", 400, title="history", error=exc)
        if found is None:
            raise HTTPException(404, f"no campaign {name!r} (nor {name}@…) has runs in the store")
        return html(request, "history.html.j2", **found)

    def fleet_page(request: Request) -> Response:
        return html(request, "fleet.html.j2", **views.fleet(lab.store_url))

    def live_page(request: Request) -> Response:
        return html(request, "live.html.j2", states=views.running(lab.home))

    def live_json(request: Request) -> Response:
        return JSONResponse(
            {"running": views.running(lab.home)}, headers={"Cache-Control": "no-store"}
        )

    def plotly(request: Request) -> Response:
        return Response(
            rendering.plotly_js(),
            media_type="text/javascript",
            headers={"Cache-Control": "public, max-age=86400"},
        )

    async def not_found(request: Request, exc: Exception) -> Response:
        detail = exc.detail if isinstance(exc, HTTPException) else "not found"
        code = exc.status_code if isinstance(exc, HTTPException) else 404
        return html(
            request,
            "error.html.j2",
            code,
            title=f"{code}",
            error=LabError(
                detail
                if code != 404 or detail != "Not Found"
                else f"nothing at {request.url.path}",
                hint="the campaigns page lists what the store holds",
            ),
        )

    async def failed(request: Request, exc: Exception) -> Response:
        said = exc.message if isinstance(exc, LabError) else type(exc).__name__
        return html(
            request,
            "error.html.j2",
            500,
            title="500",
            error=LabError(
                f"this page failed: {said}", hint="pglab serve's terminal has the details"
            ),
        )

    routes = [
        Route("/", home_page),
        Route("/campaigns", campaign_list),
        Route("/campaigns/{name:path}", campaign_page),
        Route("/runs/{run_id:int}", run_page),
        Route("/runs/{run_id:int}/charts/{n:int}", chart),
        Route("/charts/{n:int}/{name:path}", chart),
        Route("/parts/{name:path}", parts),
        Route("/points/{n:int}/{name:path}", point),
        Route("/compare", compare_page),
        Route("/compare.json", compare_json),
        Route("/points.json/{name:path}", points_json),
        Route("/history/{name:path}", history_page),
        Route("/fleet", fleet_page),
        Route("/live", live_page),
        Route("/live.json", live_json),
        Route("/static/plotly.js", plotly),
    ]
    return Starlette(
        routes=routes,
        lifespan=_warming,
        middleware=[
            Middleware(Guard, token=token),
            *(() if token else (Middleware(TrustedHostMiddleware, allowed_hosts=names),)),
        ],
        exception_handlers={HTTPException: not_found, 404: not_found, 500: failed},
    )
