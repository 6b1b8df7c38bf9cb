"""One aiohttp server: ``POST /slack/events`` (HTTP mode), ``POST /alerts``, ``GET /healthz``.

In HTTP mode bolt verifies the signature (bad or stale → 401) and acks before any
listener work runs (``process_before_response=False``). In Socket Mode the same
server runs without ``/slack/events``: events arrive over the socket.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp

from bot.webhook import AlertWebhook

log = logging.getLogger(__name__)

Health = Callable[[], dict[str, Any]]
SLACK_BODY_LIMIT = 2 * 1024 * 1024


def build_web_app(
    *, bolt: AsyncApp | None, webhook: AlertWebhook, health: Health
) -> web.Application:
    """The aiohttp application; ``bolt=None`` leaves out ``/slack/events`` (Socket Mode)."""
    limit = max(SLACK_BODY_LIMIT, webhook.settings.max_alert_bytes + 1024)
    app = web.Application(client_max_size=limit)

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True, **health()})

    app.router.add_get("/healthz", healthz)
    app.router.add_post("/alerts", webhook.handle)
    if bolt is not None:
        slack_app = bolt

        async def slack_events(request: web.Request) -> web.Response:
            bolt_request = await to_bolt_request(request)
            bolt_response = await slack_app.async_dispatch(bolt_request)
            return await to_aiohttp_response(bolt_response)

        app.router.add_post("/slack/events", slack_events)
    return app


async def start_site(app: web.Application, host: str, port: int) -> web.AppRunner:
    """Serve ``app`` on ``host:port``; the caller cleans the runner up."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    log.info("listening on http://%s:%d", host, port)
    return runner
