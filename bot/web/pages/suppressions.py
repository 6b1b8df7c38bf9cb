"""The suppressions made from Slack (``store.triage.suppressions``): every one with who asked,
who decided and when, why, its expiry and how often it matched; an approver lifts an
active one here as in Slack or with ``socbot policy lift``.

Admins and approvers see the page; only approvers (``learning.approvers``) lift, the
same people Slack lets decide. The form carries the session's CSRF token (the guard
checks it). A lifted suppression stops matching when the policy next reads them
(``policy.reload_s``), as after ``socbot policy lift``.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from aiohttp import web

from bot.web.auth.session import Viewer
from bot.web.auth.signin import redirect
from bot.web.pages.site import VIEWER, Web
from core.ids import row_id
from store.schema import SuppressionStatus
from store.triage.alerts import AlertStore
from store.triage.policy import PolicyStore
from store.triage.suppressions import Suppression, SuppressionStore

log = logging.getLogger(__name__)


def state(suppression: Suppression, now: datetime) -> str:
    """``active`` for an approved one not yet expired; ``expired``; else its status."""
    if suppression.status == SuppressionStatus.APPROVED:
        return "active" if suppression.expires_at > now else "expired"
    return suppression.status


class SuppressionPages:
    def __init__(self, pages: Web) -> None:
        self.pages = pages
        self.suppressions = SuppressionStore(pages.db)
        self.policy = PolicyStore(pages.db)
        self.alerts = AlertStore(pages.db)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/web/suppressions", self.listing)
        app.router.add_post("/web/suppressions/{id}/lift", self.lift)

    def _approver(self, viewer: Viewer) -> bool:
        return viewer.local or viewer.user in self.pages.settings.learning.approvers

    async def listing(self, request: web.Request) -> web.Response:
        viewer = request[VIEWER]
        if not (self.pages.access.is_admin(viewer) or self._approver(viewer)):
            raise web.HTTPForbidden(text="Suppressions are for admins and approvers.")
        now = datetime.now(UTC)
        rows = [(s, state(s, now)) for s in await self.suppressions.all()]
        return await self.pages.show(
            request,
            "suppressions.html",
            active=[(s, st) for s, st in rows if st == "active"],
            others=[(s, st) for s, st in rows if st != "active"],
            hits=await self.policy.rule_hits(),
            may_lift=self._approver(viewer),
            investigations=await self._investigations([s for s, _ in rows]),
        )

    async def _investigations(self, suppressions: list[Suppression]) -> dict[str, str]:
        """The investigation of each alert a suppression was asked for from."""
        out: dict[str, str] = {}
        for alert_id in {s.alert_id for s in suppressions if s.alert_id}:
            found = await self.alerts.get(alert_id)
            if found is not None and found.investigation_id:
                out[alert_id] = found.investigation_id
        return out

    async def lift(self, request: web.Request) -> web.Response:
        viewer = request[VIEWER]
        if not self._approver(viewer):
            raise web.HTTPForbidden(text="Only the approvers can lift a suppression.")
        number = request.match_info["id"]
        rule = row_id(number)
        if rule is None or not await self.suppressions.lift(rule, by=viewer.user):
            raise web.HTTPConflict(text="That suppression is not active.")
        log.info("suppression %s lifted on the web by %s", number, viewer.user)
        return redirect("/web/suppressions")
