"""The pages as users reach them: the app on a private loopback port behind the real
acknowledging front (``bot.transport.ack_front``) on the public one, as ``socbot serve
--mode http`` serves them, with Sign in with Slack against the fakes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from aiohttp import web

from bench.bench_slack import free_port
from bot.transport.ack_front import AckFront
from bot.transport.server import start_site
from bot.web.guard import create_web, install
from bot.web.pages.site import Web
from config.settings import Settings
from store.db.engine import Database
from tests.fakes.slack_api import FakeSlackAPI
from tests.fakes.slack_openid import FakeSlackOpenID

ADMIN = "U0ADMIN1"
APPROVER = "U0APPRV1"


@dataclass
class Site:
    url: str
    pages: Web
    api: FakeSlackAPI
    openid: FakeSlackOpenID


def settings_for(url: str, authorize_url: str, api_url: str, **web: object) -> Settings:
    return Settings(
        slack={"bot_token": "xoxb-test", "api_url": api_url, "admin_users": [ADMIN]},
        learning={"approvers": [APPROVER]},
        web={
            "base_url": url,
            "client_id": "1234.5678",
            "client_secret": "client-secret-for-tests",
            "session_secret": "s" * 40,
            "authorize_url": authorize_url,
            **web,
        },
    )


@asynccontextmanager
async def signed_in_site(
    db: Database, *, local: bool = False, **web_settings: object
) -> AsyncIterator[Site]:
    """The pages behind the front on 127.0.0.1 (free ports), with the fake Slack and
    OpenID provider; ``Site.url`` is the front's."""
    from slack_sdk.web.async_client import AsyncWebClient

    async with FakeSlackAPI() as api, FakeSlackOpenID(api) as openid:
        private = free_port()  # the app's port first: the front hands requests to it
        front = AckFront(
            signing_secret="not-used-by-pages",
            backend=f"http://127.0.0.1:{private}",
            body_limit=1024 * 1024,
        )
        port = await asyncio.to_thread(front.start, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{port}"  # the public address: the redirect URI names it
        try:
            settings = settings_for(url, openid.authorize_url, api.base_url, **web_settings)
            client = AsyncWebClient(token="xoxb-test", base_url=api.base_url)
            pages = create_web(settings, db, client, local=local)
            app = web.Application()
            install(app, pages)
            served = await start_site(app, "127.0.0.1", private)
            try:
                yield Site(url, pages, api, openid)
            finally:
                await served.cleanup()
        finally:
            await asyncio.to_thread(front.stop)
