"""The cases list: the cases the viewer may see (the investigation list's rule,
``Access.visibility``), in a view — all open, mine, unowned, resolved — most severe first
(then the oldest first), or by age; keyset pages (``store.cases.browse``). Each row links
to its investigation's page, which shows the case's header."""

from __future__ import annotations

from typing import Any, TypeVar

from aiohttp import web

from bot.web.pages.site import VIEWER, Web
from bot.web.view.cases import case_row
from store.cases import browse

PAGE_SIZE = 50
T = TypeVar("T", bound=str)
VIEW_LABELS = {"open": "All open", "mine": "Mine", "unowned": "Unowned", "resolved": "Resolved"}


def chosen(query: Any, key: str, allowed: tuple[T, ...]) -> T:
    """The query's ``key`` when it is one of ``allowed``, else the first of them."""
    wanted = str(query.get(key) or "")
    return next((a for a in allowed if a == wanted), allowed[0])


class CasesPage:
    def __init__(self, pages: Web) -> None:
        self.pages = pages

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/web/cases", self.cases_page)

    async def cases_page(self, request: web.Request) -> web.Response:
        viewer = request[VIEWER]
        view = chosen(request.query, "view", browse.VIEWS)
        order = chosen(request.query, "order", browse.ORDERS)
        found = await browse.page(
            self.pages.db,
            await self.pages.access.visibility(viewer),
            me=viewer.user,
            view=view,
            order=order,
            cursor=request.query.get("after") or None,
            size=PAGE_SIZE,
        )
        return await self.pages.show(
            request,
            "cases.html",
            rows=[case_row(r) for r in found.rows],
            next_cursor=found.next_cursor,
            first=not request.query.get("after"),
            view=view,
            order=order,
            views=VIEW_LABELS,
        )
