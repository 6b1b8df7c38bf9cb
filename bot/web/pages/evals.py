"""The eval reports (``socbot eval``): the runs kept under ``web.eval_runs``, and one run's
report: its figures, per category and per scenario, and its baseline comparison.

Admins only. A run is addressed by its folder name, which ``EvalRuns`` checks is a
plain name under the root; every figure and scenario string reaches the page escaped.
"""

from __future__ import annotations

from aiohttp import web

from bot.web.pages.site import VIEWER, Web
from store.eval_reports import EvalRuns


class EvalPages:
    def __init__(self, pages: Web) -> None:
        self.pages = pages
        self.runs = EvalRuns(pages.settings.web.eval_runs)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/web/evals", self.listing)
        app.router.add_get("/web/evals/{name}", self.report)

    def _admin(self, request: web.Request) -> None:
        if not self.pages.access.is_admin(request[VIEWER]):
            raise web.HTTPForbidden(text="Eval reports are for admins.")

    async def listing(self, request: web.Request) -> web.Response:
        self._admin(request)
        return self.pages.render(request, "evals.html", runs=self.runs.listed())

    async def report(self, request: web.Request) -> web.Response:
        self._admin(request)
        name = request.match_info["name"]
        found = self.runs.load(name)
        if found is None:
            raise web.HTTPNotFound(text="No such eval run.")
        return self.pages.render(request, "eval.html", run=name, report=found)
