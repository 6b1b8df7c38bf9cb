"""Socket Mode: events over a WebSocket socbot opens to Slack (no public URL needed).

The bolt app is the same as in HTTP mode; the socket client acks each envelope
after bolt's ack (listeners never block it). ``/alerts`` and ``/healthz`` are
served on a local port by the same aiohttp server, without ``/slack/events``.
"""

from __future__ import annotations

import asyncio
import logging

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

from bot.lifecycle import SocBot
from bot.transport.server import start_site

log = logging.getLogger(__name__)


async def run_socket_mode(
    bot: SocBot,
    app_token: str,
    *,
    host: str,
    port: int,
    stop: asyncio.Event,
    ping_interval: float = 10.0,
) -> None:
    """Connect to Slack, serve the local endpoints, run until ``stop`` is set."""
    runner = await start_site(bot.web_app(), host, port)  # first: a taken port leaks nothing
    handler = AsyncSocketModeHandler(
        bot.bolt, app_token, web_client=bot.client, ping_interval=ping_interval
    )
    # connect_async retries until Slack accepts the socket (with an app token it rejects:
    # for ever), so a stop (SIGTERM, Ctrl-C) is not left waiting for it.
    connecting = asyncio.ensure_future(handler.connect_async())  # type: ignore[no-untyped-call]
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({connecting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not stopping.done():
            connecting.result()  # raises if connecting failed
            log.info("connected to Slack in Socket Mode")
            await stopping
    finally:
        for task in (connecting, stopping):
            task.cancel()
        await handler.close_async()  # type: ignore[no-untyped-call]
        await runner.cleanup()
