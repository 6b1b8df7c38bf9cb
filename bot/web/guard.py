"""The pages' wiring: one guard in front of every ``/web/`` route, then the handlers.

The guard sets the security headers on every answer under ``/web/`` (a strict
Content-Security-Policy with no inline script or style, ``Referrer-Policy:
same-origin`` (other sites get no referrer; ours keeps the Origin header a form POST
needs), no framing, no sniffing, no caching), resolves who is asking (the
signed session cookie, or the local user of ``socbot web`` without sign-in) and
refuses every state-changing request whose Origin is foreign or whose CSRF token
does not match the session. Everything else under ``/web/`` requires a viewer:
a browser is sent to sign in, an API caller gets 401.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from urllib.parse import quote, urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware
from slack_sdk.web.async_client import AsyncWebClient

from bot.web.auth.access import Access
from bot.web.auth.session import Signer, Viewer
from bot.web.auth.signin import SignIn, redirect
from bot.web.pages.names import Names
from bot.web.pages.site import HEADERS, HERE, VIEWER, Web, templates
from config.settings import Settings
from store.db.engine import Database

PUBLIC = ("/web/signin", "/web/auth/", "/web/static/")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class SignInRequired(Exception):
    """``local=False`` but Sign in with Slack is not configured."""


log = logging.getLogger(__name__)


def create_web(
    settings: Settings, db: Database, client: AsyncWebClient | None, *, local: bool
) -> Web:
    """The pages; ``local``: one user, no sign-in (``socbot web`` on 127.0.0.1)."""
    web_settings = settings.web
    access = Access(client, settings.slack.admin_users, cache_s=web_settings.membership_cache_s)
    names = Names(client)  # one per replica: every page shares its cache
    if local:
        signer = Signer(secrets.token_bytes(32))
        return Web(db, settings, access, signer, None, templates(names), names)
    if not web_settings.sign_in_configured() or client is None or not web_settings.base_url:
        raise SignInRequired(
            "the pages need Sign in with Slack: set web.base_url, web.client_id, "
            "web.client_secret, web.session_secret and the Slack bot token"
        )
    secret = web_settings.session_secret
    signer = Signer(secret.get_secret_value().encode() if secret else b"")
    signin = SignIn(web_settings, signer, client, web_settings.team_id)
    return Web(db, settings, access, signer, signin, templates(names), names)


def _expected_origin(pages: Web, request: web.Request) -> str:
    base = pages.settings.web.base_url
    if base and pages.signin is not None:
        parts = urlsplit(base)
        return f"{parts.scheme}://{parts.netloc}"
    return f"{request.scheme}://{request.host}"


async def _csrf_ok(pages: Web, request: web.Request, viewer: Viewer) -> bool:
    origin = request.headers.get("Origin")
    if origin is not None and origin != _expected_origin(pages, request):
        return False
    token = request.headers.get("X-CSRF-Token")
    if token is None and request.content_type == "application/x-www-form-urlencoded":
        token = str((await request.post()).get("csrf") or "")
    return pages.signer.check_csrf(viewer.sid, token)


def guard(pages: Web) -> Middleware:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path != "/" and not request.path.startswith("/web/"):
            return await handler(request)
        try:
            response = await _guarded(pages, request, handler)
        except web.HTTPException as error:
            # e.g. 404 for an unknown route or an investigation that is not the viewer's
            response = web.Response(status=error.status, text=error.text)
        response.headers.update(HEADERS)
        return response

    return middleware


async def _guarded(pages: Web, request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path.startswith(PUBLIC):
        return await handler(request)
    if pages.signin is not None:
        await pages.signin.workspace()  # known before any session is read (after a restart)
    viewer = pages.viewer(request)
    if viewer is None:
        if request.method == "GET" and not request.path.startswith("/web/api/"):
            return redirect("/web/signin?next=" + quote(request.path_qs, safe="/"))
        return web.Response(status=401, text="Sign in first.")
    request[VIEWER] = viewer
    if request.method not in ("GET", "HEAD", "OPTIONS") and not await _csrf_ok(
        pages, request, viewer
    ):
        return web.Response(status=403, text="Cross-site request refused.")
    return await handler(request)


def install(app: web.Application, pages: Web) -> None:
    """Add the guard and every page's route to ``app``."""
    from bot.web.pages.routes import add_routes  # the pages load with the web only

    app.middlewares.append(guard(pages))
    if pages.signin is not None:
        pages.signin.add_routes(app)
    add_routes(app, pages)
    app.router.add_static("/web/static/", HERE / "static", append_version=True)


def pages_for(settings: Settings, db: Database, client: AsyncWebClient) -> Web | None:
    """The investigation pages behind Sign in with Slack, when it is configured."""
    if not settings.web.sign_in_configured():
        log.info("web pages off: Sign in with Slack is not configured ([web])")
        return None
    return create_web(settings, db, client, local=False)
