"""The investigation pages: the list, one investigation, and its live updates.

Every handler asks ``Access`` before reading data: an investigation someone may not
see answers 404, the same as one that does not exist, so ids reveal nothing. While a
run is going, its page listens to ``/web/api/investigations/{id}/events`` (server-sent
events: status and how many trace events, ``bot.web.pages.live``) and fetches the page body
again on each.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from alerts.model import normalize_severity
from bot.web.pages.drawn import Drawn
from bot.web.pages.live import Live
from bot.web.pages.site import HEADERS, VIEWER, Web
from bot.web.view.listing import list_row
from bot.web.view.results import shown, table_html, table_of
from core.ids import row_id
from store.cases import records
from store.investigations.browse import ORDERS, BrowseStore, Filters, Order, Page
from store.investigations.runs import InvestigationStore
from store.playbook.bullets import PlaybookStore
from store.playbook.feedback import FeedbackStore
from store.triage.suppressions import SuppressionStore

FILTERS = ("verdict", "severity", "source", "channel", "since", "until", "q", "runs", "order")
RUNS = {"evals": True, "all": None}  # which runs the list shows; default: no eval runs
PAGE_SIZE = 50
BULLETS = 40  # playbook bullets whose text an investigation page shows


def _day(value: str | None, *, end: bool = False) -> datetime | None:
    try:
        day = datetime.strptime(value or "", "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None
    return day + timedelta(days=1) if end else day


def filters_of(query: Any) -> Filters:
    def text(key: str) -> str | None:
        value = str(query.get(key) or "").strip()
        return value[:200] or None

    return Filters(
        verdict=text("verdict"),
        severity=normalize_severity(text("severity")) or text("severity"),  # "informational"
        source=text("source"),
        channel=text("channel"),
        since=_day(query.get("since")),
        until=_day(query.get("until"), end=True),
        text=text("q"),
        evals=RUNS.get(str(query.get("runs") or ""), False),
    )


def order_of(query: Any) -> Order:
    wanted = str(query.get("order") or "")
    return next((o for o in ORDERS if o == wanted), "newest")


class InvestigationPages:
    def __init__(self, pages: Web, live: Live) -> None:
        self.pages = pages
        self.live = live
        self.browse = BrowseStore(pages.db)
        self.investigations = InvestigationStore(pages.db)
        self.feedback = FeedbackStore(pages.db)
        self.bullets = PlaybookStore(pages.db)
        self.suppressions = SuppressionStore(pages.db)
        self.drawn = Drawn(self.investigations, pages.templates)

    async def home(self, _request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": "/web/investigations"})

    async def page(self, request: web.Request) -> Page:
        viewer = request[VIEWER]
        visibility = await self.pages.access.visibility(viewer)
        return await self.browse.page(
            filters_of(request.query),
            visibility,
            cursor=request.query.get("after") or None,
            size=PAGE_SIZE,
            order=order_of(request.query),
        )

    async def listing(self, request: web.Request) -> web.Response:
        found = await self.page(request)
        values = {k: request.query.get(k, "")[:200] for k in FILTERS}
        more = {k: v for k, v in values.items() if v}
        now = datetime.now(UTC)
        return await self.pages.show(
            request,
            "list.html",
            page=found,
            rows=[list_row(r, now) for r in found.rows],
            order=order_of(request.query),
            filters=values,
            more=more,
            first=not request.query.get("after"),
            sources=await self.browse.sources(),
        )

    async def _visible(self, request: web.Request) -> dict[str, Any]:
        """The investigation's row, or 404 when it is absent or not the viewer's."""
        investigation_id = request.match_info["id"]
        found = await self.investigations.get(investigation_id)
        viewer = request[VIEWER]
        if found is None or not await self.pages.access.may_see(viewer, found.conversation_id):
            raise web.HTTPNotFound(text="No such investigation.")
        return {
            "id": found.id,
            "conversation_id": found.conversation_id,
            "kind": found.kind,
            "status": found.status,
            "mode": found.mode,
            "error": found.error,
            "objective": found.objective,
            "input": found.input,
            "record": found.record,
            "usage": found.usage,
            "created_at": found.created_at,
            "finished_at": found.finished_at,
        }

    async def _view(self, request: web.Request) -> dict[str, Any]:
        row = await self._visible(request)
        votes = [
            {"user": v.user, "value": v.value, "verdict": v.verdict, "comment": v.comment}
            for v in await self.feedback.votes(row["id"])
        ]
        alerts = await self.browse.alerts_of(row["id"])
        view = await self.drawn.view(row, votes, alerts)
        wanted = {b for u in view["used"] for b in u.get("bullet_ids") or []}
        wanted |= {str(b.get("id")) for b in (view["playbook"] or {}).get("bullets") or []}
        for bullet_id in sorted(wanted)[:BULLETS]:
            found = await self.bullets.get(bullet_id)
            if found is not None:
                view["bullets"][bullet_id] = found.content
        view["suppressions"] = await self.suppressions.of_alerts([a["id"] for a in alerts])
        view["case"] = await records.of_run(self.pages.db, row["id"])  # case_header.html
        return view

    async def investigation(self, request: web.Request) -> web.Response:
        return await self.pages.show(request, "investigation.html", v=await self._view(request))

    async def body(self, request: web.Request) -> web.Response:
        return await self.pages.show(
            request, "investigation_body.html", v=await self._view(request)
        )

    async def tool_result(self, request: web.Request) -> web.Response:
        """One tool call's whole stored result, as plain text (never HTML)."""
        row = await self._visible(request)
        seq = request.match_info["seq"]
        number = row_id(seq)
        found = await self.browse.tool_result(row["id"], number) if number is not None else None
        if found is None:
            raise web.HTTPNotFound(text="No such tool call.")
        table = table_of(found) if request.query.get("as") == "table" else None
        if table is not None:  # every row, as the page draws a table (escaped)
            anchor = re.sub(r"[^A-Za-z0-9_-]", "-", request.query.get("anchor", "call")[:80])
            drawn = table_html(table, anchor, shown(table, limit=table.total))
            return web.Response(text=str(drawn), content_type="text/html")
        return web.Response(text=found, content_type="text/plain", charset="utf-8")

    async def events(self, request: web.Request) -> web.StreamResponse:
        row = await self._visible(request)
        return await self.live.stream(request, lambda: self.browse.status(row["id"]), HEADERS)

    async def api_list(self, request: web.Request) -> web.Response:
        from store.investigations.browse import listed_as_dict

        found = await self.page(request)
        return web.json_response(
            {"items": [listed_as_dict(r) for r in found.rows], "next": found.next_cursor}
        )
