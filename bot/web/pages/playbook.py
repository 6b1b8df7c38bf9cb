"""The playbook page, with Approve / Reject on proposals.

The page is for admins and the approvers (``learning.approvers``); only approvers decide on
proposals, as in Slack.
"""

from __future__ import annotations

from aiohttp import web

from bot.web.auth.session import Viewer
from bot.web.auth.signin import redirect
from bot.web.pages.site import VIEWER, Web
from store.playbook.bullets import PlaybookError, PlaybookStore


class PlaybookPage:
    def __init__(self, pages: Web) -> None:
        self.pages = pages
        self.playbook = PlaybookStore(pages.db)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/web/playbook", self.playbook_page)
        app.router.add_post("/web/playbook/{id}/decide", self.decide)

    def _approver(self, viewer: Viewer) -> bool:
        return viewer.local or viewer.user in self.pages.settings.learning.approvers

    async def playbook_page(self, request: web.Request) -> web.Response:
        viewer = request[VIEWER]
        if not (self.pages.access.is_admin(viewer) or self._approver(viewer)):
            raise web.HTTPForbidden(text="The playbook is for admins and approvers.")
        bullets = await self.playbook.bullets()
        return await self.pages.show(
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
