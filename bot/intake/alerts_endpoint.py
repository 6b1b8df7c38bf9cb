"""``POST /alerts``: systems hand socbot an alert as JSON.

::

    curl -X POST http://socbot:3000/alerts?source=guardduty \\
      -H "Authorization: Bearer $SOCBOT_WEBHOOK_TOKEN" \\
      -H "Content-Type: application/json" --data @finding.json

* Disabled (503 with the reason) until ``SOCBOT_WEBHOOK_TOKEN`` and
  ``slack.webhook_channel`` are set.
* ``Authorization: Bearer <token>`` compared in constant time; missing or wrong →
  401. Body over ``slack.max_alert_bytes`` → 413; anything but one UTF-8 JSON
  object (nested at most ``alerts.json_input.MAX_DEPTH`` levels, no duplicate keys,
  no NaN or absurd numbers: ``alerts.json_input``) → 400 with the reason; a
  ``source`` hint that is not a plain word → 400. Nothing is stored for a
  rejected request, and its body is never logged.
* Accepted: the alert is parsed and stored, the answer is 202
  ``{"alert_id": "..."}`` at once; the alert card is posted to the webhook
  channel and the investigation runs in its thread in the background.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from alerts.json_input import BadJson, loads_object
from alerts.parse import Alert
from config.settings import SlackSettings

log = logging.getLogger(__name__)

Accept = Callable[[dict[str, Any], str | None], Awaitable[Alert]]
Dispatch = Callable[[Alert], Awaitable[None]]
_SOURCE = re.compile(r"[a-z][a-z0-9_-]{0,31}")  # fullmatch: "$" would pass "scc\n"


def _problem(status: int, reason: str, **headers: str) -> web.Response:
    return web.json_response({"error": reason}, status=status, headers=headers or None)


class AlertWebhook:
    """The aiohttp handler for ``POST /alerts``.

    ``accept(data, source_hint)`` parses and stores the alert (raising ``ValueError``
    for data no parser can use); ``dispatch(alert)`` posts the card and starts the
    investigation — it runs after the response is sent.
    """

    def __init__(self, settings: SlackSettings, accept: Accept, dispatch: Dispatch) -> None:
        self.settings = settings
        self.accept = accept
        self.dispatch = dispatch
        self._background: set[asyncio.Task[None]] = set()

    def disabled_reason(self) -> str | None:
        return disabled_reason(self.settings)

    def authorized(self, request: web.Request) -> bool:
        assert self.settings.webhook_token is not None
        expected = self.settings.webhook_token.get_secret_value().encode()
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            token = ""
        return hmac.compare_digest(token.strip().encode(), expected)

    async def handle(self, request: web.Request) -> web.Response:
        reason = self.disabled_reason()
        if reason is not None:
            return _problem(503, reason)
        if not self.authorized(request):
            return _problem(401, "missing or wrong bearer token", **{"WWW-Authenticate": "Bearer"})
        source = request.query.get("source")
        if source is not None and not _SOURCE.fullmatch(source.lower()):
            return _problem(400, "source must be a short word such as guardduty, scc or generic")
        limit = self.settings.max_alert_bytes
        if request.content_length is not None and request.content_length > limit:
            return _problem(413, f"alert body is larger than {limit} bytes")
        try:  # read() may return only the first piece of a body sent in several
            body = await request.content.readexactly(limit + 1)
        except asyncio.IncompleteReadError as ended:
            body = ended.partial
        if len(body) > limit:
            return _problem(413, f"alert body is larger than {limit} bytes")
        try:
            data = loads_object(body)
        except BadJson as error:
            log.info("alert refused: %s", error)
            return _problem(400, str(error))
        try:
            alert = await self.accept(data, source.lower() if source else None)
        except ValueError as error:
            return _problem(400, f"alert not understood: {error}")
        except RecursionError:  # a backstop: nesting is bounded before parsing
            return _problem(400, "alert not understood: nested too deeply")
        log.info("alert %s accepted from webhook (source %s)", alert.id, alert.source)
        self.dispatch_later(alert)
        return web.json_response({"alert_id": alert.id}, status=202)

    def dispatch_later(self, alert: Alert) -> None:
        """``dispatch(alert)`` in the background (``drain`` waits for it)."""
        task = asyncio.create_task(self._dispatch(alert), name=f"alert {alert.id}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain(self) -> None:
        """Wait for accepted alerts to be handed over (tests, shutdown)."""
        while self._background:
            await asyncio.wait(list(self._background))

    async def _dispatch(self, alert: Alert) -> None:
        try:
            await self.dispatch(alert)
        except Exception:  # fail open: the alert is stored; log, keep serving
            log.exception("could not post or start alert %s", alert.id)


def disabled_reason(settings: SlackSettings) -> str | None:
    """Why ``POST /alerts`` is off, or ``None`` when it is on."""
    if settings.webhook_token is None or not settings.webhook_token.get_secret_value():
        return "the alert webhook is disabled: set SOCBOT_WEBHOOK_TOKEN to enable it"
    if not settings.webhook_channel:
        return "the alert webhook is disabled: set slack.webhook_channel to enable it"
    return None
