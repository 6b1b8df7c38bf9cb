"""Model usage and its cost over the last days, by each dimension (admins only)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from aiohttp import web

from bot.web.pages.site import VIEWER, Web
from store.investigations.usage import DIMENSIONS, UsageStore, summarise

USAGE_DAYS = 30


class UsagePage:
    def __init__(self, pages: Web) -> None:
        self.pages = pages
        self.usage = UsageStore(pages.db)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/web/usage", self.usage_page)

    async def usage_page(self, request: web.Request) -> web.Response:
        viewer = request[VIEWER]
        if not self.pages.access.is_admin(viewer):
            raise web.HTTPForbidden(text="Usage is for admins.")
        rows = await self.usage.rows(datetime.now(UTC) - timedelta(days=USAGE_DAYS))
        tables = {by: summarise(rows, by) for by in DIMENSIONS}
        return await self.pages.show(request, "usage.html", tables=tables, days=USAGE_DAYS)
