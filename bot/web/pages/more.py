"""The other pages: one alert, the playbook (with Approve/Reject), usage, sign-in.

An alert is visible to the members of the channel it was posted in (admins: all;
an alert never posted to Slack: admins only). The playbook is for admins and the
approvers (``learning.approvers``); only approvers decide on proposals, as in Slack.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from aiohttp import web

from bot.web.auth.session import SESSION_COOKIE, Viewer
from bot.web.auth.signin import redirect, safe_next
from bot.web.pages.site import VIEWER, Web
from store.investigations.usage import DIMENSIONS, UsageStore, summarise
from store.playbook.bullets import PlaybookError, PlaybookStore
from store.triage.alerts import AlertStore

RAW_CHARS = 200_000
USAGE_DAYS = 30


class MorePages:
    def __init__(self, pages: Web) -> None:
        self.pages = pages
        self.alerts = AlertStore(pages.db)
        self.playbook = PlaybookStore(pages.db)
        self.usage = UsageStore(pages.db)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/web/signin", self.signin)
        app.router.add_post("/web/signout", self.signout)
        app.router.add_get("/web/alerts/{id}", self.alert)
        app.router.add_get("/web/playbook", self.playbook_page)
        app.router.add_post("/web/playbook/{id}/decide", self.decide)
        app.router.add_get("/web/usage", self.usage_page)

    async def signin(self, request: web.Request) -> web.Response:
        return self.pages.render(request, "signin.html", next=safe_next(request.query.get("next")))

    async def signout(self, _request: web.Request) -> web.Response:
        response = redirect("/web/signin")
        response.del_cookie(SESSION_COOKIE, path="/")
        return response

    async def alert(self, request: web.Request) -> web.Response:
        viewer = request[VIEWER]
        found = await self.alerts.get(request.match_info["id"])
        if found is None or not await self.pages.access.may_see_channel(
            viewer, found.slack_channel
        ):
            raise web.HTTPNotFound(text="No such alert.")
        try:
            parsed = found.to_alert()
            entities, fmt = parsed.entities, parsed.format
        except ValueError:  # a payload no format reads any more: shown raw
            entities, fmt = [], None
        raw = json.dumps(found.raw, indent=2, ensure_ascii=False)
        return self.pages.render(
            request,
            "alert.html",
            alert=found,
            entities=entities,
            format=fmt,
            raw=raw[:RAW_CHARS],
            raw_cut=len(raw) > RAW_CHARS,
        )

    def _approver(self, viewer: Viewer) -> bool:
        return viewer.local or viewer.user in self.pages.settings.learning.approvers

    async def playbook_page(self, request: web.Request) -> web.Response:
        viewer = request[VIEWER]
        if not (self.pages.access.is_admin(viewer) or self._approver(viewer)):
            raise web.HTTPForbidden(text="The playbook is for admins and approvers.")
        bullets = await self.playbook.bullets()
        return self.pages.render(
            request,
            "playbook.html",
            active=[b for b in bullets if b.status == "active"],
            proposals=[b for b in bullets if b.status == "proposed"],
            may_decide=self._approver(viewer),
        )

    async def decide(self, request: web.Request) -> web.Response:
        viewer = request[VIEWER]
        if not self._approver(viewer):
            raise web.HTTPForbidden(text="Only the playbook approvers can decide on proposals.")
        form = await request.post()
        decision, bullet_id = str(form.get("decision")), request.match_info["id"]
        try:
            if decision == "approve":
                await self.playbook.approve(bullet_id, viewer.user)
            elif decision == "reject":
                await self.playbook.reject(bullet_id, viewer.user, "rejected on the web page")
            else:
                raise web.HTTPBadRequest(text="Approve or reject.")
        except PlaybookError:
            raise web.HTTPConflict(text="That proposal was already decided.") from None
        return redirect("/web/playbook")

    async def usage_page(self, request: web.Request) -> web.Response:
        viewer = request[VIEWER]
        if not self.pages.access.is_admin(viewer):
            raise web.HTTPForbidden(text="Usage is for admins.")
        rows = await self.usage.rows(datetime.now(UTC) - timedelta(days=USAGE_DAYS))
        tables = {by: summarise(rows, by) for by in DIMENSIONS}
        return self.pages.render(request, "usage.html", tables=tables, days=USAGE_DAYS)
