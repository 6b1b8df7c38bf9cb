"""Every page's routes, added to the app behind the guard (``bot.web.guard.install``)."""

from __future__ import annotations

from aiohttp import web

from bot.web.pages.account import AccountPages
from bot.web.pages.alert import AlertPage
from bot.web.pages.cases import CasesPage
from bot.web.pages.evals import EvalPages
from bot.web.pages.investigations import InvestigationPages
from bot.web.pages.live import Live
from bot.web.pages.playbook import PlaybookPage
from bot.web.pages.quality import QualityPage
from bot.web.pages.site import Web
from bot.web.pages.suppressions import SuppressionPages
from bot.web.pages.usage import UsagePage


def add_routes(app: web.Application, pages: Web) -> None:
    live = Live()
    pages.db.watch_writes(live.wake)
    app.on_shutdown.append(live.shutdown)
    inv = InvestigationPages(pages, live)
    app.router.add_get("/", inv.home)
    app.router.add_get("/web/investigations", inv.listing)
    app.router.add_get("/web/investigations/{id}", inv.investigation)
    app.router.add_get("/web/investigations/{id}/body", inv.body)
    app.router.add_get("/web/investigations/{id}/calls/{seq}", inv.tool_result)
    app.router.add_get("/web/api/investigations", inv.api_list)
    app.router.add_get("/web/api/investigations/{id}/events", inv.events)
    for page in (
        AccountPages,
        AlertPage,
        CasesPage,
        PlaybookPage,
        UsagePage,
        QualityPage,
        EvalPages,
        SuppressionPages,
    ):
        page(pages).add_routes(app)
