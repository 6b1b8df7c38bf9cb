"""The app's side of ``POST /alerts`` answered by the acknowledging front.

In HTTP mode the front (``bot.transport.alert_door``) checks, stores (``received``)
and answers 202 itself, then ``POST``s ``{"alert_id": ...}`` to ``HANDOVER_PATH`` on the
app's private loopback port with the token both were given at start-up (``TOKEN_HEADER``,
compared in constant time; the front never passes a public request to this path). The app
reads the stored alert and dispatches it as it dispatches its own webhook alerts
(``AlertWebhook.dispatch_later``: policy, triage; ``drain`` at shutdown). An alert no
longer ``received`` was placed already (by a sweep): nothing is done twice.
"""

from __future__ import annotations

import hmac
import logging

from aiohttp import web

from bot.intake.alerts_endpoint import AlertWebhook
from store.schema import AlertStatus
from store.triage.alerts import AlertStore

log = logging.getLogger(__name__)

INTERNAL_PREFIX = "/internal/"  # the app's own routes: the front answers 404 for them
HANDOVER_PATH = INTERNAL_PREFIX + "alerts/accepted"
TOKEN_HEADER = "X-Socbot-Handover"


class AlertHandOver:
    """The aiohttp handler for ``HANDOVER_PATH`` (see the module docstring)."""

    def __init__(self, token: str, alerts: AlertStore, webhook: AlertWebhook) -> None:
        if not token:
            raise ValueError("the hand-over needs a token")
        self.token = token
        self.alerts = alerts
        self.webhook = webhook

    async def handle(self, request: web.Request) -> web.Response:
        sent = request.headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(sent.encode(), self.token.encode()):
            return web.json_response({"error": "not the front"}, status=401)
        try:
            body = await request.json()
            alert_id = body["alert_id"]
        except (ValueError, TypeError, KeyError):
            return web.json_response({"error": 'expected {"alert_id": ...}'}, status=400)
        if not isinstance(alert_id, str):
            return web.json_response({"error": "alert_id must be a string"}, status=400)
        stored = await self.alerts.get(alert_id)
        if stored is None:
            return web.json_response({"error": "no such alert"}, status=404)
        if stored.status != AlertStatus.RECEIVED:
            return web.json_response({"alert_id": alert_id, "placed": True})
        log.info("alert %s handed over by the front", alert_id)
        self.webhook.dispatch_later(stored.to_alert())
        return web.json_response({"alert_id": alert_id}, status=202)
