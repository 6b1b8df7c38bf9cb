"""One alert: its fields, what socbot read from it, and the payload as received.

An alert is visible to the members of the channel it was posted in (admins: all; an alert
never posted to Slack: admins only).
"""

from __future__ import annotations

import json

from aiohttp import web

from bot.web.pages.site import VIEWER, Web
from store.triage.alerts import AlertStore

RAW_CHARS = 200_000


class AlertPage:
    def __init__(self, pages: Web) -> None:
        self.pages = pages
        self.alerts = AlertStore(pages.db)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/web/alerts/{id}", self.alert)

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
        return await self.pages.show(
            request,
            "alert.html",
            alert=found,
            entities=entities,
            format=fmt,
            raw=raw[:RAW_CHARS],
            raw_cut=len(raw) > RAW_CHARS,
        )
